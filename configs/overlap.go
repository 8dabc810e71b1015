package configs

import "fmt"

// OverlapError says that two connectors would write one topic into the
// same directories of the same store: they would fence each other in a
// loop (one logs.dir), or both write every offset under the same names
// (one topics.dir), each silently replacing the other's files.
type OverlapError struct {
	Topic    string
	First    *Connector
	Second   *Connector
	Key, Dir string // topics.dir or logs.dir, and the directory both use
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("connectors %q (%s) and %q (%s) both write topic %q into %s %s of %s: "+
		"give one of them another %s, or consume the topic in one connector only",
		e.First.Name, e.First.Source, e.Second.Name, e.Second.Source, e.Topic, e.Key, e.Dir, e.First.Store.Raw, e.Key)
}

// checkOverlaps finds every pair of connectors that share a topic and a
// store directory. A topic is shared when both list it, or one lists it and
// the other's topics.regex matches it; two regexes cannot be compared
// ahead of the topics that exist and are not checked.
func checkOverlaps(conns []*Connector) []error {
	var errs []error
	for i, a := range conns {
		for _, b := range conns[i+1:] {
			for _, t := range sharedTopics(a, b) {
				if err := overlap(a, b, t); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errs
}

func sharedTopics(a, b *Connector) []string {
	var out []string
	for _, t := range a.Topics {
		if b.consumes(t) {
			out = append(out, t)
		}
	}
	if a.TopicsRegex != nil {
		for _, t := range b.Topics {
			if a.consumes(t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// consumes reports whether the connector reads topic t by its own settings.
func (c *Connector) consumes(t string) bool {
	if c.TopicsRegex != nil {
		return c.TopicsRegex.MatchString(t)
	}
	for _, have := range c.Topics {
		if have == t {
			return true
		}
	}
	return false
}

func overlap(a, b *Connector, topic string) error {
	if a.Store.Scheme != b.Store.Scheme || a.Store.Host != b.Store.Host {
		return nil
	}
	switch {
	case a.LogsDir(topic) == b.LogsDir(topic):
		return &OverlapError{Topic: topic, First: a, Second: b, Key: "logs.dir", Dir: a.LogsDir(topic)}
	case a.TopicsDir(topic) == b.TopicsDir(topic):
		return &OverlapError{Topic: topic, First: a, Second: b, Key: "topics.dir", Dir: a.TopicsDir(topic)}
	}
	return nil
}
