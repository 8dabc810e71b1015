package parquet

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/benchdata"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

const benchSchema = `{"type":"record","name":"Event","fields":[
 {"name":"id","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"user","type":"string"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"note","type":["null","string"]},
 {"name":"payload","type":"string"}]}`

// benchDatum is a record of about 1 KB (mostly payload text).
func benchDatum(tb testing.TB, s *schema.Schema, i int) []byte {
	tb.Helper()
	datum, err := s.Codec.BinaryFromNative(nil, map[string]any{
		"id": int64(i), "ts": time.UnixMilli(1_700_000_000_000 + int64(i)), "user": "user-" + strings.Repeat("x", i%7),
		"amount": rat("1234.56"), "tags": []any{"a", "bb"}, "note": map[string]any{"string": "n"},
		"payload": strings.Repeat("lorem ipsum ", 80) + string(rune('a'+i%26)),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return datum
}

func BenchmarkWrite1KB(b *testing.B) {
	s := mustSchema(b, benchSchema)
	datums := make([][]byte, 64)
	for i := range datums {
		datums[i] = benchDatum(b, s, i)
	}
	b.SetBytes(int64(len(datums[0])))
	w, err := NewWriter(io.Discard, s, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := w.WriteDatum(datums[i%len(datums)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenWriters500 opens 500 writers, writes 100 records of 1 KB to
// each, and reports their total BytesBuffered next to the Go heap growth
// (after GC) that the same writers cause, to show the count is honest:
// "staged" with the rows in the builders, "encoding" with 64 KiB batches
// (RowGroupBytes 256 KiB), so that each writer has encoded some of its
// rows into an open row group and staged the rest.
func BenchmarkOpenWriters500(b *testing.B) {
	for _, c := range []struct {
		name string
		opts Options
	}{{"staged", Options{}}, {"encoding", Options{RowGroupBytes: 256 << 10}}} {
		b.Run(c.name, func(b *testing.B) { openWriters(b, c.opts) })
	}
}

func openWriters(b *testing.B, opts Options) {
	const writers, records = 500, 100
	s := mustSchema(b, benchSchema)
	datum := benchDatum(b, s, 1)
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ws := make([]*Writer, writers)
		encoded := 0
		for i := range ws {
			w, err := NewWriter(io.Discard, s, opts)
			if err != nil {
				b.Fatal(err)
			}
			for range records {
				if err := w.WriteDatum(datum); err != nil {
					b.Fatal(err)
				}
			}
			encoded += w.rgRows
			ws[i] = w
		}
		total := 0
		for _, w := range ws {
			total += w.BytesBuffered()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(total)/(1<<20), "MiB-buffered")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-heap")
		b.ReportMetric(float64(encoded)/writers, "rows-encoded/writer")
		for _, w := range ws {
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
		runtime.KeepAlive(ws)
	}
}

// BenchmarkWriteFiles is the sink's Parquet case: each file a new writer
// that takes fileRows records of about 1 KB and is closed, as a partition
// under the memory ceiling rotates them (bench's 1KB×8p×parquet files hold
// about 14,000 records, one row group each). One op is one record;
// cpu-ns/op is the process's CPU time (the GC's and the kernel's page
// faults included), the figure to compare on a shared machine.
func BenchmarkWriteFiles(b *testing.B) {
	s := mustSchema(b, benchSchema)
	datums := make([][]byte, 64)
	for i := range datums {
		datums[i] = benchDatum(b, s, i)
	}
	writeFiles(b, s, datums, 14000)
}

// BenchmarkWriteBenchFiles is BenchmarkWriteFiles on tools/bench's own
// records (internal/benchdata: 20 columns of mixed types at 1 KB, 9 at
// 100 B) and at the file sizes the sink writes them under bench's 256 MiB
// ceiling: about 2,300 records of 1 KB a file with 64 partitions, 14,000
// with 8, and 80,000 of 100 B with 8. Small files cost more per record:
// every file starts its column builders, dictionaries and pages afresh.
func BenchmarkWriteBenchFiles(b *testing.B) {
	for _, c := range []struct {
		size string
		rows int
	}{{"1KB", 2300}, {"1KB", 14000}, {"100B", 80000}} {
		b.Run(fmt.Sprintf("%s/%drows", c.size, c.rows), func(b *testing.B) {
			datums, text, err := benchdata.Pool(c.size)
			if err != nil {
				b.Fatal(err)
			}
			writeFiles(b, mustSchema(b, text), datums, c.rows)
		})
	}
}

// writeFiles writes datums round robin, fileRows to a file.
func writeFiles(b *testing.B, s *schema.Schema, datums [][]byte, fileRows int) {
	b.SetBytes(int64(len(datums[0])))
	b.ReportAllocs()
	var w *Writer
	n := 0
	cpu := processCPU(b)
	for b.Loop() {
		if n%fileRows == 0 {
			if w != nil {
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			var err error
			if w, err = NewWriter(io.Discard, s, Options{Codec: "snappy"}); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.WriteDatum(datums[n%len(datums)]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(n), "cpu-ns/op")
}

// processCPU is the user and system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
