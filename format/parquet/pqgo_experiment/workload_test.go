package pqgo_experiment

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/benchdata"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// workload is a schema and the datums a benchmark cycles through.
type workload struct {
	name   string
	s      *schema.Schema
	datums [][]byte
}

// workloads: bench's 1 KB and 100 B records (internal/benchdata, what
// `bench -full` produces), and format/parquet's BenchmarkWriteFiles
// records (its bench_test.go, copied: 64 datums of about 1 KB).
func workloads(tb testing.TB) []workload {
	tb.Helper()
	var out []workload
	for _, size := range []string{"1KB", "100B"} {
		pool, text, err := benchdata.Pool(size)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, workload{name: "bench" + size, s: mustSchema(tb, text), datums: pool})
	}
	s := mustSchema(tb, writeFilesSchema)
	datums := make([][]byte, 64)
	for i := range datums {
		datums[i] = writeFilesDatum(tb, s, i)
	}
	return append(out, workload{name: "writefiles", s: s, datums: datums})
}

func mustSchema(tb testing.TB, text string) *schema.Schema {
	tb.Helper()
	s, err := schema.New(7, text)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// writeFilesSchema and writeFilesDatum are format/parquet's benchSchema
// and benchDatum (bench_test.go there).
const writeFilesSchema = `{"type":"record","name":"Event","fields":[
 {"name":"id","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"user","type":"string"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"note","type":["null","string"]},
 {"name":"payload","type":"string"}]}`

func writeFilesDatum(tb testing.TB, s *schema.Schema, i int) []byte {
	tb.Helper()
	amount, _ := new(big.Rat).SetString("1234.56")
	datum, err := s.Codec.BinaryFromNative(nil, map[string]any{
		"id": int64(i), "ts": time.UnixMilli(1_700_000_000_000 + int64(i)), "user": "user-" + strings.Repeat("x", i%7),
		"amount": amount, "tags": []any{"a", "bb"}, "note": map[string]any{"string": "n"},
		"payload": strings.Repeat("lorem ipsum ", 80) + string(rune('a'+i%26)),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return datum
}
