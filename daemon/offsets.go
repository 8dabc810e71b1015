package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// A connector's offsets as the REST API reads and changes them (KIP-875).
// HDFS is the truth: a partition's offset is where its WAL says it resumes
// (`hdfs-sink offsets`' HDFS NEXT), and a change is the fenced reset claim
// of `hdfs-sink offsets reset` (sink.ResetOffset) after its checks: the
// connector consumes the topic, the offset is inside the partition's log,
// no committed file holds it or a later one. Changes are refused unless
// the connector is stopped (its partitions released), as Connect refuses
// them, and the connector stays stopped until they are done.

// Offsets is where each partition of the connector with a committed
// offset resumes, by topic and partition.
func (d *Daemon) Offsets(ctx context.Context, name string) ([]rest.PartitionOffset, error) {
	s := d.supervisor(name)
	if s == nil {
		return nil, rest.ErrNotFound
	}
	o, err := d.openOffsets(s.config())
	if err != nil {
		return nil, err
	}
	defer o.close()
	return o.committed(ctx)
}

// AlterOffsets moves each partition given to its offset (nil: forgets
// its committed offset), all checked before any is moved.
func (d *Daemon) AlterOffsets(ctx context.Context, name string, changes []rest.PartitionOffset) error {
	return d.changeOffsets(ctx, name, func(*offsetsSession) ([]rest.PartitionOffset, error) { return changes, nil })
}

// ResetOffsets forgets the committed offset of every partition that has
// one: each starts where consumer.auto.offset.reset says. It is refused
// while committed files hold offsets (move them out of topics.dir first),
// as `offsets reset --to 0` is.
func (d *Daemon) ResetOffsets(ctx context.Context, name string) error {
	return d.changeOffsets(ctx, name, func(o *offsetsSession) ([]rest.PartitionOffset, error) {
		offs, err := o.committed(ctx)
		for i := range offs {
			offs[i].Next = nil
		}
		return offs, err
	})
}

// changeOffsets holds the stopped connector stopped while it applies the
// changes what returns.
func (d *Daemon) changeOffsets(ctx context.Context, name string, what func(*offsetsSession) ([]rest.PartitionOffset, error)) error {
	s := d.supervisor(name)
	if s == nil {
		return rest.ErrNotFound
	}
	release, err := s.hold()
	if err != nil {
		return errNotStopped(name)
	}
	defer release()
	o, err := d.openOffsets(s.config())
	if err != nil {
		return err
	}
	defer o.close()
	changes, err := what(o)
	if err != nil {
		return err
	}
	return o.apply(ctx, changes, d.log.With("connector", name))
}

// offsetsSession is what reading or changing a connector's offsets needs:
// a client of its cluster and its store.
type offsetsSession struct {
	c     *configs.Connector
	admin *wiring.KafkaAdmin
	store storage.FS
	ws    sink.WriteSettings
}

func (d *Daemon) openOffsets(c *configs.Connector) (*offsetsSession, error) {
	part, err := wiring.OutputPartitioner(c)
	if err != nil {
		return nil, err
	}
	admin, err := wiring.NewKafkaAdmin(c, d.logins, d.log, "hdfs-sink-offsets-"+c.Name)
	if err != nil {
		return nil, err
	}
	store, err := d.openStore(c)
	if err != nil {
		admin.Close()
		return nil, fmt.Errorf("connector %q: store: %w", c.Name, err)
	}
	ws := sink.WriteSettings{FS: store, Partitioner: part, TopicsDir: c.TopicsDir, LogsDir: c.LogsDir, Route: wiring.TopicRoute(c), Now: time.Now}
	return &offsetsSession{c: c, admin: admin, store: store, ws: ws}, nil
}

func (o *offsetsSession) close() {
	o.store.Close()
	o.admin.Close()
}

// committed is where each partition of the connector's topics with a
// committed offset resumes.
func (o *offsetsSession) committed(ctx context.Context) ([]rest.PartitionOffset, error) {
	topics, err := o.admin.Topics(ctx)
	if err != nil {
		return nil, err
	}
	topics = append([]string(nil), topics...)
	sort.Strings(topics)
	var out []rest.PartitionOffset
	for _, t := range topics {
		ranges, err := o.admin.LogRanges(ctx, t)
		if err != nil {
			return nil, err
		}
		parts := make([]int32, 0, len(ranges))
		for p := range ranges {
			parts = append(parts, p)
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		for _, p := range parts {
			committed, err := sink.CommittedOffset(ctx, o.ws, t, p)
			if err != nil {
				return nil, fmt.Errorf("connector %q topic %s partition %d: where it resumes: %w", o.c.Name, t, p, err)
			}
			if committed >= 0 {
				next := committed + 1
				out = append(out, rest.PartitionOffset{Topic: t, Partition: p, Next: &next})
			}
		}
	}
	return out, nil
}

// apply checks every change as `offsets reset` checks one, then publishes
// the reset claims one by one. A failure after some were published says
// which.
func (o *offsetsSession) apply(ctx context.Context, changes []rest.PartitionOffset, log *slog.Logger) error {
	resets := make([]sink.Reset, 0, len(changes))
	for _, ch := range changes {
		r, err := o.check(ctx, ch)
		if err != nil {
			return refusal(err)
		}
		resets = append(resets, r)
	}
	var done []string
	for _, r := range resets {
		if err := sink.ResetOffset(ctx, o.ws, r, log); err != nil {
			if len(done) > 0 {
				err = fmt.Errorf("%w (partitions reset before it: %s)", err, strings.Join(done, ", "))
			}
			return refusal(err)
		}
		done = append(done, fmt.Sprintf("%s/%d", r.Topic, r.Partition))
		log.Info("partition offset changed through the REST API", "topic", r.Topic, "partition", r.Partition, "next_offset", r.Next)
	}
	return nil
}

// check is one change as a reset, or why it is refused: a topic the
// connector does not consume, an offset outside the partition's log,
// committed files at or above it.
func (o *offsetsSession) check(ctx context.Context, ch rest.PartitionOffset) (sink.Reset, error) {
	r := sink.Reset{Connector: o.c.Name, Topic: ch.Topic, Partition: ch.Partition}
	if err := wiring.CheckConsumes(o.c, ch.Topic, ch.Partition); err != nil {
		return r, err
	}
	if ch.Next != nil {
		r.Next = *ch.Next
		if _, err := wiring.CheckInLog(ctx, o.admin, ch.Topic, ch.Partition, r.Next); err != nil {
			return r, err
		}
	}
	return r, sink.CheckReset(ctx, o.ws, r)
}

// refusal makes a reset the checks or the WAL refuse a 400; anything else
// (Kafka or the store unreachable) stays a failure.
func refusal(err error) error {
	var refused *wiring.ResetRefusedError
	var files *sink.ResetError
	var owner *sink.OverlapError
	if errors.As(err, &refused) || errors.As(err, &files) || errors.As(err, &owner) {
		return &rest.BadRequestError{Err: err}
	}
	return err
}
