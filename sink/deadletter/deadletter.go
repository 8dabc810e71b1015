// Package deadletter is a connector's dead-letter topic
// (errors.deadletterqueue.*): a bad record that errors.tolerance=all
// tolerates is produced there unchanged, with Kafka Connect's error
// headers when asked; the topic is created when missing; a send waits a
// bounded time and never adds a copy of a record whose produce is still
// under way. Its Error tells a refusal (the connector stops) from an
// outage (the record's partition retries, D21). sink decides which records
// are bad and declares what it asks of this package.
package deadletter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Error is a bad record that errors.tolerance=all sends to the
// dead-letter topic, and the topic did not take. A refusal no retry fixes
// (KafkaFatal, a topic that cannot be created as configured) stops the
// connector, as in Connect. An outage (the dead-letter wait ran out, or
// the connector stopped during it) breaks only the record's partition: its
// open files are left, and after its backoff the records from its
// committed offset on are read again, the bad record sent again (D21).
type Error struct {
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

func (e *Error) Error() string {
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

func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Cause}
	}
	return []error{e.Cause, e.Err}
}

// Outage says the error is an outage (the wait ran out, or the connector
// stopped during it), not a refusal: it breaks only the record's
// partition, which sends the record again after its backoff (D21).
func (e *Error) Outage() bool { return e.Wait > 0 || e.Stopped }

// Config is what a connector's dead-letter topic is.
type Config struct {
	Connector   string // the connector's name, for errors and headers
	Topic       string // errors.deadletterqueue.topic.name
	Headers     bool   // errors.deadletterqueue.context.headers.enable
	Replication int16  // of the topic when it has to be created; <= 0: the broker's default
	Wait        time.Duration
	// Fatal says whether a client error is one no retry fixes, returning
	// the error to stop the connector with (sink.Config.KafkaFatal); nil:
	// every error is retried.
	Fatal func(error) error
	// Failed is told of every failed produce (the connector's observer).
	Failed func(topic string, err error)
	Logger *slog.Logger
}

// Topic is a connector's dead-letter topic: whether it exists, and the
// produces not answered yet, by the offset of the record they carry. A
// wait that ran out cannot always withdraw its record: an idempotent
// producer keeps a record whose request the broker may have taken until
// the broker answers. The partition's retry then waits for that produce
// instead of adding a copy of the record behind it.
type Topic struct {
	cfg   Config
	cl    *kgo.Client
	ready atomic.Bool
	mu    sync.Mutex
	sends map[source]*send
}

// New is the dead-letter topic cfg describes, produced to with cl (the
// connector's client).
func New(cl *kgo.Client, cfg Config) *Topic {
	if cfg.Fatal == nil {
		cfg.Fatal = func(error) error { return nil }
	}
	if cfg.Failed == nil {
		cfg.Failed = func(string, error) {}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Topic{cfg: cfg, cl: cl}
}

// Send produces the record unchanged (key, value, headers), with Kafka
// Connect's error headers when Headers. The topic is created first when
// missing. It retries for Wait at most: the poll loop waits for every
// partition of a poll, so a wait as long as the outage held the whole
// connector, its commits and its shutdown (issue 20, N5). Its error is an
// *Error.
func (d *Topic) Send(ctx context.Context, kr *kgo.Record, cause error) error {
	out := &kgo.Record{Topic: d.cfg.Topic, Key: kr.Key, Value: kr.Value}
	if d.cfg.Headers {
		out.Headers = headers(d.cfg.Connector, kr, cause)
	}
	out.Headers = append(out.Headers, kr.Headers...)
	de := &Error{Connector: d.cfg.Connector, Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, DLQTopic: d.cfg.Topic, Cause: cause}
	wctx, cancel := context.WithTimeout(ctx, d.cfg.Wait)
	defer cancel()
	backoff := 100 * time.Millisecond
	for {
		err := d.ensure(wctx)
		if err == nil {
			err = d.send(wctx, source{kr.Topic, kr.Partition, kr.Offset}, out)
		}
		if err == nil {
			return nil
		}
		if !isContextError(err) {
			de.Err = err // what the outage looks like, not how the wait ended
		}
		if wctx.Err() != nil {
			return d.waitOver(ctx, de)
		}
		d.cfg.Failed(d.cfg.Topic, err)
		if ferr := d.refused(err); ferr != nil {
			de.Err = ferr
			return de
		}
		d.cfg.Logger.Warn("dead-letter produce failed; retrying", "dlq", d.cfg.Topic, "err", err)
		select {
		case <-wctx.Done():
			return d.waitOver(ctx, de)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// waitOver completes de when the dead-letter wait ended: the connector
// stopping (ctx done) or the wait running out.
func (d *Topic) waitOver(ctx context.Context, de *Error) error {
	if ctx.Err() != nil {
		de.Stopped = true
		return de
	}
	de.Wait = d.cfg.Wait
	d.cfg.Failed(d.cfg.Topic, de)
	return de
}

// refused returns the error to stop the connector with when no retry can
// fix err: the broker would not create the topic as configured (its
// answer, not a lost connection), or Fatal calls it final (credentials,
// authorization). Retrying those would hang the partition.
func (d *Topic) refused(err error) error {
	var ce *createError
	var ke *kerr.Error
	if errors.As(err, &ce) && errors.As(ce.err, &ke) && !ke.Retriable {
		return err
	}
	return d.cfg.Fatal(err)
}

func isContextError(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// ensure creates the dead-letter topic with one partition and Replication
// replicas when it does not exist, as Connect does; the producer does not
// ask brokers to create topics.
func (d *Topic) ensure(ctx context.Context) error {
	if d.ready.Load() {
		return nil
	}
	rf := d.cfg.Replication
	if rf <= 0 {
		rf = -1 // the broker's default.replication.factor
	}
	resp, err := kadm.NewClient(d.cl).CreateTopic(ctx, 1, rf, nil, d.cfg.Topic)
	if err == nil {
		err = resp.Err
	}
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		d.ready.Store(true)
		return nil
	}
	return &createError{topic: d.cfg.Topic, rf: rf, err: err}
}

// source is the record a dead-letter produce carries.
type source struct {
	topic     string
	partition int32
	offset    int64
}

// send is one produce to the dead-letter topic; err and answered are set
// before done is closed.
type send struct {
	done     chan struct{}
	err      error
	answered time.Time
}

// send produces out for the record at src, or waits for the produce of it
// still under way, until ctx ends. A produce whose own wait ended and that
// the client withdrew is started again.
func (d *Topic) send(ctx context.Context, src source, out *kgo.Record) error {
	for {
		s := d.pending(ctx, src, out)
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
// another member) are dropped after answerKept.
func (d *Topic) pending(ctx context.Context, src source, out *kgo.Record) *send {
	d.mu.Lock()
	s, ok := d.sends[src]
	if !ok {
		d.dropStale(time.Now())
		s = &send{done: make(chan struct{})}
		if d.sends == nil {
			d.sends = map[source]*send{}
		}
		d.sends[src] = s
	}
	d.mu.Unlock()
	if ok {
		return s
	}
	// A copy: the client owns the record it produces until the promise.
	rec := *out
	d.cl.Produce(ctx, &rec, func(_ *kgo.Record, err error) {
		s.err, s.answered = err, time.Now()
		close(s.done)
	})
	return s
}

// answerKept is how long an answered produce waits for its partition's
// retry, which comes within a minute (backoff) and a recovery. Dropped
// sooner, the retry sends the record again: a copy, never a loss.
const answerKept = 10 * time.Minute

// dropStale forgets produces answered before now-answerKept; d.mu is held.
func (d *Topic) dropStale(now time.Time) {
	for src, s := range d.sends {
		select {
		case <-s.done:
			if now.Sub(s.answered) > answerKept {
				delete(d.sends, src)
			}
		default:
		}
	}
}

// forget drops a produce that has been answered and its answer taken.
func (d *Topic) forget(src source, s *send) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sends[src] == s {
		delete(d.sends, src)
	}
}

// createError is a dead-letter topic the broker would not create.
type createError struct {
	topic string
	rf    int16
	err   error
}

func (e *createError) Error() string {
	return fmt.Sprintf("create dead-letter topic %s (replication factor %d, errors.deadletterqueue.topic.replication.factor): %v", e.topic, e.rf, e.err)
}

func (e *createError) Unwrap() error { return e.err }

// Stage is where in Connect's pipeline a record failed: its
// __connect.errors.stage header (Connect's Stage enum).
type Stage string

// The stages a sink's records fail at.
const (
	StageKeyConverter   Stage = "KEY_CONVERTER"
	StageValueConverter Stage = "VALUE_CONVERTER"
	StageTransformation Stage = "TRANSFORMATION"
	StageTaskPut        Stage = "TASK_PUT" // the connector's own step: partitioner, format, null values
)

// AtStage is cause failed at stage, in class (the converter's or the
// transform's Connect class name, or SinkTask's: Connect's executing
// class), for Send's headers; without it a cause is VALUE_CONVERTER's,
// in an unnamed class. The message and exception headers are cause's.
func AtStage(stage Stage, class string, cause error) error {
	return &staged{stage: stage, class: class, err: cause}
}

// StageOf is the stage AtStage gave cause, else VALUE_CONVERTER.
func StageOf(cause error) Stage {
	var s *staged
	if errors.As(cause, &s) {
		return s.stage
	}
	return StageValueConverter
}

type staged struct {
	stage Stage
	class string
	err   error
}

func (s *staged) Error() string { return s.err.Error() }
func (s *staged) Unwrap() error { return s.err }

// TaskID is __connect.errors.task.id: hdfs-sink runs each connector as
// one task, 0 (the REST API's tasks say the same); its partitions are
// spread over the daemons of the group, not over tasks.
const TaskID = "0"

// headers are the headers Kafka Connect adds with
// errors.deadletterqueue.context.headers.enable=true.
func headers(connector string, kr *kgo.Record, cause error) []kgo.RecordHeader {
	stage, class := StageOf(cause), ""
	if s, ok := cause.(*staged); ok {
		class, cause = s.class, s.err
	}
	exception := reflect.TypeOf(errors.Unwrap(cause))
	if exception == nil {
		exception = reflect.TypeOf(cause)
	}
	h := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	return []kgo.RecordHeader{
		h("__connect.errors.topic", kr.Topic),
		h("__connect.errors.partition", strconv.Itoa(int(kr.Partition))),
		h("__connect.errors.offset", strconv.FormatInt(kr.Offset, 10)),
		h("__connect.errors.connector.name", connector),
		h("__connect.errors.task.id", TaskID),
		h("__connect.errors.stage", string(stage)),
		h("__connect.errors.class.name", class),
		h("__connect.errors.exception.class.name", exception.String()),
		h("__connect.errors.exception.message", cause.Error()),
		h("__connect.errors.exception.stacktrace", errorChain(cause)),
	}
}

// errorChain is __connect.errors.exception.stacktrace for a Go error: Go
// errors carry no stack, so it is the chain of wrapped errors, one per
// line, each with its type, as Java's trace lists its causes ("Caused
// by:"); an error joining several lists each under it.
func errorChain(err error) string {
	var b strings.Builder
	writeChain(&b, err, "", 0)
	return strings.TrimSuffix(b.String(), "\n")
}

// maxChainDepth bounds errorChain against a cycle a custom Unwrap could
// build: no real chain here is more than a few deep.
const maxChainDepth = 32

func writeChain(b *strings.Builder, err error, prefix string, depth int) {
	for ; err != nil && depth < maxChainDepth; depth++ {
		fmt.Fprintf(b, "%s%T: %s\n", prefix, err, err.Error())
		prefix = "Caused by: "
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				writeChain(b, e, prefix, depth+1)
			}
			return
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return
		}
	}
}
