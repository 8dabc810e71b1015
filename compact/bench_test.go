package compact

import (
	"fmt"
	"io"
	"path"
	"syscall"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/internal/benchdata"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// BenchmarkMerge merges 100 small files of one partition (100 records
// each) into one, against copying the same bytes as they are (the store's
// read+write rate of the same bytes, on the in-memory store): the merge's
// cost beyond moving the bytes.
func BenchmarkMerge(b *testing.B) {
	for _, ext := range []string{".avro", ".parquet"} {
		t := &testing.T{}
		mem := storagetest.NewMemFS()
		f := testFormat(t, ext)
		s := testSchema(t, 1)
		var run Run
		var bytes int64
		for i := range int64(100) {
			name := commitFile(t, mem, f, mergeLayout, "d=1", s, 0, i*100, i*100+99)
			fi, _ := mem.Stat(bg, name)
			r, _ := layout.ParseFinalName(name)
			run.Inputs = append(run.Inputs, Input{Path: name, Range: r})
			bytes += fi.Size()
		}
		c := newTestCompactor(mem, ext)
		b.Run("merge"+ext, func(b *testing.B) {
			b.SetBytes(bytes)
			for i := 0; b.Loop(); i++ {
				outs, err := c.mergeRun(bg, run, fmt.Sprintf("/stage/m%d", i))
				if err != nil || len(outs) != 1 {
					b.Fatal(err)
				}
				_ = mem.Remove(bg, outs[0].temp)
			}
		})
		b.Run("copy"+ext, func(b *testing.B) {
			b.SetBytes(bytes)
			for i := 0; b.Loop(); i++ {
				out, _ := mem.Create(bg, fmt.Sprintf("/stage/c%d", i))
				for _, in := range run.Inputs {
					rc, _ := mem.Open(bg, in.Path)
					_, _ = io.Copy(out, rc)
					rc.Close()
				}
				_ = out.Close()
				_ = mem.Remove(bg, fmt.Sprintf("/stage/c%d", i))
			}
		})
	}
}

// BenchmarkMergeParquet1KB merges 100 Parquet files of 400 of the
// bench's 1 KB records (internal/benchdata, the records tools/bench
// -compaction merges on HDFS) on the in-memory store: the merge's CPU
// per row without HDFS, to compare a change of the Parquet merge with
// its base (-benchmem for its allocations). The row group target is the
// bench's (memory.max.bytes / 8 of the default 256 MB). ns/row is wall
// time, cpu-ns/row the process's CPU (both goroutines and the GC).
func BenchmarkMergeParquet1KB(b *testing.B) {
	mem := storagetest.NewMemFS()
	f, err := parquet.New(parquet.Options{})
	if err != nil {
		b.Fatal(err)
	}
	pool, text, err := benchdata.Pool("1KB")
	if err != nil {
		b.Fatal(err)
	}
	s, err := schema.New(1, text)
	if err != nil {
		b.Fatal(err)
	}
	const files, rows = 100, 400
	var run Run
	var size int64
	for i := range int64(files) {
		start := i * rows
		name := path.Join(mergeLayout.Dir(), "d=1", layout.FinalName(mergeLayout.Name, 0, start, start+rows-1, 10, f.Extension()))
		n := writeDatums(b, mem, f, s, name, pool, start, rows)
		size += n
		r, _ := layout.ParseFinalName(name)
		run.Inputs = append(run.Inputs, Input{Path: name, Range: r, Bytes: n})
	}
	c := newTestCompactor(mem, ".parquet")
	c.o.RowGroupBytes = 32 << 20
	readPool.poison = false // as built: the tests' poisoning costs a pass over every freed byte
	defer func() { readPool.poison = true }()
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := processCPU(b)
	for i := 0; b.Loop(); i++ {
		outs, err := c.mergeRun(bg, run, fmt.Sprintf("/stage/m%d", i))
		if err != nil || len(outs) != 1 {
			b.Fatal(outs, err)
		}
		_ = mem.Remove(bg, outs[0].temp)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files*rows), "ns/row")
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N*files*rows), "cpu-ns/row")
}

// processCPU is the process's user and system CPU time in nanoseconds,
// the GC's and the decoding goroutine's included: the figure to compare
// on a shared machine, where wall time is the neighbours' too.
func processCPU(b *testing.B) int64 {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// writeDatums writes n datums (binary Avro of s) from the pool's datum
// start on, cycling, as one committed file and returns its size.
func writeDatums(b *testing.B, fsys storage.FS, f format.Format, s *schema.Schema, name string, pool [][]byte, start int64, n int) int64 {
	b.Helper()
	out, err := fsys.Create(bg, name)
	if err != nil {
		b.Fatal(err)
	}
	rw, err := f.NewWriter(out, s)
	if err != nil {
		b.Fatal(err)
	}
	for off := start; off < start+int64(n); off++ {
		if err := rw.WriteDatum(pool[off%int64(len(pool))]); err != nil {
			b.Fatal(err)
		}
	}
	if err := rw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := fsys.Stat(bg, name)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}
