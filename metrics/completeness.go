package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// completenessVecs are the series of completeness markers
// (hdfs.sink.completeness.*, docs/design.md §11).
type completenessVecs struct {
	markers  *prometheus.CounterVec
	late     *prometheus.CounterVec
	frontier *prometheus.GaugeVec
}

func newCompletenessVecs() completenessVecs {
	return completenessVecs{
		markers: counter("completeness_markers_total", "Time directories this process marked complete (Hive parameter, then the marker file).", "connector", "topic"),
		late:    counter("late_records_total", "Records written to a time directory their partition had passed by more than the lateness.", "connector"),
		frontier: gauge("completeness_frontier_seconds",
			"Unix time up to which the topic's time directories are complete (every partition passed it plus the lateness), as last judged here.", "connector", "topic"),
	}
}

func (v completenessVecs) vecs() []*prometheus.MetricVec {
	return []*prometheus.MetricVec{v.markers.MetricVec, v.late.MetricVec, v.frontier.MetricVec}
}

// CompletenessMarked counts a directory of topic marked complete.
func (m *Metrics) CompletenessMarked(connector, topic string) {
	m.comp.markers.WithLabelValues(connector, topic).Inc()
}

// LateRecords adds n late records of a connector.
func (m *Metrics) LateRecords(connector string, n int64) {
	if n > 0 {
		m.comp.late.WithLabelValues(connector).Add(float64(n))
	}
}

// SetCompletenessFrontier records how far a topic's directories are complete.
func (m *Metrics) SetCompletenessFrontier(connector, topic string, frontier time.Time) {
	m.comp.frontier.WithLabelValues(connector, topic).Set(float64(frontier.UnixMilli()) / 1000)
}
