package compact

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// countingFS counts the opens of each file: the merge reads each input once.
type countingFS struct {
	storage.FS
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.FS.Open(ctx, name)
}

var mergeLayout = layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "orders"}

func newTestCompactor(fsys storage.FS, ext string) *Compactor {
	return New(Options{FS: fsys, Topic: mergeLayout, Ext: ext, Pad: 10, MinAge: 0,
		Now: func() time.Time { return time.Now().Add(time.Hour) }})
}

// TestMergeKeepsEveryRecordInOrder: a run of inputs becomes one file per
// schema, named by its first and last offsets, holding every record of the
// inputs once and in order; each input is opened once. Avro (deflate,
// blocks copied) and Parquet.
func TestMergeKeepsEveryRecordInOrder(t *testing.T) {
	for _, ext := range []string{".avro", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			mem := &countingFS{FS: storagetest.NewMemFS(), opens: map[string]int{}}
			f := testFormat(t, ext)
			s1, s2 := testSchema(t, 1), testSchema(t, 2)
			// offsets 0..29 of partition 2 in six files; the fifth changes schema
			var inputs []Input
			for i := range int64(6) {
				s := s1
				if i >= 4 {
					s = s2
				}
				name := commitFile(t, mem, f, mergeLayout, "d=1", s, 2, i*5, i*5+4)
				r, _ := layout.ParseFinalName(name)
				inputs = append(inputs, Input{Path: name, Range: r})
			}
			c := newTestCompactor(mem, ext)
			outs, err := c.mergeRun(bg, Run{Partition: 2, Inputs: inputs}, "/stage/run-0")
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != 2 {
				t.Fatalf("%d outputs, want 2 (one per schema): %+v", len(outs), outs)
			}
			want := [][2]int64{{0, 19}, {20, 29}}
			for i, o := range outs {
				if o.start != want[i][0] || o.end != want[i][1] || o.records != o.end-o.start+1 {
					t.Errorf("output %d: offsets %d-%d, %d records; want %v", i, o.start, o.end, o.records, want[i])
				}
				seqs, err := readSeqs(mem, o.temp)
				if err != nil {
					t.Fatal(err)
				}
				var exp []int64
				for off := o.start; off <= o.end; off++ {
					exp = append(exp, off)
				}
				if !slices.Equal(seqs, exp) {
					t.Errorf("output %d holds %v, want %v", i, seqs, exp)
				}
			}
			for _, in := range inputs {
				if n := mem.opens[in.Path]; n != 1 {
					t.Errorf("%s opened %d times, want once", in.Path, n)
				}
			}
		})
	}
}

// TestAvroMergeRefusesCorruptInput: a damaged input fails the merge with
// its name; nothing is published from it.
func TestAvroMergeRefusesCorruptInput(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := testFormat(t, ".avro")
	good := commitFile(t, mem, f, mergeLayout, "d=1", testSchema(t, 1), 0, 0, 4)
	bad := "/topics/orders/d=1/orders+0+0000000005+0000000009.avro"
	for i, body := range []string{"not avro", "Obj\x01\x02"} {
		out, _ := mem.Create(bg, bad)
		_, _ = io.WriteString(out, body)
		_ = out.Close()
		c := newTestCompactor(mem, ".avro")
		r1, _ := layout.ParseFinalName(good)
		r2, _ := layout.ParseFinalName(bad)
		_, err := c.mergeRun(bg, Run{Inputs: []Input{{Path: good, Range: r1}, {Path: bad, Range: r2}}}, fmt.Sprintf("/stage/x%d", i))
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("merge of %q: err %v, want one naming %s", body, err, bad)
		}
		_ = mem.Remove(bg, bad)
	}
}

// TestParquetMergeKeepsTheColumnTypes: the merged file's Parquet schema
// (physical and logical types, INT96 timestamps, repetition) is the
// inputs', so Hive and Spark read it as they read the sink's files.
func TestParquetMergeKeepsTheColumnTypes(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := testFormat(t, ".parquet")
	a := commitFile(t, mem, f, mergeLayout, "d=1", testSchema(t, 1), 0, 0, 4)
	b := commitFile(t, mem, f, mergeLayout, "d=1", testSchema(t, 1), 0, 5, 9)
	ra, _ := layout.ParseFinalName(a)
	rb, _ := layout.ParseFinalName(b)
	outs, err := newTestCompactor(mem, ".parquet").mergeRun(bg, Run{Inputs: []Input{{Path: a, Range: ra}, {Path: b, Range: rb}}}, "/stage/p")
	if err != nil || len(outs) != 1 {
		t.Fatalf("merge: %v, %d outputs", err, len(outs))
	}
	in, out := parquetSchemaText(t, mem, a), parquetSchemaText(t, mem, outs[0].temp)
	if !strings.Contains(in, "seq") || !strings.Contains(in, "created_at") {
		t.Fatalf("schema text without the columns:\n%s", in)
	}
	if in != out {
		t.Errorf("merged schema differs:\n%s\ninput:\n%s", out, in)
	}
}

func parquetSchemaText(t *testing.T, fsys storage.FS, name string) string {
	t.Helper()
	rc, err := fsys.Open(bg, name)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	var b strings.Builder
	pqschema.PrintSchema(pf.MetaData().Schema.Root(), &b, 2)
	return b.String()
}
