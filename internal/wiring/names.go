package wiring

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// checkTopicNames checks, without Kafka, that the listed topics' committed
// file names fit the store's limit at filename.offset.zero.pad.width (as
// the reference names files). No partition count is known offline: a topic
// whose partition 0 does not fit is an error (no partition of it can be
// written); one whose higher partitions do not fit is a warning naming the
// first partition refused at assignment. check --connect compares with
// the partition counts Kafka reports (CheckPartitionNames).
func checkTopicNames(c *configs.Connector, ext string) (warns []string, errs []error) {
	for _, t := range c.Topics {
		lay := layout.Topic{Name: RoutedTopic(c, t)} // files are named by the routed name
		if err := lay.CheckNames(0, c.OffsetPadWidth, ext); err != nil {
			errs = append(errs, topicsKeyError(c, "topics", err))
			continue
		}
		if h := lay.HighestPartition(c.OffsetPadWidth, ext); h < math.MaxInt32 {
			warns = append(warns, fmt.Sprintf("%s: topics: topic %q: committed file names of partition %d and above would be longer than the %d bytes the store allows "+
				"in one name (filename.offset.zero.pad.width %d): those partitions are refused when assigned; partitions 0 to %d fit. "+
				"check --connect compares with the topic's partition count",
				c.Source, t, h+1, layout.MaxNameBytes, c.OffsetPadWidth, h))
		}
	}
	return warns, errs
}

// CheckPartitionNames checks each topic's committed file names at its
// highest partition number (Kafka's partitions are 0..n-1, and a longer
// number only lengthens the name), the one check offline cannot make.
// highest maps each topic to its highest partition; key is the setting
// that brings the topics in (topics or topics.regex). With topics.regex,
// a RegexRouter's routing of the topics it matches now is checked too:
// what the daemon would refuse at assignment.
func CheckPartitionNames(c *configs.Connector, key, ext string, highest map[string]int32) error {
	var errs []error
	topics := make([]string, 0, len(highest))
	for t := range highest {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	if c.TopicsRegex != nil {
		if chain, err := transform.New(c.Transforms, c.Predicates); err == nil { // a chain that does not build is check's error already
			if err := chain.CheckRoutes(topics); err != nil {
				errs = append(errs, topicsKeyError(c, key, fmt.Errorf("the topics it matches now: %w", err)))
			}
		}
	}
	for _, t := range topics {
		if err := (layout.Topic{Name: RoutedTopic(c, t)}).CheckNames(highest[t], c.OffsetPadWidth, ext); err != nil {
			errs = append(errs, topicsKeyError(c, key, err))
		}
	}
	return errors.Join(errs...)
}

// topicsKeyError names where a topic whose names cannot be written comes
// from: the connector, its file and the setting.
func topicsKeyError(c *configs.Connector, key string, err error) error {
	return fmt.Errorf("connector %q (%s): %s: %w", c.Name, c.Source, key, err)
}
