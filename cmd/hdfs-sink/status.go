package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

// statusBoard collects what `GET /status` reports: each connector's state
// and counters, and the metastore work it has pending with its age.
type statusBoard struct {
	mu    sync.Mutex
	conns map[string]*connStatus
}

type connStatus struct {
	state    string // starting, running, failed, stopped
	err      error
	conn     *sink.Connector
	syncer   *hive.Syncer
	registry schema.Registry
}

// downReporter is a dependency client that knows whether its calls fail
// (registry.Client).
type downReporter interface {
	Down() (since time.Time, err error)
}

func newStatusBoard() *statusBoard { return &statusBoard{conns: map[string]*connStatus{}} }

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

// ConnectorStatus is one connector in the JSON status document.
type ConnectorStatus struct {
	Name       string            `json:"name"`
	State      string            `json:"state"`
	Error      string            `json:"error,omitempty"`
	Counters   map[string]int64  `json:"counters,omitempty"`
	Partitions *PartitionsStatus `json:"partitions,omitempty"`
	Hive       *HiveStatus       `json:"hive,omitempty"`
	// Kafka and Registry are present while the brokers or the schema
	// registry fail: the daemon then waits, and says so here.
	Kafka    *DownStatus `json:"kafka,omitempty"`
	Registry *DownStatus `json:"registry,omitempty"`
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
		st := ConnectorStatus{Name: name, State: cs.state}
		if cs.err != nil {
			st.Error = cs.err.Error()
		}
		if cs.conn != nil {
			h := cs.conn.Health()
			st.Counters, st.Partitions = counters(&cs.conn.Stats), partitionsStatus(h)
			if h.Kafka != nil {
				st.Kafka = &DownStatus{Error: h.Kafka.Err, FailingSeconds: time.Since(h.Kafka.Since).Seconds()}
			}
		}
		if r, ok := cs.registry.(downReporter); ok {
			if since, err := r.Down(); err != nil {
				st.Registry = &DownStatus{Error: err.Error(), FailingSeconds: time.Since(since).Seconds()}
			}
		}
		if cs.syncer != nil {
			st.Hive = hiveStatus(cs.syncer)
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
	}
}

func partitionsStatus(h sink.Health) *PartitionsStatus {
	ps := &PartitionsStatus{Assigned: h.Assigned, Broken: len(h.Broken)}
	if len(h.Broken) > 0 {
		ps.Errors = map[string]string{}
	}
	for tp, pr := range h.Broken {
		ps.Errors[tp] = pr.Err
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
		h.LastError = err.Error()
	}
	return h
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

// serve answers GET /status on addr until ctx ends.
func (b *statusBoard) serve(ctx context.Context, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /status", b.handler(log))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.Info("status endpoint", "url", "http://"+ln.Addr().String()+"/status")
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("status endpoint stopped", "err", err)
		}
	}()
	return nil
}
