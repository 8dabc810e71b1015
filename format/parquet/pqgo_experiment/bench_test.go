package pqgo_experiment

import (
	"bytes"
	"flag"
	"runtime"
	"syscall"
	"testing"
	"time"

	pqa "github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// fileRows is a file's records: by default 14,000, as in bench's
// 1KB×8p×parquet runs (one row group each) and format/parquet's
// BenchmarkWriteFiles; -pqgo.filerows=2600 is the 64-partition case's.
var fileRows = 14000

func init() {
	flag.IntVar(&fileRows, "pqgo.filerows", fileRows, "records per file in BenchmarkWriteFiles and BenchmarkHeldHeap")
}

// fileWriter is what both encoders offer the benchmark.
type fileWriter interface {
	WriteDatum([]byte) error
	BytesBuffered() int
	Close() error
}

type encoder struct {
	name  string
	open  func(*bytes.Buffer, *schema.Schema) (fileWriter, error)
	reuse bool // Reset the writer for the next file instead of opening one
}

var encoders = []encoder{
	{name: "arrowgo", open: func(b *bytes.Buffer, s *schema.Schema) (fileWriter, error) {
		return pqa.NewWriter(b, s, pqa.Options{Codec: "snappy"})
	}},
	{name: "pqgo", open: func(b *bytes.Buffer, s *schema.Schema) (fileWriter, error) {
		return NewWriter(b, s, Options{PageRows: DefaultPageRows})
	}},
	// pqgo-ownpages: parquet-go cuts pages itself; dictionaries never fall
	// back to PLAIN in a file of this size (not the same file as arrow-go's).
	{name: "pqgo-ownpages", open: func(b *bytes.Buffer, s *schema.Schema) (fileWriter, error) {
		return NewWriter(b, s, Options{})
	}},
	// pqgo-reuse: one writer Reset for each file.
	{name: "pqgo-reuse", open: func(b *bytes.Buffer, s *schema.Schema) (fileWriter, error) {
		return NewWriter(b, s, Options{PageRows: DefaultPageRows})
	}, reuse: true},
	// pqgo-struct: GenericWriter with a Go struct; bench 1 KB only.
	{name: "pqgo-struct", open: func(b *bytes.Buffer, s *schema.Schema) (fileWriter, error) { return newGenericWriter(b, s) }},
}

// BenchmarkWriteFiles is format/parquet's BenchmarkWriteFiles for both
// encoders and each workload: a new writer per file of fileRows records,
// closed, the file in memory. One op is one record; cpu-ns/op is the
// process's CPU time (GC and page faults included), out-B/op the file
// bytes per record, MiB-held/file what the writer reports buffered just
// before Close (for format/parquet the count of its allocator, for
// pqgo an estimate: see BytesBuffered). Run the two encoders as separate, alternating
// processes to compare them on a loaded machine.
func BenchmarkWriteFiles(b *testing.B) {
	for _, wl := range workloads(b) {
		for _, enc := range encoders {
			if enc.name == "pqgo-struct" && wl.name != "bench1KB" {
				continue // its struct is bench 1 KB's record
			}
			b.Run(wl.name+"/"+enc.name, func(b *testing.B) {
				benchWriteFiles(b, wl, enc)
			})
		}
	}
}

func benchWriteFiles(b *testing.B, wl workload, enc encoder) {
	b.SetBytes(int64(len(wl.datums[0])))
	b.ReportAllocs()
	var out bytes.Buffer
	var w fileWriter
	n, written, held, files := 0, 0, 0, 0
	closeFile := func() {
		held += w.BytesBuffered()
		files++
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		written += out.Len()
		out.Reset()
	}
	cpu := processCPU(b)
	for b.Loop() {
		if n%fileRows == 0 {
			if w != nil {
				closeFile()
			}
			if w != nil && enc.reuse {
				w.(*Writer).Reset(&out)
			} else {
				var err error
				if w, err = enc.open(&out, wl.s); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := w.WriteDatum(wl.datums[n%len(wl.datums)]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	closeFile()
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(n), "cpu-ns/op")
	b.ReportMetric(float64(written)/float64(n), "out-B/op")
	b.ReportMetric(float64(held)/float64(files)/(1<<20), "MiB-held/file")
}

// processCPU is the user and system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHeldHeap checks BytesBuffered against the Go heap: it opens
// heldWriters writers, writes fileRows records to each (a file just
// before the sink would close it), and reports per writer the Go heap
// growth after GC next to what BytesBuffered says.
func BenchmarkHeldHeap(b *testing.B) {
	const heldWriters = 8
	for _, wl := range workloads(b)[:1] {
		for _, enc := range encoders {
			if enc.name == "pqgo-struct" && wl.name != "bench1KB" {
				continue // its struct is bench 1 KB's record
			}
			b.Run(wl.name+"/"+enc.name, func(b *testing.B) {
				for b.Loop() {
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					ws := make([]fileWriter, heldWriters)
					outs := make([]bytes.Buffer, heldWriters)
					counted := 0
					for i := range ws {
						w, err := enc.open(&outs[i], wl.s)
						if err != nil {
							b.Fatal(err)
						}
						for n := range fileRows {
							if err := w.WriteDatum(wl.datums[n%len(wl.datums)]); err != nil {
								b.Fatal(err)
							}
						}
						ws[i] = w
						counted += w.BytesBuffered()
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/heldWriters/(1<<20), "MiB-heap/writer")
					b.ReportMetric(float64(counted)/heldWriters/(1<<20), "MiB-counted/writer")
					for _, w := range ws {
						if err := w.Close(); err != nil {
							b.Fatal(err)
						}
					}
					runtime.KeepAlive(ws)
				}
			})
		}
	}
}
