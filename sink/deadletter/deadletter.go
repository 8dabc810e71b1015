package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
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
// *DeadLetterError (tolerance all, the dead-letter topic did not take it):
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
	if err := c.deadLetter(ctx, kr, cause); err != nil {
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

// DeadLetterError is a bad record that errors.tolerance=all sends to the
// dead-letter topic, and the topic did not take. A refusal no retry fixes
// (KafkaFatal, a topic that cannot be created as configured) stops the
// connector, as in Connect. An outage (the dead-letter wait ran out, or
// the connector stopped during it) breaks only the record's partition: its
// open files are left, and after its backoff the records from its
// committed offset on are read again, the bad record sent again (D21).
type DeadLetterError struct {
	Connector, Topic string
	Partition        int32
	Offset           int64
	DLQTopic         string
	Cause            error // why the record is bad
	// Err is the dead-letter topic's refusal, or the last error of an
	// outage; nil when an outage gave no answer at all.
	Err error
	// Wait is the dead-letter wait when it ran out; Stopped says the
	// connector stopped during it. Neither: a refusal.
	Wait    time.Duration
	Stopped bool
}

func (e *DeadLetterError) Error() string {
	where := fmt.Sprintf("connector %q: bad record at topic %s partition %d offset %d (errors.tolerance=all)", e.Connector, e.Topic, e.Partition, e.Offset)
	last := ""
	if e.Err != nil {
		last = fmt.Sprintf(" (last error: %v)", e.Err)
	}
	switch {
	case e.Stopped:
		return fmt.Sprintf("%s: the connector stopped while waiting for the dead-letter topic %q to take it%s; it is read again at the next start. Why the record is bad: %v",
			where, e.DLQTopic, last, e.Cause)
	case e.Wait > 0:
		return fmt.Sprintf("%s: the dead-letter topic %q did not take it within the dead-letter wait of %v%s; the partition retries and sends it again. Why the record is bad: %v",
			where, e.DLQTopic, e.Wait, last, e.Cause)
	}
	return fmt.Sprintf("%s: %v; and the dead-letter topic %q refused it: %v; the connector stops", where, e.Cause, e.DLQTopic, e.Err)
}

func (e *DeadLetterError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Cause}
	}
	return []error{e.Cause, e.Err}
}

// deadLetterOutage says err is a *DeadLetterError that breaks only its
// partition, not the connector.
func deadLetterOutage(err error) bool {
	var de *DeadLetterError
	return errors.As(err, &de) && (de.Wait > 0 || de.Stopped)
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
// Kafka Connect's error headers when DLQHeaders. The topic is created
// first when missing. It retries for DeadLetterWait at most: the poll loop
// waits for every partition of a poll, so a wait as long as the outage
// held the whole connector, its commits and its shutdown (issue 20, N5).
func (c *Connector) deadLetter(ctx context.Context, kr *kgo.Record, cause error) error {
	out := &kgo.Record{Topic: c.cfg.DLQTopic, Key: kr.Key, Value: kr.Value}
	if c.cfg.DLQHeaders {
		out.Headers = dlqHeaders(c.cfg.Name, kr, cause)
	}
	out.Headers = append(out.Headers, kr.Headers...)
	de := &DeadLetterError{Connector: c.cfg.Name, Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, DLQTopic: c.cfg.DLQTopic, Cause: cause}
	wctx, cancel := context.WithTimeout(ctx, c.cfg.DeadLetterWait)
	defer cancel()
	backoff := 100 * time.Millisecond
	for {
		err := c.ensureDLQ(wctx)
		if err == nil {
			err = c.dlq.send(wctx, c.cl, tp{kr.Topic, kr.Partition}, kr.Offset, out)
		}
		if err == nil {
			return nil
		}
		if !isContextError(err) {
			de.Err = err // what the outage looks like, not how the wait ended
		}
		if wctx.Err() != nil {
			return c.deadLetterWaitOver(ctx, de)
		}
		c.cfg.Observer.DeadLetterFailed(c.cfg.DLQTopic, err)
		if ferr := c.deadLetterRefused(err); ferr != nil {
			de.Err = ferr
			return de
		}
		c.cfg.Logger.Warn("dead-letter produce failed; retrying", "dlq", c.cfg.DLQTopic, "err", err)
		select {
		case <-wctx.Done():
			return c.deadLetterWaitOver(ctx, de)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// deadLetterWaitOver completes de when the dead-letter wait ended: the
// connector stopping (ctx done) or the wait running out.
func (c *Connector) deadLetterWaitOver(ctx context.Context, de *DeadLetterError) error {
	if ctx.Err() != nil {
		de.Stopped = true
		return de
	}
	de.Wait = c.cfg.DeadLetterWait
	c.cfg.Observer.DeadLetterFailed(c.cfg.DLQTopic, de)
	return de
}

// deadLetterRefused returns the error to stop the connector with when no
// retry can fix err: the broker would not create the topic as configured
// (its answer, not a lost connection), or KafkaFatal calls it final
// (credentials, authorization). Retrying those would hang the partition.
func (c *Connector) deadLetterRefused(err error) error {
	var ce *dlqCreateError
	var ke *kerr.Error
	if errors.As(err, &ce) && errors.As(ce.err, &ke) && !ke.Retriable {
		return err
	}
	return c.kafkaFatal(err)
}

func isContextError(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// ensureDLQ creates the dead-letter topic with one partition and
// DLQReplication replicas when it does not exist, as Connect does; the
// producer does not ask brokers to create topics.
func (c *Connector) ensureDLQ(ctx context.Context) error {
	if c.dlq.ready.Load() {
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
		c.dlq.ready.Store(true)
		return nil
	}
	return &dlqCreateError{topic: c.cfg.DLQTopic, rf: rf, err: err}
}

// dlqProducer is a connector's dead-letter topic: whether it exists, and
// the produces not answered yet, by the offset of the record they carry.
// A wait that ran out cannot always withdraw its record: an idempotent
// producer keeps a record whose request the broker may have taken until
// the broker answers. The partition's retry then waits for that produce
// instead of adding a copy of the record behind it.
type dlqProducer struct {
	ready atomic.Bool
	mu    sync.Mutex
	sends map[dlqSource]*dlqSend
}

// dlqSource is the record a dead-letter produce carries.
type dlqSource struct {
	tp
	offset int64
}

// dlqSend is one produce to the dead-letter topic; err and answered are
// set before done is closed.
type dlqSend struct {
	done     chan struct{}
	err      error
	answered time.Time
}

// send produces out for the record at (t, offset), or waits for the
// produce of it still under way, until ctx ends. A produce whose own wait
// ended and that the client withdrew is started again.
func (d *dlqProducer) send(ctx context.Context, cl *kgo.Client, t tp, offset int64, out *kgo.Record) error {
	src := dlqSource{t, offset}
	for {
		s := d.pending(ctx, cl, src, out)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
		}
		d.forget(src, s)
		if !isContextError(s.err) || ctx.Err() != nil {
			return s.err
		}
	}
}

// pending returns the produce under way for src, starting one if there
// is none. Answered produces nobody came back for (the partition moved to
// another member) are dropped after dlqAnswerKept.
func (d *dlqProducer) pending(ctx context.Context, cl *kgo.Client, src dlqSource, out *kgo.Record) *dlqSend {
	d.mu.Lock()
	s, ok := d.sends[src]
	if !ok {
		d.dropStale(time.Now())
		s = &dlqSend{done: make(chan struct{})}
		if d.sends == nil {
			d.sends = map[dlqSource]*dlqSend{}
		}
		d.sends[src] = s
	}
	d.mu.Unlock()
	if ok {
		return s
	}
	// A copy: the client owns the record it produces until the promise.
	rec := *out
	cl.Produce(ctx, &rec, func(_ *kgo.Record, err error) {
		s.err, s.answered = err, time.Now()
		close(s.done)
	})
	return s
}

// dlqAnswerKept is how long an answered produce waits for its partition's
// retry, which comes within a minute (backoff) and a recovery. Dropped
// sooner, the retry sends the record again: a copy, never a loss.
const dlqAnswerKept = 10 * time.Minute

// dropStale forgets produces answered before now-dlqAnswerKept; d.mu is held.
func (d *dlqProducer) dropStale(now time.Time) {
	for src, s := range d.sends {
		select {
		case <-s.done:
			if now.Sub(s.answered) > dlqAnswerKept {
				delete(d.sends, src)
			}
		default:
		}
	}
}

// forget drops a produce that has been answered and its answer taken.
func (d *dlqProducer) forget(src dlqSource, s *dlqSend) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sends[src] == s {
		delete(d.sends, src)
	}
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
