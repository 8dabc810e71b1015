package daemon

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

// statusBoard collects what `GET /status`, the REST API and /readyz
// report: each connector's state and counters, its restarts, the last
// health check of what it depends on, and the metastore work it has
// pending with its age.
type statusBoard struct {
	mu      sync.Mutex
	conns   map[string]*connStatus
	metrics *metrics.Metrics
	redact  *secret.Redactor // hides secrets an error may quote; replaced on reload
	worker  *configs.Worker  // the worker settings run loaded (nil: none); replaced on reload
}

type connStatus struct {
	state       string // starting, running, restarting, failed, stopped
	err         error
	conn        *sink.Connector
	syncer      *hive.Syncer
	paused      func() bool // whether the running connector stopped fetching; nil: not supervised
	restarts    int
	nextRestart time.Time
	deps        map[string]error // by dependency; absent: not checked yet
	registry    schema.Registry  // nil while not running
	// completeness marks the connector's complete time directories (nil:
	// off, or not running).
	completeness *completenessRun
	// compaction compacts the connector's directories (nil: off, or not
	// running).
	compaction *compactionRun
}

// The dependencies a connector's health check reaches.
const (
	depKafka    = "kafka"
	depRegistry = "registry"
	depStore    = "store"
)

func newStatusBoard() *statusBoard { return &statusBoard{conns: map[string]*connStatus{}} }

// redactor is what hides secrets in what the board shows (nil: by key only).
func (b *statusBoard) redactor() *secret.Redactor {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.redact
}

// setLoaded records what run (or a reload) loaded: the worker settings,
// and the Redactor of their secrets and the connectors'.
func (b *statusBoard) setLoaded(l wiring.Loaded) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.worker, b.redact = l.Worker, l.Redact
}

// loadedWorker is the worker settings a connector config is checked with.
func (b *statusBoard) loadedWorker() *configs.Worker {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.worker
}

// get is a copy of a connector's status (the zero status if unknown).
func (b *statusBoard) get(name string) connStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	if cs := b.conns[name]; cs != nil {
		return *cs
	}
	return connStatus{state: "starting"}
}

// setDep records a health check of one dependency.
func (b *statusBoard) setDep(name, dep string, err error) {
	b.set(name, func(cs *connStatus) {
		if cs.deps == nil {
			cs.deps = map[string]error{}
		}
		cs.deps[dep] = err
	})
	if b.metrics != nil {
		b.metrics.SetDependency(name, dep, err == nil)
	}
}

func (b *statusBoard) remove(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.conns, name)
}

// notReady says why the daemon is not ready: a connector that is not
// running (or paused), or whose last check did not reach a dependency.
func (b *statusBoard) notReady() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for name, cs := range b.conns {
		out = append(out, cs.notReady(name)...)
	}
	sort.Strings(out)
	return out
}

func (cs *connStatus) notReady(name string) []string {
	if cs.state == "stopped" {
		return nil // stopped on purpose (PUT /stop) or at shutdown: nothing of it runs, as for a paused one nothing fetches
	}
	var out []string
	if cs.state != "running" {
		why := fmt.Sprintf("connector %s is %s", name, cs.state)
		if cs.err != nil {
			why += ": " + cs.err.Error()
		}
		out = append(out, why)
	}
	for _, dep := range []string{depKafka, depRegistry, depStore} {
		err, checked := cs.deps[dep]
		switch {
		case !checked && cs.state == "running":
			out = append(out, fmt.Sprintf("connector %s: %s not checked yet", name, dep))
		case err != nil:
			out = append(out, fmt.Sprintf("connector %s: %s unreachable: %v", name, dep, err))
		}
	}
	return out
}

// states is each connector's state as Kafka Connect names it.
func (b *statusBoard) states() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.conns))
	for name, cs := range b.conns {
		paused := cs.paused != nil && cs.paused()
		out[name] = connectState(cs.state, paused)
	}
	return out
}

// restarting is the restart metric of a failed connector: how long it
// waits; 0: not waiting.
func (b *statusBoard) restarting(name string, wait time.Duration) {
	if b.metrics != nil {
		b.metrics.Restarting(name, wait)
	}
}

func (b *statusBoard) set(name string, update func(*connStatus)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cs := b.conns[name]
	if cs == nil {
		cs = &connStatus{state: "starting"}
		b.conns[name] = cs
	}
	update(cs)
}

// unfinished names the connectors that have neither stopped nor failed.
func (b *statusBoard) unfinished() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for name, cs := range b.conns {
		if cs.state != "stopped" && cs.state != "failed" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// connectState maps the board's states to Kafka Connect's.
func connectState(board string, paused bool) string {
	switch board {
	case "running":
		if paused {
			return "PAUSED"
		}
		return "RUNNING"
	case "restarting":
		return "RESTARTING"
	case "failed":
		return "FAILED"
	case "stopped":
		return "STOPPED"
	}
	return "UNASSIGNED"
}

// ConnectorStatus is one connector in the JSON status document.
type ConnectorStatus struct {
	Name       string            `json:"name"`
	State      string            `json:"state"`
	Error      string            `json:"error,omitempty"`
	Counters   map[string]int64  `json:"counters,omitempty"`
	Hive       *HiveStatus       `json:"hive,omitempty"`
	Restarts   int               `json:"restarts,omitempty"`
	Paused     bool              `json:"paused,omitempty"`
	Partitions *PartitionsStatus `json:"partitions,omitempty"`
	// Kafka and Registry are present while the brokers or the schema
	// registry fail: the daemon then waits, and says so here.
	Kafka    *DownStatus `json:"kafka,omitempty"`
	Registry *DownStatus `json:"registry,omitempty"`
	// Completeness is, by topic, how far its time directories are complete,
	// for the topics whose partition 0 this daemon owns
	// (hdfs.sink.completeness.*).
	Completeness map[string]CompletenessStatus `json:"completeness,omitempty"`
	// Compaction is, by topic, what the daemon's compaction policy did,
	// for the topics whose partition 0 this daemon owns
	// (hdfs.sink.compaction.*).
	Compaction map[string]CompactionStatus `json:"compaction,omitempty"`
}

// DownStatus is a dependency that has been failing: the last error and for
// how long.
type DownStatus struct {
	Error          string  `json:"error"`
	FailingSeconds float64 `json:"failing_seconds"`
}

// PartitionsStatus is a connector's partitions: how many it owns, and each
// one that is not writing with the error that stopped it, so an outage of
// the store or the registry is visible here, not only in the log.
type PartitionsStatus struct {
	Assigned int               `json:"assigned"`
	Broken   int               `json:"broken"`
	Errors   map[string]string `json:"errors,omitempty"`
	// BrokenSeconds is how long the longest-broken partition has been down.
	BrokenSeconds float64 `json:"broken_seconds,omitempty"`
}

// ProcessStatus is the process's own resource use, for leak hunting
// without a profiler.
type ProcessStatus struct {
	Goroutines int `json:"goroutines"`
}

// HiveStatus is the metastore work a connector has not done yet.
type HiveStatus struct {
	Pending        int     `json:"pending"`
	PendingSeconds float64 `json:"pending_seconds"`
	LastError      string  `json:"last_error,omitempty"`
}

func (b *statusBoard) snapshot() []ConnectorStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ConnectorStatus, 0, len(b.conns))
	for name, cs := range b.conns {
		st := ConnectorStatus{Name: name, State: cs.state, Restarts: cs.restarts}
		if cs.err != nil {
			st.Error = b.redact.Text(cs.err.Error())
		}
		st.Paused = cs.paused != nil && cs.paused()
		if cs.conn != nil {
			h := cs.conn.Health()
			st.Counters, st.Partitions = counters(&cs.conn.Stats), partitionsStatus(h, b.redact)
			if h.Kafka != nil {
				st.Kafka = &DownStatus{Error: b.redact.Text(h.Kafka.Err), FailingSeconds: time.Since(h.Kafka.Since).Seconds()}
			}
		}
		if r, ok := cs.registry.(*registry.Client); ok {
			if since, err := r.Down(); err != nil {
				st.Registry = &DownStatus{Error: b.redact.Text(err.Error()), FailingSeconds: time.Since(since).Seconds()}
			}
		}
		st.Completeness = redactCompleteness(cs.completeness.snapshot(), b.redact)
		st.Compaction = redactCompaction(cs.compaction.snapshot(), b.redact)
		if cs.syncer != nil {
			st.Hive = hiveStatus(cs.syncer)
			st.Hive.LastError = b.redact.Text(st.Hive.LastError)
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func counters(s *sink.Stats) map[string]int64 {
	return map[string]int64{
		"records": s.Records.Load(), "commits": s.Commits.Load(), "dead_lettered": s.DeadLettered.Load(),
		"nulls_ignored": s.NullsIgnored.Load(), "recoveries": s.Recoveries.Load(), "fenced": s.Fenced.Load(),
		"memory_rotations": s.MemoryRotations.Load(), "peak_buffered_bytes": s.PeakBuffered.Load(), "peak_open_files": s.PeakOpenFiles.Load(),
		"rewinds": s.Rewinds.Load(), "retention_gaps": s.RetentionGaps.Load(), "missing_files": s.MissingFiles.Load(),
		"late_records": s.LateRecords.Load(), "deferred_rotations": s.DeferredRotations.Load(),
	}
}

func partitionsStatus(h sink.Health, redact *secret.Redactor) *PartitionsStatus {
	ps := &PartitionsStatus{Assigned: h.Assigned, Broken: len(h.Broken)}
	if len(h.Broken) > 0 {
		ps.Errors = map[string]string{}
	}
	for tp, pr := range h.Broken {
		ps.Errors[tp] = redact.Text(pr.Err)
		ps.BrokenSeconds = max(ps.BrokenSeconds, time.Since(pr.Since).Seconds())
	}
	return ps
}

func hiveStatus(s *hive.Syncer) *HiveStatus {
	n, since, err := s.Pending()
	h := &HiveStatus{Pending: n}
	if n > 0 && !since.IsZero() {
		h.PendingSeconds = time.Since(since).Seconds()
	}
	if err != nil {
		h.LastError = wiring.Scrub(nil, err.Error())
	}
	return h
}

// hiveStats reads a syncer for the metrics (nil without one).
func hiveStats(s *hive.Syncer) func() metrics.HiveStats {
	if s == nil {
		return nil
	}
	return func() metrics.HiveStats {
		n, since, _ := s.Pending()
		return metrics.HiveStats{Pending: n, Since: since, Failures: s.Failures()}
	}
}

// handler answers GET /status with the status document.
func (b *statusBoard) handler(log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// Only the write can fail (the document is plain data), mostly
		// because the client went away: worth a line, not more.
		doc := map[string]any{"connectors": b.snapshot(), "process": ProcessStatus{Goroutines: runtime.NumGoroutine()}}
		if err := json.NewEncoder(w).Encode(doc); err != nil {
			log.Warn("status response not sent", "remote", r.RemoteAddr, "err", err)
		}
	}
}
