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

// TestStatusHidesSecrets: a connector error quoting a secret is shown
// hidden in /status.
func TestStatusHidesSecrets(t *testing.T) {
	const secret = "status-secret-7"
	b := newStatusBoard()
	b.redact = conftest.Redactor(t, secret)
	b.set("c", func(cs *connStatus) { cs.state, cs.err = "failed", errors.New("registry said no to svc:"+secret) })
	rec := httptest.NewRecorder()
	b.handler(slog.New(slog.DiscardHandler))(rec, httptest.NewRequest("GET", "/status", nil))
	if strings.Contains(rec.Body.String(), secret) || !strings.Contains(rec.Body.String(), "[hidden]") {
		t.Fatalf("/status: %s", rec.Body.String())
	}
}
