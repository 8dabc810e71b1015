package sink

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

var errNullValue = errors.New("null value (tombstone) with behavior.on.null.values=fail")

// isBadRecord tells a record's own fault (it will never be writable) from a
// passing failure of something it depends on (the registry, shutdown).
func isBadRecord(err error) bool {
	for _, bad := range []error{errNullValue, schema.ErrNotFramed, schema.ErrCorruptDatum, schema.ErrUnknownSchema, schema.ErrUnsupportedSchema, schema.ErrIncompatible} {
		if errors.Is(err, bad) {
			return true
		}
	}
	var pe *partitioner.RecordError
	// A value the output format cannot hold (an INT96 timestamp past 2262)
	// fails the same way every time: retrying would stall the partition.
	return errors.As(err, &pe) || errors.As(err, new(*format.ValueError))
}

// BadRecordError names a record that could not be written and why.
type BadRecordError struct {
	Connector, Topic string
	Partition        int32
	Offset           int64
	Err              error
}

func (e *BadRecordError) Error() string {
	return fmt.Sprintf("connector %q: bad record at topic %s partition %d offset %d: %v (errors.tolerance=none stops the connector; set errors.tolerance=all and errors.deadletterqueue.topic.name to route such records to a dead-letter topic)",
		e.Connector, e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *BadRecordError) Unwrap() error { return e.Err }

// badRecord applies errors.tolerance. It returns an error only when the
// connector must stop; with tolerance "all" the record is in the dead-letter
// topic (or the connector has no DLQ and counts and logs it) before this returns.
func (c *Connector) badRecord(ctx context.Context, kr *kgo.Record, cause error) error {
	bad := &BadRecordError{Connector: c.cfg.Name, Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Err: cause}
	if c.cfg.Tolerance == ToleranceNone {
		c.cfg.Observer.BadRecord(kr.Topic, kr.Partition, BadRecordFailed)
		return bad
	}
	if c.cfg.DLQTopic == "" {
		c.cfg.Logger.Error("bad record skipped (errors.tolerance=all, no dead-letter topic)", "topic", kr.Topic, "partition", kr.Partition, "offset", kr.Offset, "err", cause)
		c.Stats.DeadLettered.Add(1)
		c.cfg.Observer.BadRecord(kr.Topic, kr.Partition, BadRecordSkipped)
		return nil
	}
	if err := c.deadLetter(ctx, kr, cause); err != nil {
		c.cfg.Observer.BadRecord(kr.Topic, kr.Partition, BadRecordFailed)
		return fmt.Errorf("%w; and the dead-letter topic %q refused it: %w", bad, c.cfg.DLQTopic, err)
	}
	c.Stats.DeadLettered.Add(1)
	c.cfg.Observer.BadRecord(kr.Topic, kr.Partition, BadRecordDeadLettered)
	c.cfg.Logger.Warn("bad record sent to the dead-letter topic", "dlq", c.cfg.DLQTopic, "topic", kr.Topic, "partition", kr.Partition, "offset", kr.Offset, "err", cause)
	return nil
}

// deadLetter produces the record unchanged with Kafka Connect's error
// headers, retrying until it is acknowledged or ctx ends.
func (c *Connector) deadLetter(ctx context.Context, kr *kgo.Record, cause error) error {
	out := &kgo.Record{Topic: c.cfg.DLQTopic, Key: kr.Key, Value: kr.Value, Headers: dlqHeaders(c.cfg.Name, kr, cause)}
	out.Headers = append(out.Headers, kr.Headers...)
	wait := 100 * time.Millisecond
	for {
		err := c.cl.ProduceSync(ctx, out).FirstErr()
		if err == nil || ctx.Err() != nil {
			return err
		}
		c.cfg.Observer.DeadLetterFailed(c.cfg.DLQTopic, err)
		if ferr := c.kafkaFatal(err); ferr != nil {
			return ferr // refused, not down: retrying would hang the partition
		}
		c.cfg.Logger.Warn("dead-letter produce failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// dlqHeaders are the headers Kafka Connect adds with
// errors.deadletterqueue.context.headers.enable=true.
func dlqHeaders(connector string, kr *kgo.Record, cause error) []kgo.RecordHeader {
	class := reflect.TypeOf(errors.Unwrap(cause))
	if class == nil {
		class = reflect.TypeOf(cause)
	}
	h := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	return []kgo.RecordHeader{
		h("__connect.errors.topic", kr.Topic),
		h("__connect.errors.partition", strconv.Itoa(int(kr.Partition))),
		h("__connect.errors.offset", strconv.FormatInt(kr.Offset, 10)),
		h("__connect.errors.connector.name", connector),
		h("__connect.errors.stage", "VALUE_CONVERTER"),
		h("__connect.errors.exception.class.name", class.String()),
		h("__connect.errors.exception.message", cause.Error()),
	}
}
