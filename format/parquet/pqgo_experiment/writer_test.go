package pqgo_experiment

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	pqa "github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// TestSameFileAsArrowGo writes the same datums with format/parquet's
// writer (arrow-go) and this one, reads both back with arrow-go's
// reader and requires the same Parquet schema (physical types, logical
// types, repetition, names, order), one row group, the same compression
// and dictionary use per column, and equal values in every row.
// format/parquet's output is checked against goavro's decoding by its
// own oracle tests, so equal values here mean values equal to the input.
func TestSameFileAsArrowGo(t *testing.T) {
	for _, wl := range workloads(t) {
		t.Run(wl.name, func(t *testing.T) {
			rows := 5000 // more than the pool: dictionaries fall back to PLAIN where arrow-go's do
			datums := make([][]byte, rows)
			for i := range datums {
				datums[i] = wl.datums[i%len(wl.datums)]
			}
			want := writeArrowGo(t, wl.s, datums)
			got := writePqGo(t, wl.s, datums)
			wantInfo, gotInfo := describe(t, want), describe(t, got)

			if wantInfo != gotInfo {
				t.Errorf("file layout differs\narrow-go:\n%s\nparquet-go:\n%s", wantInfo, gotInfo)
			}
			compareValues(t, readTable(t, want), readTable(t, got))
		})
	}
}

func writeArrowGo(t testing.TB, s *schema.Schema, datums [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqa.NewWriter(&buf, s, pqa.Options{Codec: "snappy"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range datums {
		if err := w.WriteDatum(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writePqGo(t testing.TB, s *schema.Schema, datums [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s, Options{PageRows: DefaultPageRows})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range datums {
		if err := w.WriteDatum(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// describe is what must match: the schema as arrow-go prints it, the row
// groups, and per column chunk its type, codec and whether it has a
// dictionary page, and which encodings its data pages use (dictionary,
// and PLAIN after a dictionary grew past the page size).
func describe(t *testing.T, data []byte) string {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	var sb strings.Builder
	pqschema.PrintSchema(rdr.MetaData().Schema.Root(), &sb, 2)
	md := rdr.MetaData()
	fmt.Fprintf(&sb, "row groups: %d\n", md.NumRowGroups())
	rg := md.RowGroup(0)
	for i := range rg.NumColumns() {
		c, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "%s %s %s dictionary=%t data pages %v\n", c.PathInSchema(), c.Type(), c.Compression(),
			c.HasDictionaryPage(), dataPageEncodings(c))
	}
	return sb.String()
}

func readTable(t *testing.T, data []byte) arrow.Table {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

// compareValues compares every value, column by column and row by row,
// and names the first difference.
func compareValues(t *testing.T, want, got arrow.Table) {
	t.Helper()
	if want.NumRows() != got.NumRows() || want.NumCols() != got.NumCols() {
		t.Fatalf("rows×cols %d×%d, want %d×%d", got.NumRows(), got.NumCols(), want.NumRows(), want.NumCols())
	}
	for c := range int(want.NumCols()) {
		wc, gc := want.Column(c), got.Column(c)
		if !arrow.TypeEqual(wc.DataType(), gc.DataType()) {
			t.Errorf("column %s: type %s, want %s", wc.Name(), gc.DataType(), wc.DataType())
			continue
		}
		wa, ga := concat(t, wc), concat(t, gc)
		for r := range wa.Len() {
			if !array.SliceEqual(wa, int64(r), int64(r+1), ga, int64(r), int64(r+1)) {
				t.Errorf("column %s row %d: %s, want %s", wc.Name(), r, ga.ValueStr(r), wa.ValueStr(r))
				break
			}
		}
	}
}

func concat(t *testing.T, c *arrow.Column) arrow.Array {
	t.Helper()
	a, err := array.Concatenate(c.Data().Chunks(), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Release)
	return a
}

// dataPageEncodings is the sorted set of the chunk's data pages' encodings.
func dataPageEncodings(c *metadata.ColumnChunkMetaData) []string {
	var encs []string
	for _, st := range c.EncodingStats() {
		if st.PageType.String() == "DATA_PAGE" && !slices.Contains(encs, st.Encoding.String()) {
			encs = append(encs, st.Encoding.String())
		}
	}
	slices.Sort(encs)
	return encs
}

// TestResetLosesColumnPaths pins why a partition cannot reuse a writer
// across files, which would cut its CPU per record (docs/benchmarks.md):
// parquet-go v0.32.0's Writer.Reset clears the column chunks'
// path_in_schema of every later file (upstream issue 602, open), which
// Spark and Hive reject. The values and the first file are right. If this
// fails on the paths, the bug is fixed: require the same layout instead.
func TestResetLosesColumnPaths(t *testing.T) {
	wl := workloads(t)[0]
	// 5,000 rows each, so that every overflowing dictionary overflows in
	// both writers (they count a dictionary's bytes a little differently).
	first, second := make([][]byte, 5000), make([][]byte, 5000)
	for i := range first {
		first[i], second[i] = wl.datums[i%len(wl.datums)], wl.datums[(i+1000)%len(wl.datums)]
	}
	var buf1, buf2 bytes.Buffer
	w, err := NewWriter(&buf1, wl.s, Options{PageRows: DefaultPageRows})
	if err != nil {
		t.Fatal(err)
	}
	for i, file := range [][][]byte{first, second} {
		if i == 1 {
			w.Reset(&buf2)
		}
		for _, d := range file {
			if err := w.WriteDatum(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	want1, want2 := writeArrowGo(t, wl.s, first), writeArrowGo(t, wl.s, second)
	if a, b := describe(t, want1), describe(t, buf1.Bytes()); a != b {
		t.Errorf("first file: layout differs\narrow-go:\n%s\nparquet-go:\n%s", a, b)
	}
	compareValues(t, readTable(t, want1), readTable(t, buf1.Bytes()))
	compareValues(t, readTable(t, want2), readTable(t, buf2.Bytes()))
	rdr, err := file.NewParquetReader(bytes.NewReader(buf2.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	rg := rdr.MetaData().RowGroup(0)
	for i := range rg.NumColumns() {
		c, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if p := c.PathInSchema(); slices.ContainsFunc(p, func(name string) bool { return name != "" }) {
			t.Fatalf("second file, column %d: path_in_schema %q: is parquet-go's Reset fixed?", i, p)
		}
	}
}
