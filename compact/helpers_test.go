package compact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

var bg = context.Background()

func testFormat(t *testing.T, ext string) format.Format {
	t.Helper()
	var f format.Format
	var err error
	if ext == ".parquet" {
		f, err = parquet.New(parquet.Options{})
	} else {
		f, err = avro.New(avro.Options{Codec: "deflate", BlockRecords: 3})
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func testSchema(t *testing.T, id int32) *schema.Schema {
	t.Helper()
	text := demodata.Schema
	if id == 2 {
		text = demodata.SchemaV2
	}
	s, err := schema.New(id, text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// commitFile writes a committed file of partition p holding offsets
// start..end (every offset, the record's seq is its offset) into dir.
func commitFile(t *testing.T, fsys storage.FS, f format.Format, lay layout.Topic, dir string, s *schema.Schema, p int32, start, end int64) string {
	t.Helper()
	name := path.Join(lay.Dir(), dir, layout.FinalName(lay.Name, p, start, end, 10, f.Extension()))
	writeRecords(t, fsys, f, name, s, p, start, end)
	return name
}

func writeRecords(t *testing.T, fsys storage.FS, f format.Format, name string, s *schema.Schema, p int32, start, end int64) {
	t.Helper()
	out, err := fsys.Create(bg, name)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := f.NewWriter(out, s)
	if err != nil {
		t.Fatal(err)
	}
	for off := start; off <= end; off++ {
		v, err := valueFunc(s)(s.ID, p, off)
		if err != nil {
			t.Fatal(err)
		}
		_, datum, err := schema.ParseWire(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := rw.WriteDatum(datum); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// readSeqs reads the seq field of every record of a committed file.
func readSeqs(fsys storage.FS, name string) ([]int64, error) {
	rc, err := fsys.Open(bg, name)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, []byte("PAR1")) {
		return parquetSeqs(data)
	}
	ocf, err := goavro.NewOCFReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var seqs []int64
	for ocf.Scan() {
		v, err := ocf.Read()
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, v.(map[string]any)["seq"].(int64))
	}
	return seqs, ocf.Err()
}

func parquetSeqs(data []byte) ([]int64, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	tbl, err := fr.ReadTable(bg)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	var seqs []int64
	for _, ch := range tbl.Column(tbl.Schema().FieldIndices("seq")[0]).Data().Chunks() {
		seqs = append(seqs, ch.(*array.Int64).Int64Values()...)
	}
	return seqs, nil
}

// visible reads what a reader of dir sees: every committed file directly
// in it (hidden names skipped, as Hadoop's input formats do), and checks
// that each name spans exactly its records. It returns offsets by
// partition, in the order read.
func visible(fsys storage.FS, dir string) (map[int32][]int64, error) {
	return visibleCached(fsys, dir, nil)
}

// visibleCached is visible reading each file (by name and size: committed
// files never change) once per cache.
func visibleCached(fsys storage.FS, dir string, cache map[string][]int64) (map[int32][]int64, error) {
	infos, err := fsys.ReadDir(bg, dir)
	if err != nil {
		return nil, err
	}
	out := map[int32][]int64{}
	for _, fi := range infos {
		if fi.IsDir() || strings.HasPrefix(fi.Name(), "_") || strings.HasPrefix(fi.Name(), ".") {
			continue
		}
		r, ok := layout.ParseFinalName(fi.Name())
		if !ok {
			return nil, fmt.Errorf("%s: not a committed name", fi.Name())
		}
		key := fmt.Sprintf("%s/%s@%d", dir, fi.Name(), fi.Size())
		seqs, ok := cache[key]
		if !ok {
			if seqs, err = readSeqs(fsys, path.Join(dir, fi.Name())); err != nil {
				return nil, fmt.Errorf("%s: %w", fi.Name(), err)
			}
			if cache != nil {
				cache[key] = seqs
			}
		}
		if len(seqs) == 0 || seqs[0] != r.Start || seqs[len(seqs)-1] != r.End {
			return nil, fmt.Errorf("%s: records span %v", fi.Name(), seqs)
		}
		out[r.Partition] = append(out[r.Partition], seqs...)
	}
	return out, nil
}

// exactlyOnce fails unless got holds every offset of want once.
func exactlyOnce(got map[int32][]int64, want map[int32][]int64) error {
	var errs []error
	for p, offs := range want {
		seen := map[int64]int{}
		for _, o := range got[p] {
			seen[o]++
		}
		for _, o := range offs {
			if seen[o] != 1 {
				errs = append(errs, fmt.Errorf("partition %d offset %d seen %d times", p, o, seen[o]))
			}
			delete(seen, o)
		}
		for o := range seen {
			errs = append(errs, fmt.Errorf("partition %d offset %d not expected", p, o))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			errs = append(errs, fmt.Errorf("partition %d not expected", p))
		}
	}
	return errors.Join(errs...)
}

func span(p int32, from, to int64, into map[int32][]int64) {
	for o := from; o <= to; o++ {
		into[p] = append(into[p], o)
	}
}

func valueFunc(s *schema.Schema) func(int32, int32, int64) ([]byte, error) {
	if s.ID == 2 {
		return demodata.ValueV2
	}
	return demodata.Value
}
