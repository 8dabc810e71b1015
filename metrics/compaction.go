package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// compactionVecs are the series of the daemon's compaction policy
// (hdfs.sink.compaction.*, docs/design.md §12).
type compactionVecs struct {
	runs, failures          *prometheus.CounterVec
	filesBefore, filesAfter *prometheus.CounterVec
	bytesBefore, bytesAfter *prometheus.CounterVec
	duration                *prometheus.HistogramVec
	waiting, nextAllowed    *prometheus.GaugeVec
}

// compactionBuckets span a small directory's seconds to a block-sized
// merge's minutes.
var compactionBuckets = []float64{.1, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

func newCompactionVecs() compactionVecs {
	ct := []string{"connector", "topic"}
	return compactionVecs{
		runs:        counter("compaction_runs_total", "Directories this process compacted (readers switched to the merged files).", ct...),
		failures:    counter("compaction_failures_total", "Compaction passes that stopped on an error (retried next interval).", ct...),
		filesBefore: counter("compaction_files_before_total", "Committed files of the directories compacted, before.", ct...),
		filesAfter:  counter("compaction_files_after_total", "Committed files of the directories compacted, after.", ct...),
		bytesBefore: counter("compaction_bytes_before_total", "Bytes of the directories compacted, before.", ct...),
		bytesAfter:  counter("compaction_bytes_after_total", "Bytes of the directories compacted, after.", ct...),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "compaction_duration_seconds",
			Help: "Time of each directory's compaction, from its plan to the switch.", Buckets: compactionBuckets}, ct),
		waiting: gauge("compaction_waiting_dirs", "Directories the last compaction pass chose but held for hdfs.sink.compaction.pace.ms.", ct...),
		nextAllowed: gauge("compaction_next_allowed_timestamp_seconds",
			"When the pace lets the next compaction of the topic begin (Unix seconds); 0 when none is held.", ct...),
	}
}

func (v compactionVecs) vecs() []*prometheus.MetricVec {
	return []*prometheus.MetricVec{v.runs.MetricVec, v.failures.MetricVec, v.filesBefore.MetricVec, v.filesAfter.MetricVec,
		v.bytesBefore.MetricVec, v.bytesAfter.MetricVec, v.duration.MetricVec, v.waiting.MetricVec, v.nextAllowed.MetricVec}
}

// Compacted counts a directory of topic compacted.
func (m *Metrics) Compacted(connector, topic string, filesBefore, filesAfter int, bytesBefore, bytesAfter int64, took time.Duration) {
	m.cmp.runs.WithLabelValues(connector, topic).Inc()
	m.cmp.filesBefore.WithLabelValues(connector, topic).Add(float64(filesBefore))
	m.cmp.filesAfter.WithLabelValues(connector, topic).Add(float64(filesAfter))
	m.cmp.bytesBefore.WithLabelValues(connector, topic).Add(float64(bytesBefore))
	m.cmp.bytesAfter.WithLabelValues(connector, topic).Add(float64(bytesAfter))
	m.cmp.duration.WithLabelValues(connector, topic).Observe(took.Seconds())
}

// CompactionPaced is what the last pass of topic held for the pace: how
// many directories, and when the first may begin (zero: none held).
func (m *Metrics) CompactionPaced(connector, topic string, waiting int, next time.Time) {
	m.cmp.waiting.WithLabelValues(connector, topic).Set(float64(waiting))
	at := 0.0
	if !next.IsZero() {
		at = float64(next.UnixMilli()) / 1000
	}
	m.cmp.nextAllowed.WithLabelValues(connector, topic).Set(at)
}

// CompactionFailed counts a compaction pass of topic that failed.
func (m *Metrics) CompactionFailed(connector, topic string) {
	m.cmp.failures.WithLabelValues(connector, topic).Inc()
}
