package sink

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/internal/benchdata"
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

// write writes record i of the batch and asks, as the batch loop does,
// whether a commit came due.
func (w *writePath) write(tb testing.TB, i int) {
	ctx := context.Background()
	ok, err := w.c.writeRecord(ctx, ctx, w.o, w.recs[i])
	if due := asCommitDue(err); due != nil {
		tb.Fatalf("record %d: a commit came due within the batch", w.recs[i].Offset)
	}
	if !ok || err != nil {
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

// writePathPool is bench's datum pool (internal/benchdata, which
// tools/bench produces to Kafka).
func writePathPool(b testing.TB, size string) (string, [][]byte) {
	pool, text, err := benchdata.Pool(size)
	if err != nil {
		b.Fatal(err)
	}
	return text, pool
}
