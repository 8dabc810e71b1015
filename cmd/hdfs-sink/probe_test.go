package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// answer is a probe endpoint's answer.
func answer(w http.ResponseWriter, code int, doc any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(doc)
}

// TestHealthCommand: exit 0 and "ready" for 200, exit 1 and the reasons
// for 503, exit 1 when nothing answers.
func TestHealthCommand(t *testing.T) {
	ready := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && !ready {
			answer(w, 503, map[string]any{"status": "not ready", "reasons": []string{"connector a: kafka unreachable"}})
			return
		}
		answer(w, 200, map[string]string{"status": "ready"})
	}))
	addr := strings.TrimPrefix(srv.URL, "http://")
	var out, errb bytes.Buffer
	if code := dispatch([]string{"health", "--addr", addr}, &out, &errb); code != 0 || out.String() != "ready\n" {
		t.Fatalf("ready: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	ready = false
	out.Reset()
	if code := dispatch([]string{"health", "--addr", addr}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "kafka unreachable") {
		t.Fatalf("not ready: exit %d, stderr %q", code, errb.String())
	}
	srv.Close()
	if code := dispatch([]string{"health", "--addr", addr, "--live"}, &out, &errb); code != 1 {
		t.Fatalf("nothing listening: exit %d", code)
	}
}

// TestHealthProbeOverTLS: hdfs-sink health --tls --insecure gets the
// answer of a server that speaks HTTPS only (the daemon's with
// --rest-tls-cert; daemon/rest tests that side); without --tls it fails.
func TestHealthProbeOverTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer(w, 200, map[string]string{"status": "ready"})
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "https://")
	var out, errb bytes.Buffer
	if code := dispatch([]string{"health", "--addr", addr, "--tls", "--insecure"}, &out, &errb); code != 0 {
		t.Fatalf("health over TLS: exit %d, %s", code, errb.String())
	}
	if code := dispatch([]string{"health", "--addr", addr}, &out, &errb); code != 1 {
		t.Fatalf("plain HTTP to the TLS server: exit %d, want 1", code)
	}
}
