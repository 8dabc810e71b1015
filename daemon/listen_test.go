package daemon

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// TestNewAppliesTheBindingRule: a worker's listeners or rest.port, or
// CONNECT_LISTENERS / CONNECT_REST_PORT, that make the API reachable from
// other hosts stop New unless basic auth, read-only mode or
// InsecureListen is given; the error says where the address came from.
func TestNewAppliesTheBindingRule(t *testing.T) {
	const connector = `{"name":"orders","config":{"topics":"orders","store.url":"file:///tmp/hdfs-sink-unused","flush.size":"10",
		"value.converter":"org.apache.kafka.connect.storage.StringConverter","format.class":"io.confluent.connect.hdfs.string.StringFormat"}}`
	dir := conftest.WriteFiles(t, map[string]string{"orders.json": connector, "users": "ops:pw\n",
		"open.properties":      "bootstrap.servers=k:9092\nlisteners=http://0.0.0.0:8083\n",
		"rest-port.properties": "bootstrap.servers=k:9092\nrest.port=8083\n",
		"loopback.properties":  "bootstrap.servers=k:9092\nlisteners=HTTP://127.0.0.1:8083\n"})
	fromWorker := func(w *configs.Worker) (string, string) {
		if w != nil && w.HTTPAddr != "" {
			return w.HTTPAddr, w.HTTPOrigin
		}
		return "127.0.0.1:8083", "the default --listen"
	}
	for _, tt := range []struct {
		name   string
		worker string            // a file of dir; "" the environment
		env    map[string]string // CONNECT_*
		http   HTTPOptions
		want   string // "" accepted
	}{
		{"listeners=http://0.0.0.0:8083", "open.properties", nil, HTTPOptions{},
			"the REST API would listen on 0.0.0.0:8083 (from listeners in worker file " + filepath.Join(dir, "open.properties") + ")"},
		{"rest.port alone", "rest-port.properties", nil, HTTPOptions{},
			"listen on :8083 (from rest.port in worker file " + filepath.Join(dir, "rest-port.properties") + ")"},
		{"CONNECT_LISTENERS", "", map[string]string{"CONNECT_BOOTSTRAP_SERVERS": "k:9092", "CONNECT_LISTENERS": "http://:8083"}, HTTPOptions{},
			"listen on :8083 (from CONNECT_LISTENERS in the environment)"},
		{"CONNECT_REST_PORT", "", map[string]string{"CONNECT_BOOTSTRAP_SERVERS": "k:9092", "CONNECT_REST_PORT": "28083"}, HTTPOptions{},
			"listen on :28083 (from CONNECT_REST_PORT in the environment)"},
		{"loopback listeners", "loopback.properties", nil, HTTPOptions{}, ""},
		{"with basic auth", "open.properties", nil, HTTPOptions{AuthFile: filepath.Join(dir, "users")}, ""},
		{"read-only", "open.properties", nil, HTTPOptions{ReadOnly: true}, ""},
		{"--insecure-listen", "open.properties", nil, HTTPOptions{InsecureListen: true}, ""},
		{"no server", "open.properties", nil, HTTPOptions{Listen: func(*configs.Worker) (string, string) { return "", "--listen" }}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conftest.NoConnectEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			o := Options{Config: filepath.Join(dir, "orders.json"), Logger: slog.New(slog.DiscardHandler), HTTP: tt.http}
			if tt.worker != "" {
				o.Worker = filepath.Join(dir, tt.worker)
			}
			if o.HTTP.Listen == nil {
				o.HTTP.Listen = fromWorker
			}
			_, err := New(o)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v\nwant %q", err, tt.want)
			}
		})
	}
}
