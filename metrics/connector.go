package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

// connSources are what is read at scrape time for one connector.
type connSources struct {
	hive func() HiveStats // nil without hive.integration
}

// HiveStats is a connector's metastore work not done yet.
type HiveStats struct {
	Pending  int
	Since    time.Time // the oldest pending work; zero when none
	Failures int64     // rounds that failed since start
}

// Connector is the sink.Observer of connector name.
func (m *Metrics) Connector(name string) sink.Observer { return connObserver{m: m, name: name} }

type connObserver struct {
	m    *Metrics
	name string
}

func (o connObserver) Partition(topic string, partition int32) sink.PartitionObserver {
	k := partKey{o.name, topic, partition}
	p := o.m.newPartition(k)
	o.m.mu.Lock()
	o.m.parts[k] = p
	o.m.mu.Unlock()
	return p
}

func (o connObserver) BadRecord(topic string, _ int32, outcome sink.BadRecordOutcome) {
	o.m.vec.badRecords.WithLabelValues(o.name, topic, outcome.String()).Inc()
}

func (o connObserver) DeadLetterFailed(string, error) {
	o.m.vec.dlqFailures.WithLabelValues(o.name).Inc()
}

func (o connObserver) Tombstone(topic string, _ int32) {
	o.m.vec.tombstones.WithLabelValues(o.name, topic).Inc()
}

// forget removes a released partition and its series, unless a newer
// observer of the same partition has taken its place.
func (m *Metrics) forget(p *Partition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.parts[p.key] != p {
		return
	}
	delete(m.parts, p.key)
	labels := prometheus.Labels{"connector": p.key.connector, "topic": p.key.topic, "partition": strconv.Itoa(int(p.key.partition))}
	for _, v := range m.vec.partitionVecs() {
		v.DeletePartialMatch(labels)
	}
}

// ForgetConnector removes every series of a connector that stopped for
// good (removed by a reload), and the partitions it still had.
func (m *Metrics) ForgetConnector(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.parts {
		if k.connector == name {
			delete(m.parts, k)
		}
	}
	delete(m.conns, name)
	for _, v := range append(append(m.vec.connectorVecs(), m.comp.vecs()...), m.cmp.vecs()...) {
		v.DeletePartialMatch(prometheus.Labels{"connector": name})
	}
}

// ConnectorStates are the states connector_state has a series for: Kafka
// Connect's names.
var ConnectorStates = []string{"UNASSIGNED", "RUNNING", "PAUSED", "RESTARTING", "FAILED", "STOPPED"}

// SetStates makes connector_state scraped from states, which returns
// each connector's state (one of ConnectorStates) by name.
func (m *Metrics) SetStates(states func() map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.states = states
}

// SetDependency records the last health check of a connector's dependency.
func (m *Metrics) SetDependency(name, dependency string, up bool) {
	m.vec.depUp.WithLabelValues(name, dependency).Set(boolValue(up))
}

// Restarting counts a restart by the policy and the wait before it (0 once
// it started).
func (m *Metrics) Restarting(name string, wait time.Duration) {
	if wait > 0 {
		m.vec.restarts.WithLabelValues(name).Inc()
	}
	m.vec.restartBackoff.WithLabelValues(name).Set(wait.Seconds())
}

// SetLogEnds records the log end offsets a health check read, so that lag
// keeps growing while nothing is fetched (paused, broken).
func (m *Metrics) SetLogEnds(name string, ends map[string]map[int32]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, p := range m.parts {
		if off, ok := ends[k.topic][k.partition]; ok && k.connector == name {
			p.setLogEnd(off)
		}
	}
}

// SetHive makes the connector's Hive backlog scraped from stats (nil: none).
func (m *Metrics) SetHive(name string, stats func() HiveStats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conns[name] = &connSources{hive: stats}
}
