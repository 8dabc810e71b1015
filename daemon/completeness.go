package daemon

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hdfs-sink/hdfs-sink/completeness"
	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// completenessRun marks the complete time directories of a connector's
// topics (hdfs.sink.completeness.*): every interval, for each topic whose
// partition 0 the connector owns, one pass of that topic's marker. One
// daemon of the group marks a topic in steady state; during a rebalance
// two may, which marking tolerates (completeness.Marker).
type completenessRun struct {
	name    string
	every   time.Duration
	conn    *sink.Connector
	markers func(topic string) (*completeness.Marker, error)
	metrics *metrics.Metrics
	log     *slog.Logger

	byTopic  map[string]*completeness.Marker // the run goroutine's only
	lateSeen int64                           // LateRecords already added to the metric
	status   topicStatuses[CompletenessStatus]
}

// CompletenessStatus is one topic's completeness as last judged here: the
// REST API's type (daemon/rest/lifecycle.go), so that /status and GET
// /connectors/{name}/lifecycle show the same document.
type CompletenessStatus = rest.CompletenessStatus

func (r *completenessRun) run(ctx context.Context) {
	everyOwnedTopic(ctx, r.conn, func() time.Duration { return r.every }, r.countLate, r.pass, func(_ context.Context, topic string) {
		delete(r.byTopic, topic) // another daemon marks it; a new owner looks back again
		r.status.forget(topic)
	})
}

// countLate adds the records the connector counted late since the last
// round to the metric (the counter is the connector's, for all topics).
func (r *completenessRun) countLate() {
	late := r.conn.Stats.LateRecords.Load()
	r.metrics.LateRecords(r.name, late-r.lateSeen)
	r.lateSeen = late
}

func (r *completenessRun) pass(ctx context.Context, topic string) {
	m := r.byTopic[topic]
	if m == nil {
		var err error
		if m, err = r.markers(topic); err != nil {
			r.log.Error("completeness marker", "topic", topic, "err", err)
			return
		}
		r.byTopic[topic] = m
	}
	pass, err := m.Run(ctx)
	if ctx.Err() != nil {
		return
	}
	var pending *completeness.PendingError
	switch {
	case errors.As(err, &pending):
		r.log.Debug("complete directory waits for a commit's renames", "topic", topic, "err", err)
	case err != nil:
		r.log.Warn("completeness pass failed; retried next interval", "topic", topic, "err", err)
	}
	if len(pass.Verdict.Holding) > 0 {
		r.metrics.SetCompletenessFrontier(r.name, topic, time.UnixMilli(pass.Verdict.Frontier))
	}
	r.record(topic, pass, err)
}

func (r *completenessRun) record(topic string, pass completeness.Pass, err error) {
	r.status.update(topic, func(st *CompletenessStatus) {
		st.At, st.Holding, st.Idle, st.Waiting, st.Error = pass.At.UTC().Format(time.RFC3339), pass.Verdict.Holding, pass.Verdict.Idle, "", ""
		st.Frontier = ""
		if len(pass.Verdict.Holding) > 0 {
			st.Frontier = time.UnixMilli(pass.Verdict.Frontier).UTC().Format(time.RFC3339Nano)
		}
		st.Marked += len(pass.Marked)
		if n := len(pass.Marked); n > 0 {
			st.LastMarked = pass.Marked[n-1]
		}
		if err != nil {
			st.Waiting, st.Error = pass.Blocked, err.Error()
		}
	})
}

// snapshot is a copy of the status by topic (nil: nothing judged here).
func (r *completenessRun) snapshot() map[string]CompletenessStatus {
	if r == nil {
		return nil
	}
	return r.status.snapshot()
}

// completenessOf wires a connector's completeness markers; nil when
// hdfs.sink.completeness.enabled is off.
func (d *Daemon) completenessOf(c *configs.Connector, conn *sink.Connector, store storage.FS) (*completenessRun, error) {
	dial, err := d.hiveDialer(c)
	if err != nil {
		return nil, err
	}
	faults, err := completeness.FaultsFromEnv()
	if err != nil {
		return nil, err
	}
	markers, err := wiring.CompletenessMarkers(c, wiring.MarkerDeps{
		Store: store, LogEnds: conn.LogEnds, DialHive: dial, Log: d.log, Faults: faults,
		Marked: func(topic, _ string) { d.metrics.CompletenessMarked(c.Name, topic) },
	})
	if markers == nil || err != nil {
		return nil, err
	}
	return &completenessRun{name: c.Name, every: c.Completeness.Interval, conn: conn, markers: markers, metrics: d.metrics,
		log: d.log.With("connector", c.Name), byTopic: map[string]*completeness.Marker{}}, nil
}

// redactCompleteness hides secrets the errors may quote (a metastore's
// error can quote its URI).
func redactCompleteness(m map[string]CompletenessStatus, r *secret.Redactor) map[string]CompletenessStatus {
	for t, st := range m {
		st.Waiting, st.Error = r.Text(st.Waiting), r.Text(st.Error)
		m[t] = st
	}
	return m
}
