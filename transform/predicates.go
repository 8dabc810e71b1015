package transform

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
)

// topicNameMatches is TopicNameMatches: the whole topic name matches
// pattern (Java's Matcher.matches, so anchored).
type topicNameMatches struct{ re *regexp.Regexp }

func newTopicNameMatches(p props) (predicate, error) {
	pat := p.get("pattern")
	re, err := regexp.Compile(`^(?:` + pat + `)$`)
	if pat == "" || err != nil {
		p.fail("pattern", fmt.Sprintf("must be a regular expression (RE2 syntax): %q", pat))
	}
	return &topicNameMatches{re: re}, p.err()
}

func (t *topicNameMatches) test(r *Record) bool { return t.re.MatchString(r.Topic) }

// hasHeaderKey is HasHeaderKey: the record has at least one header name.
type hasHeaderKey struct{ name string }

func newHasHeaderKey(p props) (predicate, error) {
	t := &hasHeaderKey{name: p.get("name")}
	if t.name == "" {
		p.fail("name", "is required")
	}
	return t, p.err()
}

func (t *hasHeaderKey) test(r *Record) bool {
	return slices.ContainsFunc(r.Headers, func(h kgo.RecordHeader) bool { return h.Key == t.name })
}

// recordIsTombstone is RecordIsTombstone: the value is null.
type recordIsTombstone struct{}

func (recordIsTombstone) test(r *Record) bool { return r.Value.IsNull() }

// filter is Filter: drops every record it applies to (with a predicate,
// those the predicate selects).
type filter struct{}

func (filter) apply(*Record) (bool, error) { return false, nil }
