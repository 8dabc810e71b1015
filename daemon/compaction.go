package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/hdfs-sink/hdfs-sink/compact"
	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// compactionRun is a connector's compaction policy (hdfs.sink.compaction.*):
// every interval, for each topic whose partition 0 the connector owns, one
// pass of that topic's policy. The passes run one after the other in this
// one goroutine, so a connector compacts one directory at a time. During
// a rebalance two daemons may compact a topic at once, which compaction
// tolerates (docs/design.md §12: the commit point is an exclusive rename,
// every later step is idempotent).
type compactionRun struct {
	name     string
	every    time.Duration
	conn     *sink.Connector
	policies func(topic string) (*compact.Policy, error)
	metrics  *metrics.Metrics
	log      *slog.Logger

	byTopic map[string]*compact.Policy // the run goroutine's only
	// held is, by topic, when the pace lets a held compaction begin (the
	// run goroutine's only): the loop wakes then rather than a whole
	// interval later.
	held   map[string]time.Time
	status topicStatuses[CompactionStatus]
}

// CompactionStatus is one topic's compaction here, since this connector
// started: the REST API's type (daemon/rest/lifecycle.go), so that
// /status and GET /connectors/{name}/lifecycle show the same document.
type CompactionStatus = rest.CompactionStatus

func (r *compactionRun) run(ctx context.Context) {
	everyOwnedTopic(ctx, r.conn, r.wait, nil, r.pass, func(_ context.Context, topic string) {
		delete(r.byTopic, topic) // another daemon compacts it
		delete(r.held, topic)
		r.status.forget(topic)
	})
}

// minPacedWait keeps a held compaction's wake-up from spinning the loop
// should the clock step back.
const minPacedWait = time.Second

// wait is how long the loop sleeps before its next round: the interval,
// or until the earliest time the pace lets a held compaction begin, so a
// backlog is compacted one directory per pace, not per interval.
func (r *compactionRun) wait() time.Duration {
	return nextWait(r.every, r.held, time.Now())
}

func nextWait(every time.Duration, held map[string]time.Time, now time.Time) time.Duration {
	d := every
	for _, at := range held {
		d = min(d, max(at.Sub(now), minPacedWait))
	}
	return d
}

func (r *compactionRun) pass(ctx context.Context, topic string) {
	p := r.byTopic[topic]
	if p == nil {
		var err error
		if p, err = r.policies(topic); err != nil {
			r.log.Error("compaction policy", "topic", topic, "err", err)
			r.record(topic, compact.PolicyPass{At: time.Now()}, err)
			return
		}
		r.byTopic[topic] = p
	}
	pass, err := p.Pass(ctx)
	if ctx.Err() != nil {
		return // stopping: the compaction under way is rolled forward by the next start's pass
	}
	if err != nil {
		r.log.Warn("compaction pass failed; rolled forward next interval", "topic", topic, "err", err)
		r.metrics.CompactionFailed(r.name, topic)
	}
	for _, c := range pass.Compacted {
		r.metrics.Compacted(r.name, topic, c.FilesBefore, c.FilesAfter, c.BytesBefore, c.BytesAfter, c.Duration)
	}
	r.metrics.CompactionPaced(r.name, topic, pass.Waiting, pass.NextAllowed)
	if pass.Waiting > 0 {
		r.held[topic] = pass.NextAllowed
	} else {
		delete(r.held, topic)
	}
	r.record(topic, pass, err)
}

func (r *compactionRun) record(topic string, pass compact.PolicyPass, err error) {
	r.status.update(topic, func(st *CompactionStatus) {
		st.At, st.Left, st.Waiting, st.NextAllowed, st.LastError = pass.At.UTC().Format(time.RFC3339), pass.Left, pass.Waiting, "", ""
		if pass.Waiting > 0 {
			st.NextAllowed = pass.NextAllowed.UTC().Format(time.RFC3339)
		}
		if err != nil {
			st.LastError = err.Error()
		}
		st.Removed += pass.Removed
		for _, c := range pass.Compacted {
			st.Compacted++
			st.LastDir, st.LastSeconds = c.Dir, c.Duration.Seconds()
			st.FilesBefore += c.FilesBefore
			st.FilesAfter += c.FilesAfter
			st.BytesBefore += c.BytesBefore
			st.BytesAfter += c.BytesAfter
		}
	})
}

// snapshot is a copy of the status by topic (nil: nothing done here).
func (r *compactionRun) snapshot() map[string]CompactionStatus {
	if r == nil {
		return nil
	}
	return r.status.snapshot()
}

// compactionOf wires a connector's compaction policy; nil when
// hdfs.sink.compaction.enabled is off.
func (d *Daemon) compactionOf(c *configs.Connector, conn *sink.Connector, store storage.FS) (*compactionRun, error) {
	dial, err := d.hiveDialer(c)
	if err != nil {
		return nil, err
	}
	policies, err := wiring.CompactionPolicies(c, store, d.logins, dial, d.log)
	if policies == nil || err != nil {
		return nil, err
	}
	return &compactionRun{name: c.Name, every: c.Compaction.Interval, conn: conn, policies: policies, metrics: d.metrics,
		log: d.log.With("connector", c.Name), byTopic: map[string]*compact.Policy{}, held: map[string]time.Time{}}, nil
}

// redactCompaction hides secrets the last errors may quote.
func redactCompaction(m map[string]CompactionStatus, r *secret.Redactor) map[string]CompactionStatus {
	for t, st := range m {
		st.LastError = r.Text(st.LastError)
		m[t] = st
	}
	return m
}
