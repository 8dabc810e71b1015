package sink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink/deadletter"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

var errNullValue = errors.New("null value (tombstone) with behavior.on.null.values=fail")

// isBadRecord tells a record's own fault (it will never be writable) from a
// passing failure of something it depends on (the registry, shutdown).
func isBadRecord(err error) bool {
	for _, bad := range []error{errNullValue, convert.ErrConversion, schema.ErrNotFramed, schema.ErrCorruptDatum, schema.ErrUnknownSchema, schema.ErrUnsupportedSchema, schema.ErrIncompatible, transform.ErrTransform} {
		if errors.Is(err, bad) {
			return true
		}
	}
	var pe *partitioner.RecordError
	// A value the output format cannot hold (an INT96 timestamp past 2262)
	// fails the same way every time: retrying would stall the partition.
	return errors.As(err, &pe) || errors.As(err, new(*format.ValueError))
}

// keyError is key.converter's refusal of a record's key.
type keyError struct{ err error }

func (e *keyError) Error() string { return "key: " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// Connect's executing classes for the dead-letter header
// __connect.errors.class.name: what a record failed in.
const (
	defaultValueClass = convert.AvroClass
	defaultKeyClass   = "org.apache.kafka.connect.converters.ByteArrayConverter"
	transformsPackage = "org.apache.kafka.connect.transforms."
	// sinkTaskClass is what Connect names for TASK_PUT (WorkerErrantRecordReporter).
	sinkTaskClass = "org.apache.kafka.connect.sink.SinkTask"
)

// failedStep is the step of Connect's pipeline a bad record failed at,
// for the dead-letter headers, with the class Connect would name: the key
// converter, the value converter, a transform, or what the connector itself
// does with the record (Connect's TASK_PUT: the partitioner, the format,
// behavior.on.null.values=fail).
func (c *Connector) failedStep(cause error) (deadletter.Stage, string) {
	var ke *keyError
	var te *transform.Error
	var pe *partitioner.RecordError
	switch {
	case errors.As(cause, &ke):
		return deadletter.StageKeyConverter, cmp.Or(c.cfg.KeyClass, defaultKeyClass)
	case errors.As(cause, &te):
		return deadletter.StageTransformation, transformsPackage + te.Class
	case errors.Is(cause, transform.ErrTransform):
		return deadletter.StageTransformation, ""
	case errors.Is(cause, errNullValue), errors.As(cause, &pe), errors.As(cause, new(*format.ValueError)):
		return deadletter.StageTaskPut, sinkTaskClass
	}
	return deadletter.StageValueConverter, cmp.Or(c.cfg.ValueClass, defaultValueClass)
}

// BadRecordError names a record that could not be written and why, with
// errors.tolerance=none: it stops the connector.
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

// badRecord applies errors.tolerance. It returns nil when the record is
// handled: in the dead-letter topic, or counted and logged when the
// connector has none. Otherwise a *BadRecordError (tolerance none) or a
// *deadletter.Error (tolerance all, the dead-letter topic did not take it):
// deadLetterOutage tells which of those break only the partition.
func (c *Connector) badRecord(ctx context.Context, kr *kgo.Record, cause error) error {
	if c.cfg.Tolerance == ToleranceNone {
		c.cfg.Observer.BadRecord(kr.Topic, kr.Partition, BadRecordFailed)
		return &BadRecordError{Connector: c.cfg.Name, Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Err: cause}
	}
	if c.cfg.DLQTopic == "" {
		c.logBad(slog.LevelError, "bad record skipped (errors.tolerance=all, no dead-letter topic)", kr, cause)
		c.Stats.DeadLettered.Add(1)
		c.cfg.Observer.BadRecord(kr.Topic, kr.Partition, BadRecordSkipped)
		return nil
	}
	stage, class := c.failedStep(cause)
	if err := c.dlq.Send(ctx, kr, deadletter.AtStage(stage, class, cause)); err != nil {
		if !deadLetterOutage(err) {
			c.cfg.Observer.BadRecord(kr.Topic, kr.Partition, BadRecordFailed)
		}
		return err
	}
	c.Stats.DeadLettered.Add(1)
	c.cfg.Observer.BadRecord(kr.Topic, kr.Partition, BadRecordDeadLettered)
	c.logBad(slog.LevelWarn, "bad record sent to the dead-letter topic", kr, cause, "dlq", c.cfg.DLQTopic)
	return nil
}

// deadLetterTopic is where errors.tolerance=all sends a bad record: the
// connector's dead-letter topic (deadletter.Topic). An error is a
// *deadletter.Error: a refusal stops the connector, an outage breaks only
// the record's partition (deadLetterOutage).
type deadLetterTopic interface {
	Send(ctx context.Context, kr *kgo.Record, cause error) error
}

// deadLetterOutage says err is a dead-letter topic's outage, which breaks
// only its partition, not the connector.
func deadLetterOutage(err error) bool {
	var de *deadletter.Error
	return errors.As(err, &de) && de.Outage()
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
