package transform

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// regexRouter is RegexRouter: a topic matching regex (whole name) is
// renamed to replacement, where $1.. are the groups.
type regexRouter struct {
	re          *regexp.Regexp
	replacement string
}

var javaGroupRef = regexp.MustCompile(`\$(\d+)`)

func newRegexRouter(_ bool, p props) (transformer, error) {
	pat := p.get("regex")
	re, err := regexp.Compile(`^(?:` + pat + `)$`)
	if pat == "" || err != nil {
		p.fail("regex", fmt.Sprintf("must be a regular expression (RE2 syntax): %q", pat))
	}
	if _, ok := p.m["replacement"]; !ok {
		p.fail("replacement", "is required")
	}
	// Java's $1 is Go's ${1} (Go would read $1x as a group named "1x").
	return &regexRouter{re: re, replacement: javaGroupRef.ReplaceAllString(p.get("replacement"), "$${$1}")}, p.err()
}

func (t *regexRouter) apply(r *Record) (bool, error) {
	if m := t.re.FindStringSubmatchIndex(r.Topic); m != nil {
		r.Topic = string(t.re.ExpandString(nil, t.replacement, r.Topic, m))
	}
	return true, nil
}

// timestampRouter is TimestampRouter: the topic becomes topic.format with
// ${topic} and ${timestamp} (the record's, formatted in UTC) replaced.
type timestampRouter struct{ format, layout string }

func newTimestampRouter(_ bool, p props) (transformer, error) {
	t := &timestampRouter{format: p.getDefault("topic.format", "${topic}-${timestamp}")}
	layout, err := javaLayout(p.getDefault("timestamp.format", "yyyyMMdd"))
	if err != nil {
		p.fail("timestamp.format", err.Error())
	}
	t.layout = layout
	return t, p.err()
}

var errNoTimestamp = errors.New("the record has no timestamp")

func (t *timestampRouter) apply(r *Record) (bool, error) {
	if r.Timestamp.IsZero() {
		return false, errNoTimestamp
	}
	ts := r.Timestamp.UTC().Format(t.layout)
	r.Topic = strings.ReplaceAll(strings.ReplaceAll(t.format, "${topic}", r.Topic), "${timestamp}", ts)
	return true, nil
}
