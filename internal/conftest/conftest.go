package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// loadConnector writes a connector file with a local store under dir, the
// settings every test needs and extra (which win), and loads it as the
// daemon does.
func loadConnector(t *testing.T, dir, name string, extra map[string]string) *configs.Connector {
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
	conns, _, err := configs.LoadPath(f)
	if err != nil {
		t.Fatal(err)
	}
	return conns[0]
}
