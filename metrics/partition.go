package metrics

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

type partKey struct {
	connector, topic string
	partition        int32
}

// Partition is the observer of one owned partition: its series, resolved
// once at assignment so the hot path (a state entry per batch) sets a
// gauge without a label lookup, and what the status document shows.
type Partition struct {
	owner  *Metrics
	key    partKey
	states [stateCount]prometheus.Gauge
	steps  [3]prometheus.Observer
	c      partCounters

	assigned      time.Time
	bufferedBytes atomic.Int64

	mu     sync.Mutex
	view   PartitionView
	broken bool
}

type partCounters struct {
	written, records, bytes, files, recoveries, recoveryFailures, breaks, fenced, memRotations prometheus.Counter
	broken, openFiles, buffered                                                                prometheus.Gauge
}

// PartitionView is one owned partition as GET /connectors/<n>/status shows it.
type PartitionView struct {
	Topic      string
	Partition  int32
	State      string // the state machine's, or BROKEN while it waits for recovery
	Next       int64  // the offset after the last one committed in HDFS; -1: none
	LogEnd     int64  // -1: unknown
	LastCommit time.Time
	LastError  string
}

// Lag is the records in Kafka not yet committed in HDFS; -1 when the log
// end is unknown. With nothing committed it counts from offset 0.
func (v PartitionView) Lag() int64 {
	if v.LogEnd < 0 {
		return -1
	}
	return max(v.LogEnd-max(v.Next, 0), 0)
}

func (m *Metrics) newPartition(k partKey) *Partition {
	lv := []string{k.connector, k.topic, strconv.Itoa(int(k.partition))}
	v := m.vec
	p := &Partition{owner: m, key: k, assigned: time.Now(), view: PartitionView{Topic: k.topic, Partition: k.partition, Next: -1, LogEnd: -1}}
	for s := range p.states {
		p.states[s] = v.state.WithLabelValues(append(lv, sink.State(s).String())...)
	}
	for s := range p.steps {
		p.steps[s] = v.steps.WithLabelValues(k.connector, k.topic, sink.CommitStep(s).String())
	}
	p.c = partCounters{
		written: v.recordsWritten.WithLabelValues(lv...), records: v.recordsCommitted.WithLabelValues(lv...),
		bytes: v.bytesCommitted.WithLabelValues(lv...), files: v.filesCommitted.WithLabelValues(lv...),
		recoveries: v.recoveries.WithLabelValues(lv...), recoveryFailures: v.recoveryFailures.WithLabelValues(lv...),
		breaks: v.breaks.WithLabelValues(lv...), fenced: v.fenced.WithLabelValues(lv...),
		memRotations: v.memRotations.WithLabelValues(lv...), broken: v.broken.WithLabelValues(lv...),
		openFiles: v.openFiles.WithLabelValues(lv...), buffered: v.buffered.WithLabelValues(lv...),
	}
	return p
}

var _ sink.PartitionObserver = (*Partition)(nil)

// Entered moves the state gauge.
func (p *Partition) Entered(s sink.State) {
	p.mu.Lock()
	prev := p.view.State
	p.view.State = s.String()
	p.mu.Unlock()
	if prev != s.String() {
		for i, g := range p.states {
			g.Set(boolValue(i == int(s)))
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Written counts records appended.
func (p *Partition) Written(n int) { p.c.written.Add(float64(n)) }

// LogEnd notes the high watermark a fetch saw.
func (p *Partition) LogEnd(off int64) { p.setLogEnd(off) }

func (p *Partition) setLogEnd(off int64) {
	p.mu.Lock()
	p.view.LogEnd = max(p.view.LogEnd, off)
	p.mu.Unlock()
}

// CommitStep observes one step's latency.
func (p *Partition) CommitStep(s sink.CommitStep, d time.Duration) { p.steps[s].Observe(d.Seconds()) }

// Committed counts a commit and moves the committed offset.
func (p *Partition) Committed(c sink.Commit) {
	p.c.records.Add(float64(c.Records))
	p.c.bytes.Add(float64(c.Bytes))
	p.c.files.Add(float64(c.Files))
	p.mu.Lock()
	p.view.Next, p.view.LastCommit = c.Next, c.At
	p.mu.Unlock()
}

// Recovered counts a recovery; a successful one clears the error.
func (p *Partition) Recovered(next int64, err error) {
	p.c.recoveries.Inc()
	if err != nil {
		p.c.recoveryFailures.Inc()
		p.setError(err)
		return
	}
	p.c.broken.Set(0)
	p.mu.Lock()
	p.view.LastError, p.broken = "", false
	if next >= 0 {
		p.view.Next = next
	}
	p.mu.Unlock()
}

// Broken marks the partition waiting for recovery.
func (p *Partition) Broken(err error) {
	p.c.breaks.Inc()
	p.c.broken.Set(1)
	p.mu.Lock()
	p.broken = true
	p.mu.Unlock()
	p.setError(err)
}

func (p *Partition) setError(err error) {
	p.mu.Lock()
	p.view.LastError = err.Error()
	p.mu.Unlock()
}

// Fenced counts a commit another owner refused.
func (p *Partition) Fenced() { p.c.fenced.Inc() }

// MemoryRotation counts a rotation the ceiling forced.
func (p *Partition) MemoryRotation() { p.c.memRotations.Inc() }

// Buffered sets the open files' gauges.
func (p *Partition) Buffered(bytes int64, files int) {
	p.bufferedBytes.Store(bytes)
	p.c.buffered.Set(float64(bytes))
	p.c.openFiles.Set(float64(files))
}

// Released removes the partition's series: a revoked partition must not
// look stuck on a process that no longer owns it.
func (p *Partition) Released() { p.owner.forget(p) }

func (p *Partition) snapshot() PartitionView {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.view
	if p.broken {
		v.State = "BROKEN"
	}
	return v
}

// Partitions lists what connector owns now, by topic and partition.
func (m *Metrics) Partitions(connector string) []PartitionView {
	m.mu.Lock()
	var out []PartitionView
	for k, p := range m.parts {
		if k.connector == connector {
			out = append(out, p.snapshot())
		}
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}
