package wiring

import (
	"log/slog"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestCompactionPolicyMemoryBound: within a connector's compaction share
// (a quarter of hdfs.sink.memory.max.bytes) a Parquet merge holds two
// inputs (one read ahead) and a row group, so an input may be a sixteenth
// of the ceiling; a larger one leaves its directory.
func TestCompactionPolicyMemoryBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		memory string
		want   int64
	}{
		{"default ceiling (256 MiB)", "", 16 << 20},
		{"1 GiB", "1073741824", 64 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]string{
				"format.class":     "io.confluent.connect.hdfs.parquet.ParquetFormat",
				"hive.integration": "true", "hive.metastore.uris": "thrift://127.0.0.1:1", "schema.compatibility": "BACKWARD",
				"hdfs.sink.compaction.enabled": "true",
			}
			if tc.memory != "" {
				extra["hdfs.sink.memory.max.bytes"] = tc.memory
			}
			c := conftest.Connector(t, t.TempDir(), "orders", extra)
			policies, err := CompactionPolicies(c, storagetest.NewMemFS(), nil, nil, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			p, err := policies("orders")
			if err != nil {
				t.Fatal(err)
			}
			if p.MaxInputBytes != tc.want {
				t.Fatalf("MaxInputBytes = %d, want %d (hdfs.sink.memory.max.bytes / 16)", p.MaxInputBytes, tc.want)
			}
		})
	}
}
