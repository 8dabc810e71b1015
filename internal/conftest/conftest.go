// Package conftest writes connector files for unit tests and loads them as
// the daemon does: the helpers the tests of the daemon, the wiring and the
// command share.
package conftest

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// Connector writes a connector file with a local store under dir, the
// settings every test needs and extra (which win), and loads it as the
// daemon does.
func Connector(t testing.TB, dir, name string, extra map[string]string) *configs.Connector {
	t.Helper()
	cfg := map[string]string{
		"topics": name, "store.url": "file://" + filepath.Join(dir, name), "flush.size": "10",
		"format.class":                        "io.confluent.connect.hdfs.avro.AvroFormat",
		"value.converter":                     "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url": "http://127.0.0.1:1",
		"bootstrap.servers":                   "127.0.0.1:1",
	}
	maps.Copy(cfg, extra)
	b, err := json.Marshal(map[string]any{"name": name, "config": cfg})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, name+".json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	conns, _, err := configs.Load(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return conns[0]
}

// WriteFiles writes name → content under a new directory.
func WriteFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Redactor knows one secret, as a connector with it would.
func Redactor(t testing.TB, secret string) *secret.Redactor {
	t.Helper()
	c, _, err := configs.Parse("c.json", []byte(`{"name":"c","config":{"topics":"t","store.url":"file:///tmp/x","flush.size":"1",
		"bootstrap.servers":"k:9092","value.converter.schema.registry.url":"http://r:8081",
		"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"svc:`+secret+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return configs.NewRedactor(nil, c)
}

// NoConnectEnv removes every CONNECT_* variable for the rest of the test
// (they would be the worker), and restores them after it.
func NoConnectEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CONNECT_") {
			t.Setenv(k, "") // restored at the end of the test
			os.Unsetenv(k)
		}
	}
}
