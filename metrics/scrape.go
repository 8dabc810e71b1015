package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
}

var (
	lagDesc = desc("partition_lag_records",
		"Log end offset minus the offset after the last one committed in HDFS (HDFS is the truth, not the group offset).", partLabels...)
	logEndDesc    = desc("partition_log_end_offset", "The partition's log end offset (high watermark) as last seen.", partLabels...)
	committedDesc = desc("partition_committed_next_offset", "The offset after the last one committed in HDFS.", partLabels...)
	sinceDesc     = desc("partition_seconds_since_commit",
		"Seconds since the partition's last commit in this process, or since it was assigned if none.", partLabels...)
	hivePendingDesc = desc("hive_pending_registrations", "Metastore work (tables, schema changes, partitions) not done yet.", "connector")
	hiveAgeDesc     = desc("hive_pending_oldest_seconds", "Age of the oldest pending metastore work; 0 when none.", "connector")
	hiveErrorsDesc  = desc("hive_metastore_errors_total", "Rounds of metastore work that failed (each is retried).", "connector")
	ceilingDesc     = desc("memory_ceiling_bytes", "The process's memory ceiling: --memory-max-bytes, else the sum of the connectors' hdfs.sink.memory.max.bytes.")
	goLimitDesc     = desc("memory_go_limit_bytes", "The Go soft memory limit set under the ceiling.")
	stateDesc       = desc("connector_state", "1 for the connector's state (UNASSIGNED, RUNNING, PAUSED, RESTARTING, FAILED, STOPPED), 0 for the others.", "connector", "state")
	bufferedDesc    = desc("memory_buffered_bytes", "Memory all open files hold, the part of the ceiling they may use is 5/16.")
)

// scrapeCollector computes at scrape time what changes without an event:
// lag, the age of the last commit, Hive's backlog, memory use.
type scrapeCollector struct{ m *Metrics }

// Describe sends nothing: an unchecked collector, since its series come
// and go with partitions.
func (*scrapeCollector) Describe(chan<- *prometheus.Desc) {}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var buffered int64
	for k, p := range m.parts {
		collectPartition(ch, k, p.snapshot(), p.assigned)
		buffered += p.bufferedBytes.Load()
	}
	for name, src := range m.conns {
		if src.hive != nil {
			collectHive(ch, name, src.hive())
		}
	}
	if m.states != nil {
		collectStates(ch, m.states())
	}
	gaugeOf(ch, bufferedDesc, float64(buffered))
	if ceiling := m.memCeiling.Load(); ceiling > 0 {
		gaugeOf(ch, ceilingDesc, float64(ceiling))
		gaugeOf(ch, goLimitDesc, float64(m.memGoLimit.Load()))
	}
}

func gaugeOf(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func collectPartition(ch chan<- prometheus.Metric, k partKey, v PartitionView, assigned time.Time) {
	lv := []string{k.connector, k.topic, strconv.Itoa(int(k.partition))}
	if lag := v.Lag(); lag >= 0 {
		gaugeOf(ch, lagDesc, float64(lag), lv...)
		gaugeOf(ch, logEndDesc, float64(v.LogEnd), lv...)
	}
	if v.Next >= 0 {
		gaugeOf(ch, committedDesc, float64(v.Next), lv...)
	}
	since := assigned
	if !v.LastCommit.IsZero() {
		since = v.LastCommit
	}
	gaugeOf(ch, sinceDesc, time.Since(since).Seconds(), lv...)
}

func collectHive(ch chan<- prometheus.Metric, name string, h HiveStats) {
	gaugeOf(ch, hivePendingDesc, float64(h.Pending), name)
	age := 0.0
	if h.Pending > 0 && !h.Since.IsZero() {
		age = time.Since(h.Since).Seconds()
	}
	gaugeOf(ch, hiveAgeDesc, age, name)
	ch <- prometheus.MustNewConstMetric(hiveErrorsDesc, prometheus.CounterValue, float64(h.Failures), name)
}

// SetMemory records the process's ceiling and Go limit (0: none).
func (m *Metrics) SetMemory(ceiling, goLimit int64) {
	m.memCeiling.Store(ceiling)
	m.memGoLimit.Store(goLimit)
}

func collectStates(ch chan<- prometheus.Metric, states map[string]string) {
	for name, state := range states {
		for _, s := range ConnectorStates {
			gaugeOf(ch, stateDesc, boolValue(s == state), name, s)
		}
	}
}
