package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

// vectors are the series updated as things happen; lag, the age of the
// last commit, Hive and memory are computed at scrape (scrapeCollector).
type vectors struct {
	recordsWritten, recordsCommitted, bytesCommitted, filesCommitted *prometheus.CounterVec
	recoveries, recoveryFailures, breaks, fenced, memRotations       *prometheus.CounterVec
	state                                                            *prometheus.GaugeVec
	broken, openFiles, buffered                                      *prometheus.GaugeVec
	steps                                                            *prometheus.HistogramVec
	badRecords, tombstones                                           *prometheus.CounterVec
	dlqFailures                                                      *prometheus.CounterVec
	depUp                                                            *prometheus.GaugeVec
	restarts                                                         *prometheus.CounterVec
	restartBackoff                                                   *prometheus.GaugeVec
}

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

func gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

// stepBuckets span a local disk's milliseconds to a loaded NameNode's
// seconds: each step is one or a few round trips.
var stepBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

func newVectors() vectors {
	p := partLabels
	return vectors{
		recordsWritten:   counter("records_written_total", "Records appended to temp files (committed or not yet).", p...),
		recordsCommitted: counter("records_committed_total", "Records in files committed to the store.", p...),
		bytesCommitted:   counter("bytes_committed_total", "Bytes of the files committed to the store.", p...),
		filesCommitted:   counter("files_committed_total", "Files committed to the store.", p...),
		recoveries:       counter("partition_recoveries_total", "Recoveries run (at assignment and after failures).", p...),
		recoveryFailures: counter("partition_recovery_failures_total", "Recoveries that failed and will be retried.", p...),
		breaks:           counter("partition_failures_total", "Writes or commits that failed; the partition then waits for recovery.", p...),
		fenced:           counter("partition_fenced_total", "Commits refused because another owner published first (fencing).", p...),
		memRotations:     counter("memory_rotations_total", "Rotations forced early by the memory ceiling.", p...),
		state:            gauge("partition_state", "1 for the state of the write machine the partition is in, 0 for the others.", append(p, "state")...),
		broken:           gauge("partition_broken", "1 while the partition waits for recovery after a failure.", p...),
		openFiles:        gauge("partition_open_files", "Temp files open.", p...),
		buffered:         gauge("partition_buffered_bytes", "Memory the open files hold.", p...),
		steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "commit_step_duration_seconds",
			Help: "Time of each commit step: close (temp files durable), wal_publish (the commit point), rename.", Buckets: stepBuckets},
			[]string{"connector", "topic", "step"}),
		badRecords:     counter("bad_records_total", "Bad records by outcome: dead_lettered, skipped (no DLQ), failed (stopped the connector).", "connector", "topic", "outcome"),
		tombstones:     counter("tombstones_total", "Null values ignored (behavior.on.null.values=ignore).", "connector", "topic"),
		dlqFailures:    counter("dlq_produce_failures_total", "Dead-letter produce attempts Kafka refused (each is retried).", "connector"),
		depUp:          gauge("dependency_up", "1 if the last health check of a connector's dependency (kafka, registry, store) succeeded.", "connector", "dependency"),
		restarts:       counter("connector_restarts_total", "Restarts of failed connectors by the restart policy.", "connector"),
		restartBackoff: gauge("connector_restart_backoff_seconds", "The wait before the next restart of a failed connector; 0 when none is due.", "connector"),
	}
}

func (v vectors) register(reg prometheus.Registerer) {
	reg.MustRegister(v.recordsWritten, v.recordsCommitted, v.bytesCommitted, v.filesCommitted,
		v.recoveries, v.recoveryFailures, v.breaks, v.fenced, v.memRotations, v.state, v.broken, v.openFiles,
		v.buffered, v.steps, v.badRecords, v.tombstones, v.dlqFailures, v.depUp, v.restarts, v.restartBackoff)
}

// partitionVecs are the vectors whose series belong to one partition.
func (v vectors) partitionVecs() []*prometheus.MetricVec {
	return []*prometheus.MetricVec{v.recordsWritten.MetricVec, v.recordsCommitted.MetricVec, v.bytesCommitted.MetricVec,
		v.filesCommitted.MetricVec, v.recoveries.MetricVec, v.recoveryFailures.MetricVec, v.breaks.MetricVec,
		v.fenced.MetricVec, v.memRotations.MetricVec, v.state.MetricVec, v.broken.MetricVec, v.openFiles.MetricVec,
		v.buffered.MetricVec}
}

// connectorVecs are all vectors with a connector label.
func (v vectors) connectorVecs() []*prometheus.MetricVec {
	return append(v.partitionVecs(), v.steps.MetricVec, v.badRecords.MetricVec, v.tombstones.MetricVec,
		v.dlqFailures.MetricVec, v.depUp.MetricVec, v.restarts.MetricVec, v.restartBackoff.MetricVec)
}

// stateCount is how many states the write machine has.
const stateCount = int(sink.FileCommitted) + 1
