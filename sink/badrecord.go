package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
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
		c.logBad(slog.LevelError, "bad record skipped (errors.tolerance=all, no dead-letter topic)", kr, cause)
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
	c.logBad(slog.LevelWarn, "bad record sent to the dead-letter topic", kr, cause, "dlq", c.cfg.DLQTopic)
	return nil
}

// logBad logs a tolerated bad record as errors.log.enable says: each one
// when true, with its key and value when errors.log.include.messages is
// true too. When false (Connect's default) Connect logs none; hdfs-sink
// logs the first once, so that skipping is never silent, and counts the
// rest in /status.
func (c *Connector) logBad(level slog.Level, msg string, kr *kgo.Record, cause error, extra ...any) {
	attrs := append([]any{"topic", kr.Topic, "partition", kr.Partition, "offset", kr.Offset, "err", cause}, extra...)
	if !c.cfg.LogBadRecords {
		if c.badLogged.CompareAndSwap(false, true) {
			c.cfg.Logger.Log(context.Background(), level, msg+"; errors.log.enable is false: further bad records are counted (dead_lettered), not logged", attrs...)
		}
		return
	}
	if c.cfg.LogRecordContent {
		attrs = append(attrs, "key", recordBytes(kr.Key), "value", recordBytes(kr.Value))
	}
	c.cfg.Logger.Log(context.Background(), level, msg, attrs...)
}

// maxLoggedBytes bounds a logged key or value: a bad record can be large.
const maxLoggedBytes = 1 << 10

func recordBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) > maxLoggedBytes {
		return fmt.Sprintf("%q... (%d bytes)", b[:maxLoggedBytes], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// deadLetter produces the record unchanged (key, value, headers), with
// Kafka Connect's error headers when DLQHeaders, retrying until it is
// acknowledged or ctx ends. The topic is created first when missing.
func (c *Connector) deadLetter(ctx context.Context, kr *kgo.Record, cause error) error {
	out := &kgo.Record{Topic: c.cfg.DLQTopic, Key: kr.Key, Value: kr.Value}
	if c.cfg.DLQHeaders {
		out.Headers = dlqHeaders(c.cfg.Name, kr, cause)
	}
	out.Headers = append(out.Headers, kr.Headers...)
	wait := 100 * time.Millisecond
	for {
		err := c.ensureDLQ(ctx)
		var ce *dlqCreateError
		if errors.As(err, &ce) && !kerr.IsRetriable(ce.err) {
			return err // the topic cannot be created as configured: stop, as Connect does
		}
		if err == nil {
			err = c.cl.ProduceSync(ctx, out).FirstErr()
		}
		if err == nil || ctx.Err() != nil {
			return err
		}
		c.cfg.Observer.DeadLetterFailed(c.cfg.DLQTopic, err)
		if ferr := c.kafkaFatal(err); ferr != nil {
			return ferr // refused, not down: retrying would hang the partition
		}
		c.cfg.Logger.Warn("dead-letter produce failed; retrying", "dlq", c.cfg.DLQTopic, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// ensureDLQ creates the dead-letter topic with one partition and
// DLQReplication replicas when it does not exist, as Connect does; the
// producer does not ask brokers to create topics.
func (c *Connector) ensureDLQ(ctx context.Context) error {
	if c.dlqReady.Load() {
		return nil
	}
	rf := c.cfg.DLQReplication
	if rf <= 0 {
		rf = -1 // the broker's default.replication.factor
	}
	resp, err := kadm.NewClient(c.cl).CreateTopic(ctx, 1, rf, nil, c.cfg.DLQTopic)
	if err == nil {
		err = resp.Err
	}
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		c.dlqReady.Store(true)
		return nil
	}
	return &dlqCreateError{topic: c.cfg.DLQTopic, rf: rf, err: err}
}

// dlqCreateError is a dead-letter topic the broker would not create.
type dlqCreateError struct {
	topic string
	rf    int16
	err   error
}

func (e *dlqCreateError) Error() string {
	return fmt.Sprintf("create dead-letter topic %s (replication factor %d, errors.deadletterqueue.topic.replication.factor): %v", e.topic, e.rf, e.err)
}

func (e *dlqCreateError) Unwrap() error { return e.err }

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
