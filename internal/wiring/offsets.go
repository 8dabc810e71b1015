package wiring

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// The checks `hdfs-sink offsets reset` and the REST API's offsets routes
// make before a reset's WAL claim (sink.ResetOffset): a typo in a topic,
// a partition or an offset must be refused, not skip data silently.

// ResetRefusedError is a reset the connector's topics or Kafka's log do
// not allow (400 over REST; exit 1 for offsets reset).
type ResetRefusedError struct {
	Connector string
	Topic     string
	Partition int32
	Reason    string
}

func (e *ResetRefusedError) Error() string {
	return fmt.Sprintf("connector %q topic %s partition %d: %s", e.Connector, e.Topic, e.Partition, e.Reason)
}

// CheckConsumes refuses a topic connector c does not consume: not one of
// its topics, or not matched by its topics.regex.
func CheckConsumes(c *configs.Connector, topic string, p int32) error {
	refuse := func(why string) error {
		return &ResetRefusedError{Connector: c.Name, Topic: topic, Partition: p, Reason: why}
	}
	if c.TopicsRegex != nil {
		if c.TopicsRegex.MatchString(topic) {
			return nil
		}
		return refuse(fmt.Sprintf("the connector does not consume this topic: it does not match topics.regex %s", c.Raw["topics.regex"]))
	}
	if slices.Contains(c.Topics, topic) {
		return nil
	}
	return refuse(fmt.Sprintf("the connector does not consume this topic: its topics are %s", strings.Join(c.Topics, ",")))
}

// CheckInLog asks Kafka for the partition's log range and refuses next
// outside it: below the log start those records are gone, above the log
// end there are none yet (next equal to the log end is "latest"). Kafka
// that cannot be asked is an error, not a refusal: the caller decides
// (offsets reset --force; a 500 over REST).
func CheckInLog(ctx context.Context, admin *KafkaAdmin, topic string, p int32, next int64) (LogRange, error) {
	ranges, err := admin.LogRanges(ctx, topic)
	if err != nil {
		return LogRange{}, fmt.Errorf("cannot check offset %d against the log of topic %s partition %d: %w", next, topic, p, err)
	}
	lr, ok := ranges[p]
	refuse := func(why string) error {
		return &ResetRefusedError{Connector: admin.c.Name, Topic: topic, Partition: p, Reason: why}
	}
	switch {
	case !ok:
		return LogRange{}, refuse(fmt.Sprintf("%s has no such partition (the topic has %d)", admin.Where(), len(ranges)))
	case next < lr.Start:
		return lr, refuse(fmt.Sprintf("offset %d is below the log start %d (the log holds %s): those records are gone; resume at %d (earliest) or later",
			next, lr.Start, lr, lr.Start))
	case next > lr.End:
		return lr, refuse(fmt.Sprintf("offset %d is past the log end %d (the log holds %s): no record has it yet; resume at %d (latest) or earlier",
			next, lr.End, lr, lr.End))
	}
	return lr, nil
}

// String is the range as an operator reads it.
func (r LogRange) String() string {
	if r.End <= r.Start {
		return fmt.Sprintf("no records; its next offset is %d", r.End)
	}
	return fmt.Sprintf("offsets %d to %d", r.Start, r.End-1)
}
