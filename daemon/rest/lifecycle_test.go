package rest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// lifecycleConnectors are the connectors of the lifecycle table: orders
// marks and compacts (its statuses quote a secret), clicks does neither.
func lifecycleConnectors(t *testing.T) *fakeConnectors {
	t.Helper()
	dir := t.TempDir()
	orders := conftest.Connector(t, dir, "orders", map[string]string{
		"value.converter.basic.auth.user.info": "u:" + testSecret,
		"partitioner.class":                    "io.confluent.connect.storage.partitioner.HourlyPartitioner",
		"locale":                               "en", "timezone": "UTC",
		"hive.integration": "true", "hive.metastore.uris": "thrift://127.0.0.1:1", "schema.compatibility": "BACKWARD",
		"hdfs.sink.completeness.enabled": "true", "hdfs.sink.completeness.lateness.ms": "600000",
		"hdfs.sink.completeness.marker.name": "_DONE",
		"hdfs.sink.compaction.enabled":       "true",
		"hdfs.sink.compaction.pace.ms":       "90000",
	})
	clicks := conftest.Connector(t, dir, "clicks", nil)
	return &fakeConnectors{
		conns: map[string]Connector{
			"orders": {Config: orders, State: "RUNNING",
				Completeness: map[string]CompletenessStatus{"orders": {
					Frontier: "2026-12-02T14:00:00Z", Holding: []int32{2}, Idle: []int32{0, 1}, Marked: 3,
					LastMarked: "year=2026/month=12/day=02/hour=13", Waiting: "year=2026/month=12/day=02/hour=14",
					Error: "metastore thrift://u:" + testSecret + "@hms refused", At: "2026-12-02T14:10:00Z"}},
				Compaction: map[string]CompactionStatus{"orders": {
					At: "2026-12-02T14:05:00Z", Compacted: 2, LastDir: "year=2026/month=12/day=02/hour=12",
					FilesBefore: 400, FilesAfter: 2, BytesBefore: 4 << 20, BytesAfter: 4 << 20, Removed: 200, Left: 5,
					Waiting: 3, NextAllowed: "2026-12-02T14:06:00Z",
					LastError: "fence orders partition 0: store said u:" + testSecret}}},
			"clicks": {Config: clicks, State: "PAUSED"},
		},
		redact: configs.NewRedactor(nil, orders, clicks),
	}
}

// TestLifecycleView: GET /connectors/{name}/lifecycle shows, per
// connector, the completeness and compaction settings a sensor needs and
// the statuses by topic, secrets hidden; a connector with neither says so
// with empty topic maps; the route is read-only and Connect's other
// answers keep their shapes.
func TestLifecycleView(t *testing.T) {
	for _, tt := range []struct {
		name, method, path string
		code               int
		want, lacks        []string
	}{
		{name: "both on, statuses by topic", method: "GET", path: "/connectors/orders/lifecycle", code: 200, want: []string{
			`"name":"orders"`, `"worker_id":"h:8083"`, `"state":"RUNNING"`,
			`"completeness":{"enabled":true,"marker":"_DONE","lateness_ms":600000,"topics":{"orders":{`,
			`"frontier":"2026-12-02T14:00:00Z","holding":[2],"idle":[0,1],"marked":3,"last_marked":"year=2026/month=12/day=02/hour=13"`,
			`"waiting":"year=2026/month=12/day=02/hour=14"`,
			`"compaction":{"enabled":true,"pace_ms":90000,"topics":{"orders":{"at":"2026-12-02T14:05:00Z","compacted":2,"last":"year=2026/month=12/day=02/hour=12","files_before":400,"files_after":2`,
			`"inputs_removed":200,"left":5,"waiting":3,"next_allowed":"2026-12-02T14:06:00Z"`, `"last_error":"fence orders partition 0: store said ` + secret.Hidden + `"`,
			`"error":"metastore thrift://` + secret.Hidden + `@hms refused"`,
		}},
		{name: "both off, empty topics", method: "GET", path: "/connectors/clicks/lifecycle", code: 200, want: []string{
			`"state":"PAUSED"`, `"completeness":{"enabled":false,"lateness_ms":0,"topics":{}}`, `"compaction":{"enabled":false,"pace_ms":0,"topics":{}}`,
		}, lacks: []string{`"marker"`}},
		{name: "unknown connector", method: "GET", path: "/connectors/nope/lifecycle", code: 404, want: []string{`Connector nope not found`}},
		{name: "read-only: no PUT", method: "PUT", path: "/connectors/orders/lifecycle", code: 405},
		{name: "read-only: no POST", method: "POST", path: "/connectors/orders/lifecycle", code: 405},
		{name: "Connect's status keeps its shape", method: "GET", path: "/connectors/orders/status", code: 200,
			want: []string{`"connector":{"state":"RUNNING"`}, lacks: []string{`"completeness"`, `"compaction"`, `"frontier"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(New(lifecycleConnectors(t), Options{WorkerID: "h:8083"}).Handler())
			defer srv.Close()
			code, body := call(t, srv, tt.method, tt.path, "")
			if code != tt.code {
				t.Fatalf("%s %s: %d %s, want %d", tt.method, tt.path, code, body, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("%s %s: %s\nlacks %s", tt.method, tt.path, body, w)
				}
			}
			for _, l := range tt.lacks {
				if strings.Contains(body, l) {
					t.Errorf("%s %s: %s\nholds %s", tt.method, tt.path, body, l)
				}
			}
			if strings.Contains(body, testSecret) {
				t.Errorf("%s %s shows the secret: %s", tt.method, tt.path, body)
			}
		})
	}
}

// TestLifecycleWantsCredentials: the view is behind the API's
// authentication like every route but the probes.
func TestLifecycleWantsCredentials(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(file, []byte("ops:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := loadUsers(file)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(lifecycleConnectors(t), Options{}).routes(access{users: u}))
	defer srv.Close()
	for _, tt := range []struct {
		name, user, pass string
		code             int
	}{
		{"no credentials", "", "", 401},
		{"wrong password", "ops", "wrong", 401},
		{"credentials", "ops", "s3cret", 200},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/connectors/orders/lifecycle", nil)
		if tt.user != "" {
			req.SetBasicAuth(tt.user, tt.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, resp.StatusCode, tt.code)
		}
	}
}
