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
	}
}

func (v compactionVecs) vecs() []*prometheus.MetricVec {
	return []*prometheus.MetricVec{v.runs.MetricVec, v.failures.MetricVec, v.filesBefore.MetricVec, v.filesAfter.MetricVec,
		v.bytesBefore.MetricVec, v.bytesAfter.MetricVec, v.duration.MetricVec}
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

// CompactionFailed counts a compaction pass of topic that failed.
func (m *Metrics) CompactionFailed(connector, topic string) {
	m.cmp.failures.WithLabelValues(connector, topic).Inc()
}
