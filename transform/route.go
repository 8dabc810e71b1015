package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// CheckRoutes refuses a routing of the consumed topics that cannot be
// written exactly once (docs/design.md, "Routed topics"): files, WAL and
// Hive table are keyed by the routed name while file names carry only the
// source partition and offsets, so two consumed topics must never share a
// routed name, a routed name must not be another consumed topic's name,
// and a routed name must be a legal topic name (it names directories and
// files). topics are every topic the connector consumes. nil when the
// chain renames nothing.
func (c *Chain) CheckRoutes(topics []string) error {
	if !c.ChangesTopic() {
		return nil
	}
	keys := c.routerKeys()
	sorted := slices.Compact(slices.Sorted(slices.Values(topics)))
	consumed := make(map[string]bool, len(sorted))
	for _, t := range sorted {
		consumed[t] = true
	}
	by := map[string]string{} // routed name → first source topic
	var errs []string
	for _, t := range sorted {
		r := c.Route(t)
		switch {
		case !configs.IsTopicName(r):
			errs = append(errs, fmt.Sprintf("topic %q is routed to %q, which is %s: the routed name names the topic's directory, files, WAL and Hive table", t, r, configs.ReasonTopic))
		case r != t && consumed[r]:
			errs = append(errs, fmt.Sprintf("topic %q is routed to %q, which this connector also consumes: both would write the same files and WALs", t, r))
		case by[r] != "":
			errs = append(errs, fmt.Sprintf("topics %q and %q are both routed to %q: their files, WALs and Hive table would be one, and file names carry the source partition and offsets, not the source topic", by[r], t, r))
		default:
			by[r] = t
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s; this cannot be written exactly once: route each consumed topic to a name of its own, or use one connector per topic",
		keys, strings.Join(errs, "; "))
}

// routerKeys names the keys that decide the routing, for errors.
func (c *Chain) routerKeys() string {
	var keys []string
	for _, s := range c.steps {
		if _, ok := s.t.(*regexRouter); ok {
			keys = append(keys, "transforms."+s.name+".regex", "transforms."+s.name+".replacement")
		}
	}
	return strings.Join(keys, ", ")
}

// PerRecordRoute names the first router whose output can differ between
// records of one topic, and why; "" when every router's output depends on
// the topic name alone (Route gives each topic its one name). A
// TimestampRouter names by the record's timestamp; a router behind a
// predicate other than TopicNameMatches (HasHeaderKey, RecordIsTombstone)
// renames some records of a topic and not others. Either way one source
// partition's records would land under many names.
func (c *Chain) PerRecordRoute() (name, why string) {
	if c == nil {
		return "", ""
	}
	for _, s := range c.steps {
		switch s.t.(type) {
		case *timestampRouter:
			return s.name, "TimestampRouter names each record by its timestamp"
		case *regexRouter:
			if _, ok := s.pred.(*topicNameMatches); s.pred != nil && !ok {
				return s.name, "its predicate does not depend on the topic name alone (only TopicNameMatches keeps a router's output one name per topic)"
			}
		}
	}
	return "", ""
}

// Route is the name the chain gives every record of topic: the RegexRouter
// steps applied in order, each under its TopicNameMatches predicate, as
// Apply applies them. It is the routed name only when PerRecordRoute is "".
func (c *Chain) Route(topic string) string {
	if c == nil {
		return topic
	}
	r := &Record{Topic: topic}
	for _, s := range c.steps {
		rr, ok := s.t.(*regexRouter)
		if !ok || (s.pred != nil && s.pred.test(r) == s.negate) {
			continue
		}
		_, _ = rr.apply(r) // never fails, keeps every record
	}
	return r.Topic
}
