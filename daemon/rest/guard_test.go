package rest

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// TestBrowserGuards: a changing request a web page could forge is refused
// (a foreign Origin or Host: 403; a body that is not JSON: 415) before it
// reaches the daemon; what Connect's clients send passes, and reads pass
// whatever they carry.
func TestBrowserGuards(t *testing.T) {
	f, _ := fakeAPI(t, Options{})
	f.put = func(string) (*configs.Connector, bool, error) { return f.conns["orders"].Config, false, nil }
	api := New(f, Options{Log: slog.New(slog.DiscardHandler)})
	api.hosts = newHostRule("sink-host.example:8083", []string{"hdfs-sink.kafka.svc", "*.svc.cluster.local", ".Corp.Example."})
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	own := srv.URL // http://127.0.0.1:port
	const json = "application/json"
	for _, tt := range []struct {
		name, method, path, host, origin, contentType, body string
		want                                                int
	}{
		{"curl restart: no Origin, no body", "POST", "/connectors/orders/restart", "", "", "", "", 204},
		{"curl pause", "PUT", "/connectors/orders/pause", "", "", "", "", 202},
		{"config as JSON", "PUT", "/connectors/orders/config", "", "", json, `{"topics":"orders"}`, 200},
		{"config as JSON with a charset", "PUT", "/connectors/orders/config", "", "", "application/json; charset=utf-8", `{"topics":"orders"}`, 200},
		{"the server's own Origin", "POST", "/connectors/orders/restart", "", own, "", "", 204},
		{"another site's Origin", "POST", "/connectors/orders/restart", "", "http://evil.example", "", "", 403},
		{"another port's Origin", "POST", "/connectors/orders/restart", "", "http://127.0.0.1:1", "", "", 403},
		{"Origin null", "DELETE", "/connectors/orders", "", "null", "", "", 403},
		{"cross-site JSON", "PUT", "/connectors/orders/config", "", "https://evil.example", json, `{}`, 403},
		{"a form post", "POST", "/connectors/orders/restart", "", "", "application/x-www-form-urlencoded", "a=b", 415},
		{"text/plain config", "PUT", "/connectors/orders/config", "", "", "text/plain", `{"topics":"orders"}`, 415},
		{"a body without Content-Type", "PUT", "/connectors/orders/config", "", "", "", `{"topics":"orders"}`, 415},
		{"a malformed Content-Type", "PUT", "/connectors/orders/config", "", "", "application/json; =", `{}`, 415},
		{"rebinding: a foreign name", "PUT", "/connectors/orders/pause", "attacker.example:8083", "", "", "", 403},
		{"rebinding: a foreign name and its Origin", "POST", "/connectors/orders/restart", "attacker.example:8083", "http://attacker.example:8083", "", "", 403},
		{"localhost with another port", "PUT", "/connectors/orders/pause", "localhost:18083", "", "", "", 202},
		{"localhost, its own Origin, default port", "PUT", "/connectors/orders/pause", "localhost", "http://localhost:80", "", "", 202},
		{"IPv6 loopback", "PUT", "/connectors/orders/pause", "[::1]:8083", "", "", "", 202},
		{"a pod IP", "PUT", "/connectors/orders/pause", "10.244.1.7:8083", "", "", "", 202},
		{"the listen address's name", "PUT", "/connectors/orders/pause", "SINK-HOST.example:8083", "", "", "", 202},
		{"an allowed Service name", "PUT", "/connectors/orders/pause", "hdfs-sink.kafka.svc:8083", "", "", "", 202},
		{"under an allowed domain", "PUT", "/connectors/orders/pause", "hdfs-sink-0.hdfs-sink.kafka.svc.cluster.local:8083", "", "", "", 202},
		{"under an allowed domain, written with dots", "PUT", "/connectors/orders/pause", "sink.corp.example.", "", "", "", 202},
		{"the domain is not under itself", "PUT", "/connectors/orders/pause", "svc.cluster.local:8083", "", "", "", 403},
		{"a look-alike suffix", "PUT", "/connectors/orders/pause", "evil-corp.example:8083", "", "", "", 403},
		{"a read with a foreign Origin and Host", "GET", "/connectors/orders/status", "attacker.example", "http://attacker.example", "text/plain", "", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.mu.Lock()
			f.calls = nil
			f.mu.Unlock()
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("%s %s: %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
			}
			if refused := tt.want == 403 || tt.want == 415; refused && f.called() != "" {
				t.Fatalf("a refused request reached the daemon: %s", f.called())
			}
		})
	}
}

// TestGuardsComeBeforeAuthentication: a forged request gets 403 without a
// WWW-Authenticate challenge (a browser would show a password dialog on
// the attacker's behalf); a request without credentials gets 401.
func TestGuardsComeBeforeAuthentication(t *testing.T) {
	u := users{"ops": [32]byte{}}
	srv := httptest.NewServer(New(&fakeConnectors{}, Options{}).routes(access{users: u}))
	defer srv.Close()
	for _, tt := range []struct {
		origin string
		want   int
	}{{"http://evil.example", 403}, {"", 401}} {
		req, _ := http.NewRequest("POST", srv.URL+"/connectors/orders/restart", nil)
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want || (tt.want == 403) != (resp.Header.Get("WWW-Authenticate") == "") {
			t.Errorf("Origin %q: %d, WWW-Authenticate %q; want %d", tt.origin, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tt.want)
		}
	}
}
