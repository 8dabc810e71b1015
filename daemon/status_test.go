package daemon

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

// brokenWriter is a response whose client has gone away.
type brokenWriter struct{ http.ResponseWriter }

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestStatusLogsUnsentResponse(t *testing.T) {
	var out bytes.Buffer
	h := newStatusBoard().handler(slog.New(slog.NewTextHandler(&out, nil)))
	ok := httptest.NewRecorder()
	h(ok, httptest.NewRequest("GET", "/status", nil))
	if !strings.Contains(ok.Body.String(), `"connectors"`) || out.Len() != 0 {
		t.Fatalf("status body %q, log %q", ok.Body.String(), out.String())
	}
	h(brokenWriter{httptest.NewRecorder()}, httptest.NewRequest("GET", "/status", nil))
	if !strings.Contains(out.String(), "status response not sent") || !strings.Contains(out.String(), "broken pipe") {
		t.Fatalf("unsent response not logged: %q", out.String())
	}
}

// TestStatusShowsBrokenPartitions: an outage of the store is visible in
// GET /status as broken partitions with their error and age, not only in
// the log; the document also carries the goroutine count.
func TestStatusShowsBrokenPartitions(t *testing.T) {
	h := sink.Health{Assigned: 3, Broken: map[string]sink.Problem{
		"orders/1": {Err: "create: NameNode in safe mode", Since: time.Now().Add(-90 * time.Second)},
	}}
	ps := partitionsStatus(h, nil)
	if ps.Assigned != 3 || ps.Broken != 1 || ps.Errors["orders/1"] != "create: NameNode in safe mode" || ps.BrokenSeconds < 89 {
		t.Fatalf("partitionsStatus = %+v", ps)
	}
	rec := httptest.NewRecorder()
	newStatusBoard().handler(slog.New(slog.DiscardHandler))(rec, httptest.NewRequest("GET", "/status", nil))
	if !strings.Contains(rec.Body.String(), `"process":{"goroutines":`) {
		t.Fatalf("status lacks the goroutine count: %s", rec.Body.String())
	}
}

// TestStatusHidesSecrets: an error quoting a secret is shown hidden in
// /status, wherever it comes from: the connector's, a completeness
// pass's, a compaction pass's.
func TestStatusHidesSecrets(t *testing.T) {
	const secret = "status-secret-7"
	quoting := "metastore said no to svc:" + secret
	for _, tt := range []struct {
		name string
		set  func(cs *connStatus)
	}{
		{"connector error", func(cs *connStatus) { cs.state, cs.err = "failed", errors.New(quoting) }},
		{"completeness error", func(cs *connStatus) {
			cs.completeness = &completenessRun{}
			cs.completeness.status.update("t", func(st *CompletenessStatus) { st.Waiting, st.Error = "hour=1", quoting })
		}},
		{"completeness waiting", func(cs *connStatus) {
			cs.completeness = &completenessRun{}
			cs.completeness.status.update("t", func(st *CompletenessStatus) { st.Waiting = quoting })
		}},
		{"compaction error", func(cs *connStatus) {
			cs.compaction = &compactionRun{}
			cs.compaction.status.update("t", func(st *CompactionStatus) { st.LastError = quoting })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newStatusBoard()
			b.redact = conftest.Redactor(t, secret)
			b.set("c", tt.set)
			rec := httptest.NewRecorder()
			b.handler(slog.New(slog.DiscardHandler))(rec, httptest.NewRequest("GET", "/status", nil))
			if strings.Contains(rec.Body.String(), secret) || !strings.Contains(rec.Body.String(), "[hidden]") {
				t.Fatalf("/status: %s", rec.Body.String())
			}
		})
	}
}
