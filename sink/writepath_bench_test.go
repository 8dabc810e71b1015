package sink

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// BenchmarkWritePath is the connector's whole per-record path on one
// partition, from the fetched Kafka record to the committed file on an
// in-memory store: decode (converter, schema lookup, validation), the
// partitioner, the Avro writer with snappy, and a commit every flushSize
// records (WAL segment, renames). It is the in-process counterpart of
// bench's 1KB×Np×avro×default workload, without Kafka and HDFS, so a
// change can be compared with its base in one run (docs/benchmarks.md):
// `go test -run '^$' -bench WritePath -benchmem -count 6 ./sink`.
// One op is one record.
func BenchmarkWritePath(b *testing.B) {
	for _, size := range []string{"1KB", "100B"} {
		b.Run(size, func(b *testing.B) { benchWritePath(b, size) })
	}
}

const (
	writePathBatch = 1000  // records per fetched batch
	writePathFlush = 20000 // flush.size: records per commit
)

// writePath is one partition of a connector wired as the daemon wires it
// (the registry client, cached after its first lookup; Avro with snappy;
// the default partitioner) on an in-memory store, and a batch of records
// to feed it.
type writePath struct {
	c    *Connector
	o    *owned
	fs   *storagetest.MemFS
	recs []*kgo.Record
	off  int64 // the next batch's first offset
}

func newWritePath(tb testing.TB, size string, now func() time.Time) *writePath {
	text, pool := writePathPool(tb, size)
	fake := srfake.New()
	tb.Cleanup(fake.Close)
	const id = 1
	fake.SeedSchema("clicks-value", 1, id, sr.Schema{Schema: text})
	reg, err := registry.NewClient(registry.ClientConfig{URLs: []string{fake.URL()}})
	if err != nil {
		tb.Fatal(err)
	}
	fs := storagetest.NewMemFS()
	format, err := avro.New(avro.Options{Codec: "snappy"})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := New(Config{Name: "bench", Brokers: []string{"127.0.0.1:1"}, GroupID: "bench", Topics: []string{"clicks"}, Registry: reg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		WriteSettings: WriteSettings{FS: fs, Format: format, Pad: 10, FlushSize: writePathFlush, RotateInterval: time.Hour, Now: now,
			TopicsDir: func(string) string { return "/topics" }, LogsDir: func(string) string { return "/logs" }}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.cl.Close)
	o := c.newOwned(tp{"clicks", 0})
	if _, err := o.p.resume(context.Background(), nil); err != nil {
		tb.Fatal(err)
	}
	recs := make([]*kgo.Record, writePathBatch)
	for i := range recs {
		v := append([]byte{0, 0, 0, 0, byte(id)}, pool[i%len(pool)]...)
		recs[i] = &kgo.Record{Topic: "clicks", Value: v, Key: []byte("k"), Timestamp: time.UnixMilli(1_767_225_600_000 + int64(i))}
	}
	return &writePath{c: c, o: o, fs: fs, recs: recs}
}

// begin starts the next batch: the records get its offsets.
func (w *writePath) begin(tb testing.TB) {
	for _, r := range w.recs {
		r.Offset = w.off
		w.off++
	}
	if err := w.o.p.beginBatch(fetchedBatch{First: w.recs[0].Offset, Last: w.recs[len(w.recs)-1].Offset, LogStart: -1, HighWatermark: -1}); err != nil {
		tb.Fatal(err)
	}
}

func (w *writePath) end(tb testing.TB) {
	if err := w.o.p.endBatch(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// write writes record i of the batch.
func (w *writePath) write(tb testing.TB, i int) {
	ctx := context.Background()
	if ok, err := w.c.writeRecord(ctx, ctx, w.o, w.recs[i]); !ok || err != nil {
		tb.Fatalf("record %d not written: %v", w.recs[i].Offset, err)
	}
}

func benchWritePath(b *testing.B, size string) {
	w := newWritePath(b, size, nil)
	b.SetBytes(int64(len(w.recs[0].Value)))
	b.ReportAllocs()
	n := 0
	cpu := processCPU(b)
	for b.Loop() {
		if n%writePathBatch == 0 {
			if n > 0 {
				w.end(b)
			}
			if w.off%writePathFlush == 0 && w.off > 0 {
				b.StopTimer()
				dropCommitted(b, w.fs)
				b.StartTimer()
			}
			w.begin(b)
		}
		w.write(b, n%writePathBatch)
		n++
	}
	// CPU time rather than wall time: on a shared machine it is what a
	// change moves (the process's, so the GC's work counts).
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(n), "cpu-ns/op")
	if got := w.c.Stats.Records.Load(); got != int64(n) {
		b.Fatalf("%d records written of %d", got, n)
	}
}

// TestWriteRecordAllocatesNothingAndReadsNoClock (issue 25): within a
// batch, a record whose schema is cached goes from the fetched Kafka
// record into its open file without an allocation (the GC's work is CPU
// per record too) and without reading the clock (rotation triggers and new
// files use the batch's time). Blocks the Avro writer emits and the
// commits are not per record: AllocsPerRun averages over the batch.
func TestWriteRecordAllocatesNothingAndReadsNoClock(t *testing.T) {
	var clockReads atomic.Int64
	w := newWritePath(t, "1KB", func() time.Time { clockReads.Add(1); return time.Now() })
	w.begin(t)
	w.write(t, 0) // opens the file
	i := 1
	reads := clockReads.Load()
	allocs := testing.AllocsPerRun(writePathBatch-2, func() {
		w.write(t, i)
		i++
	})
	if allocs != 0 {
		t.Errorf("a record allocates %.1f times on its way to its file; want 0", allocs)
	}
	if got := clockReads.Load() - reads; got != 0 {
		t.Errorf("%d records read the clock %d times; want 0", writePathBatch-1, got)
	}
	w.end(t)
}

// processCPU is the user and system CPU time the process has used.
func processCPU(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dropCommitted keeps the in-memory store small between commits.
func dropCommitted(b testing.TB, fs *storagetest.MemFS) {
	if err := fs.RemoveAll(context.Background(), "/topics/clicks/partition=0"); err != nil {
		b.Fatal(err)
	}
}

// writePathPool is bench's datum pool (tools/bench/records.go), smaller.
func writePathPool(b testing.TB, size string) (string, [][]byte) {
	text, gen := wpSchema1KB, wpNative1KB
	if size == "100B" {
		text, gen = wpSchema100B, wpNative100B
	}
	codec, err := goavro.NewCodec(text)
	if err != nil {
		b.Fatal(err)
	}
	pool := make([][]byte, 512)
	for i := range pool {
		if pool[i], err = codec.BinaryFromNative(nil, gen(i)); err != nil {
			b.Fatal(err)
		}
	}
	return text, pool
}

const wpSchema1KB = `{"type":"record","name":"Click","namespace":"bench","fields":[
 {"name":"id","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"request_id","type":{"type":"string","logicalType":"uuid"}},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
 {"name":"user","type":"string"},
 {"name":"session","type":"string"},
 {"name":"country","type":"string"},
 {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["VIEW","CLICK","BUY"]}},
 {"name":"score","type":"double"},
 {"name":"ratio","type":"float"},
 {"name":"count","type":"int"},
 {"name":"flag","type":"boolean"},
 {"name":"referrer","type":["null","string"],"default":null},
 {"name":"ua","type":"string"},
 {"name":"path","type":"string"},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"string"}},
 {"name":"latency_us","type":"long"},
 {"name":"payload","type":"string"}]}`

// Schema100B is the ~100 B workload.
const wpSchema100B = `{"type":"record","name":"Tick","namespace":"bench","fields":[
 {"name":"id","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"sym","type":"string"},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":4}},
 {"name":"qty","type":"int"},
 {"name":"venue","type":"string"},
 {"name":"order_ref","type":{"type":"string","logicalType":"uuid"}},
 {"name":"trader","type":"string"},
 {"name":"note","type":["null","string"],"default":null}]}`

var wpBaseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var wpWords = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa")

func wpNative1KB(i int) map[string]any {
	ts := wpBaseTime.Add(time.Duration(i) * time.Second)
	var ref any
	if i%3 == 0 {
		ref = goavro.Union("string", "https://example.com/"+wpWords[i%len(wpWords)])
	}
	return map[string]any{
		"id": int64(i), "ts": ts, "day": ts.Truncate(24 * time.Hour),
		"request_id": fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7919),
		"amount":     big.NewRat(int64(i%1_000_000), 100),
		"user":       fmt.Sprintf("user-%06d", i%50000), "session": fmt.Sprintf("s-%016x", i*2654435761),
		"country": []string{"DE", "FR", "US", "JP", "BR"}[i%5], "kind": []string{"VIEW", "CLICK", "BUY"}[i%3],
		"score": float64(i) / 7, "ratio": float32(i%100) / 100, "count": int32(i % 1000), "flag": i%2 == 0,
		"referrer":   ref,
		"ua":         "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
		"path":       "/catalog/" + wpWords[i%len(wpWords)] + "/" + wpWords[(i/3)%len(wpWords)] + fmt.Sprintf("/item-%d", i%9973),
		"tags":       []any{wpWords[i%len(wpWords)], wpWords[(i+5)%len(wpWords)], "bench"},
		"attrs":      map[string]any{"ab": "variant-" + wpWords[i%4], "region": "eu-west-1", "build": "2026.01.1"},
		"latency_us": int64(i * 37 % 250000),
		"payload":    strings.Repeat(wpWords[i%len(wpWords)]+" ", 140)[:680],
	}
}

func wpNative100B(i int) map[string]any {
	var note any
	if i%10 == 0 {
		note = goavro.Union("string", "odd lot")
	}
	return map[string]any{
		"id": int64(i), "ts": wpBaseTime.Add(time.Duration(i) * time.Second),
		"sym":   []string{"ACME", "GLOBX", "INITECH", "UMBRL"}[i%4],
		"price": big.NewRat(int64(1_000_000+i%50_000), 10_000), "qty": int32(i%500 + 1),
		"venue": "XNAS-" + wpWords[i%len(wpWords)], "note": note,
		"order_ref": fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*104729),
		"trader":    fmt.Sprintf("trader-%05d-desk-%s", i%20000, wpWords[i%len(wpWords)]),
	}
}
