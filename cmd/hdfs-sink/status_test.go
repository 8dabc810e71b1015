package main

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
