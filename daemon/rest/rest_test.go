package rest

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/metrics"
)

const testSecret = "secret-pw-42"

// fakeAPI serves the API over a fake with two connectors: orders runs,
// clicks has failed on an error that quotes a secret.
func fakeAPI(t *testing.T, o Options) (*fakeConnectors, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	orders := conftest.Connector(t, dir, "orders", map[string]string{"value.converter.basic.auth.user.info": "u:" + testSecret})
	clicks := conftest.Connector(t, dir, "clicks", nil)
	f := &fakeConnectors{
		conns: map[string]Connector{
			"orders": {Config: orders, State: "RUNNING", Partitions: []metrics.PartitionView{
				{Topic: "orders", Partition: 0, State: "WRITING", Next: 5, LogEnd: 9},
				{Topic: "orders-regex-match", Partition: 1, State: "BROKEN", Next: 0, LogEnd: -1, LastError: "registry u:" + testSecret + " refused"},
			}},
			"clicks": {Config: clicks, State: "FAILED", Err: errors.New("registry said no to u:" + testSecret), Restarts: 3, NextRestart: nextRestart()},
		},
		redact: configs.NewRedactor(nil, orders, clicks),
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	srv := httptest.NewServer(New(f, o).Handler())
	t.Cleanup(srv.Close)
	return f, srv
}

// call makes one request and returns the status and the body; a body is
// sent as JSON.
func call(t *testing.T, srv *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return v
}

// TestReadsAgainstAFake: what the API shows of the connectors it is
// given, secrets hidden, in Connect's shapes.
func TestReadsAgainstAFake(t *testing.T) {
	_, srv := fakeAPI(t, Options{Version: "1.2.3", Build: BuildInfo{Version: "v1.2.3", Commit: "abc"}, WorkerID: "h:8083",
		Status: okHandler, Metrics: okHandler})
	for _, tt := range []struct {
		path string
		code int
		want []string // substrings of the body
	}{
		{"/", 200, []string{`"version":"v1.2.3"`, `"commit":"abc"`}},
		{"/connectors", 200, []string{`["clicks","orders"]`}},
		{"/connectors/orders", 200, []string{`"name":"orders"`, `"type":"sink"`, `"tasks":[{"connector":"orders","task":0}]`}},
		{"/connectors/orders/config", 200, []string{`"value.converter.basic.auth.user.info":"` + secret.Hidden + `"`, `"topics":"orders"`}},
		{"/connectors/orders/status", 200, []string{`"state":"RUNNING","worker_id":"h:8083"`, `"committed_offset":4`, `"lag":4`, `"restarts":0`}},
		{"/connectors/clicks/status", 200, []string{`"state":"FAILED"`, `"trace":"registry said no to ` + secret.Hidden + `"`, `"restarts":3`, `"next_restart_seconds":`}},
		{"/connectors/orders/topics", 200, []string{`{"orders":{"topics":["orders","orders-regex-match"]}}`}},
		{"/connectors?expand=status&expand=info", 200, []string{`"clicks":{"info":`, `"status":{"name":"orders"`}},
		{"/connector-plugins", 200, []string{`"class":"io.confluent.connect.hdfs.HdfsSinkConnector","type":"sink","version":"1.2.3"`}},
		{"/connectors/nope", 404, []string{`{"error_code":404,"message":"Connector nope not found"}`}},
		{"/connectors/nope/status", 404, []string{`Connector nope not found`}},
		{"/status", 200, []string{"ok"}},
		{"/metrics", 200, []string{"ok"}},
		{"/healthz", 200, []string{`"status":"alive"`}},
		{"/readyz", 200, []string{`"status":"ready"`}},
	} {
		code, body := call(t, srv, "GET", tt.path, "")
		if code != tt.code {
			t.Errorf("GET %s: %d %s, want %d", tt.path, code, body, tt.code)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: %s\nlacks %s", tt.path, body, w)
			}
		}
		if strings.Contains(body, testSecret) {
			t.Errorf("GET %s shows the secret: %s", tt.path, body)
		}
	}
}

// TestChangesAgainstAFake: what each change asks of the daemon, and how
// its answer (refused, forbidden, gone, failed) becomes Connect's.
func TestChangesAgainstAFake(t *testing.T) {
	for _, tt := range []struct {
		name, method, path string
		failNext           error
		code               int
		calls, body        string
	}{
		{"pause", "PUT", "/connectors/orders/pause", nil, 202, "pause orders", ""},
		{"resume", "PUT", "/connectors/orders/resume", nil, 202, "resume orders", ""},
		{"restart", "POST", "/connectors/orders/restart", nil, 204, "restart orders", ""},
		{"restart a failed one only", "POST", "/connectors/clicks/restart?onlyFailed=true", nil, 202, "restart clicks", `"state":"RESTARTING"`},
		{"onlyFailed leaves a running one", "POST", "/connectors/orders/restart?onlyFailed=true&includeTasks=true", nil, 202, "", `"state":"RUNNING"`},
		{"delete", "DELETE", "/connectors/orders", nil, 204, "delete orders", ""},
		{"delete outside the config dir", "DELETE", "/connectors/orders", &ForbiddenError{errors.New("connector orders comes from /etc/x.json, outside /etc/c")}, 403, "", `"message":"connector orders comes from /etc/x.json, outside /etc/c"`},
		{"deleted meanwhile", "PUT", "/connectors/orders/pause", ErrNotFound, 404, "", `Connector orders not found`},
		{"delete fails", "DELETE", "/connectors/orders", errDisk, 500, "", `no space left on device`},
		{"unknown", "PUT", "/connectors/nope/resume", nil, 404, "", `Connector nope not found`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := fakeAPI(t, Options{})
			f.failNext = tt.failNext
			code, body := call(t, srv, tt.method, tt.path, "")
			if code != tt.code || f.called() != tt.calls || !strings.Contains(body, tt.body) {
				t.Fatalf("%s %s: %d %q, calls %q; want %d %q, calls %q", tt.method, tt.path, code, body, f.called(), tt.code, tt.body, tt.calls)
			}
		})
	}
}

// TestPutConfigAgainstAFake: the body reaches the daemon unread; created
// is 201, changed 200, and refusals keep their status and messages.
func TestPutConfigAgainstAFake(t *testing.T) {
	added := conftest.Connector(t, t.TempDir(), "added", map[string]string{"value.converter.basic.auth.user.info": "u:" + testSecret})
	for _, tt := range []struct {
		name    string
		created bool
		err     error
		code    int
		body    string
	}{
		{"new", true, nil, 201, `"name":"added"`},
		{"changed", false, nil, 200, `"value.converter.basic.auth.user.info":"` + secret.Hidden + `"`},
		{"refused", false, &ConfigError{Messages: []string{"flush.size: not a number", "topics: not set"}}, 400, `"message":"flush.size: not a number\ntopics: not set"`},
		{"not writable", false, &ForbiddenError{errors.New("connector files cannot be changed here")}, 403, `cannot be changed here`},
		{"write fails", false, errDisk, 500, `no space left on device`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := fakeAPI(t, Options{})
			f.put = func(string) (*configs.Connector, bool, error) {
				if tt.err != nil {
					return nil, false, tt.err
				}
				return added, tt.created, nil
			}
			code, body := call(t, srv, "PUT", "/connectors/added/config", `{"flush.size":"3"}`)
			if code != tt.code || !strings.Contains(body, tt.body) || strings.Contains(body, testSecret) {
				t.Fatalf("%d %s, want %d %s", code, body, tt.code, tt.body)
			}
			if f.putBody != `{"flush.size":"3"}` || f.called() != "put added" {
				t.Fatalf("Put read %q (calls %q)", f.putBody, f.called())
			}
		})
	}
}

// TestReadOnlyChangesNothing: with ReadOnly every change is 403 and never
// reaches the daemon; reads still work.
func TestReadOnlyChangesNothing(t *testing.T) {
	f, srv := fakeAPI(t, Options{ReadOnly: true})
	for _, r := range [][2]string{{"PUT", "/connectors/orders/pause"}, {"PUT", "/connectors/orders/resume"}, {"POST", "/connectors/orders/restart"},
		{"PUT", "/connectors/orders/config"}, {"DELETE", "/connectors/orders"}} {
		if code, body := call(t, srv, r[0], r[1], "{}"); code != 403 || !strings.Contains(body, "read-only") {
			t.Errorf("%s %s: %d %s, want 403", r[0], r[1], code, body)
		}
	}
	if code, _ := call(t, srv, "GET", "/connectors/orders", ""); code != 200 || f.called() != "" {
		t.Fatalf("GET: %d; the daemon was asked %q", code, f.called())
	}
}

// TestReadyzSaysWhy: 503 with the daemon's reasons, secrets hidden.
func TestReadyzSaysWhy(t *testing.T) {
	f, srv := fakeAPI(t, Options{})
	f.notReady = []string{"connector clicks is failed: registry said no to u:" + testSecret, "connector orders: kafka unreachable: EOF"}
	code, body := call(t, srv, "GET", "/readyz", "")
	doc := decode[struct {
		Status  string
		Reasons []string
	}](t, body)
	want := "connector clicks is failed: registry said no to " + secret.Hidden
	if code != 503 || doc.Status != "not ready" || len(doc.Reasons) != 2 || doc.Reasons[0] != want {
		t.Fatalf("%d %s", code, body)
	}
}

// TestConfigAsWritten: GET …/config and the config in GET /connectors/<n>
// are the file as written, as Connect returns them: a config provider
// placeholder intact, a literal secret hidden, none of the worker's keys.
func TestConfigAsWritten(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "registry.properties")
	if err := os.WriteFile(secrets, []byte("user.info=svc:"+testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, _, err := configs.WorkerFromEnv([]string{"CONNECT_BOOTSTRAP_SERVERS=kafka:9092",
		"CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL=http://reg:8081",
		"CONNECT_CONFIG_PROVIDERS=file", "CONNECT_CONFIG_PROVIDERS_FILE_CLASS=org.apache.kafka.common.config.provider.FileConfigProvider"})
	if err != nil {
		t.Fatal(err)
	}
	ref := "${file:" + secrets + ":user.info}"
	conns, _, err := configs.ParseFile("orders.json", []byte(`{"name":"orders","config":{"topics":"orders","store.url":"file:///tmp/x","flush.size":"3",
		"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"`+ref+`",
		"consumer.override.sasl.jaas.config":"literal-jaas-`+testSecret+`","consumer.override.security.protocol":"SASL_PLAINTEXT"}}`), w)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeConnectors{conns: map[string]Connector{"orders": {Config: conns[0], State: "RUNNING"}}, redact: configs.NewRedactor(w, conns...)}
	srv := httptest.NewServer(New(f, Options{}).Handler())
	defer srv.Close()
	want := map[string]string{"name": "orders", "topics": "orders", "store.url": "file:///tmp/x", "flush.size": "3",
		"value.converter.basic.auth.credentials.source": "USER_INFO", "value.converter.basic.auth.user.info": ref,
		"consumer.override.sasl.jaas.config": secret.Hidden, "consumer.override.security.protocol": "SASL_PLAINTEXT"}
	_, body := call(t, srv, "GET", "/connectors/orders/config", "")
	if got := decode[map[string]string](t, body); !maps.Equal(got, want) {
		t.Errorf("GET config = %v\nwant %v", got, want)
	}
	_, body = call(t, srv, "GET", "/connectors/orders", "")
	if got := decode[connectorInfo](t, body); !maps.Equal(got.Config, want) {
		t.Errorf("GET connector's config = %v\nwant %v", got.Config, want)
	}
	if strings.Contains(body, testSecret) {
		t.Fatalf("a secret is shown: %s", body)
	}
}
