package compact

import (
	"fmt"
	"io"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/layout"
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
