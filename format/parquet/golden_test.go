package parquet

import (
	"bytes"
	"context"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// allTypes covers every mapped type, nulls and nesting.
const allTypes = `{"type":"record","name":"AllTypes","namespace":"t","fields":[
 {"name":"b","type":"boolean"},
 {"name":"i","type":"int"},
 {"name":"l","type":"long"},
 {"name":"f","type":"float"},
 {"name":"d","type":"double"},
 {"name":"s","type":"string"},
 {"name":"by","type":"bytes"},
 {"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
 {"name":"fx","type":{"type":"fixed","name":"Four","size":4}},
 {"name":"dt","type":{"type":"int","logicalType":"date"}},
 {"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
 {"name":"tsm","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"tsu","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"ltm","type":{"type":"long","logicalType":"local-timestamp-millis"}},
 {"name":"ltu","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"dec0","type":{"type":"bytes","logicalType":"decimal","precision":20,"scale":0}},
 {"name":"dec18","type":{"type":"bytes","logicalType":"decimal","precision":38,"scale":18}},
 {"name":"decf","type":{"type":"fixed","name":"Dec8","size":8,"logicalType":"decimal","precision":18,"scale":4}},
 {"name":"id","type":{"type":"string","logicalType":"uuid"}},
 {"name":"os","type":["null","string"]},
 {"name":"ots","type":[{"type":"long","logicalType":"timestamp-micros"},"null"]},
 {"name":"odec","type":["null",{"type":"bytes","logicalType":"decimal","precision":5,"scale":1}]},
 {"name":"nested","type":{"type":"record","name":"Inner","fields":[
   {"name":"a","type":"int"},
   {"name":"tags","type":{"type":"array","items":"string"}}]}},
 {"name":"onested","type":["null","Inner"]},
 {"name":"arr","type":{"type":"array","items":["null","long"]}},
 {"name":"m","type":{"type":"map","values":"int"}},
 {"name":"mrec","type":{"type":"map","values":"Inner"}}
]}`

func mustSchema(t testing.TB, text string) *schema.Schema {
	t.Helper()
	s, err := schema.New(7, text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func union(k string, v any) map[string]any { return map[string]any{k: v} }

var (
	leapDay  = time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	pre1970  = time.Date(1969, 12, 31, 23, 59, 59, 999_000_000, time.UTC)
	pre1970u = time.Date(1969, 12, 31, 23, 59, 59, 999_999_000, time.UTC)
)

// goldenRows: extremes, negatives and unicode; then minimal values,
// empties and nulls.
func goldenRows() []map[string]any {
	inner := map[string]any{"a": int32(1), "tags": []any{"x", ""}}
	return []map[string]any{{
		"b": true, "i": int32(math.MaxInt32), "l": int64(math.MaxInt64), "f": float32(1.5), "d": math.MaxFloat64,
		"s": "héllo, 世界 🚀", "by": []byte{0, 1, 255}, "e": "GREEN", "fx": []byte("abcd"),
		"dt": leapDay, "tm": 23*time.Hour + 59*time.Minute + 59*time.Second + 999*time.Millisecond,
		"tu":  23*time.Hour + 59*time.Minute + 59*time.Second + 999999*time.Microsecond,
		"tsm": pre1970, "tsu": pre1970u,
		"ltm": leapDay.Add(12 * time.Hour).UnixMilli(), "ltu": int64(-1),
		"dec": rat("-12.30"), "dec0": rat("-99999999999999999999"), "dec18": rat("-12345678901234567890.123456789012345678"),
		"decf": rat("-12345678901234.5678"), "id": "123e4567-e89b-12d3-a456-426614174000",
		"os": union("string", "set"), "ots": union("long.timestamp-micros", leapDay), "odec": union("bytes.decimal", rat("-0.5")),
		"nested": inner, "onested": union("t.Inner", inner),
		"arr": []any{union("long", int64(1)), nil}, "m": map[string]any{"k": int32(-1), "ü": int32(2)},
		"mrec": map[string]any{"r": inner},
	}, {
		"b": false, "i": int32(math.MinInt32), "l": int64(math.MinInt64), "f": float32(-0.25), "d": -1e-300,
		"s": "", "by": []byte{}, "e": "RED", "fx": []byte{0, 0, 0, 0},
		"dt": time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), "tm": time.Duration(0), "tu": time.Duration(0),
		"tsm": time.Date(1677, 9, 22, 0, 0, 0, 0, time.UTC), "tsu": time.Date(2262, 4, 11, 0, 0, 0, 0, time.UTC),
		"ltm": int64(0), "ltu": int64(math.MaxInt64),
		"dec": rat("0"), "dec0": rat("0"), "dec18": rat("0.000000000000000001"), "decf": rat("99999999999999.9999"),
		"id": "", "os": nil, "ots": nil, "odec": nil,
		"nested": map[string]any{"a": int32(0), "tags": []any{}}, "onested": nil,
		"arr": []any{}, "m": map[string]any{}, "mrec": map[string]any{},
	}}
}

// writeGolden encodes rows through the Writer into a Parquet file.
func writeGolden(t testing.TB, opts Options) []byte {
	t.Helper()
	s := mustSchema(t, allTypes)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range goldenRows() {
		datum, err := s.Codec.BinaryFromNative(nil, row)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteDatum(datum); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// dump renders the file's Parquet schema and its rows as JSON lines read
// back with arrow-go's reader.
func dump(t testing.TB, data []byte) (schemaText, rows string) {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	var sb strings.Builder
	pqschema.PrintSchema(rdr.MetaData().Schema.Root(), &sb, 2)
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var rb strings.Builder
	tr := array.NewTableReader(tbl, -1)
	defer tr.Release()
	for tr.Next() {
		if err := array.RecordToJSON(tr.RecordBatch(), &rb); err != nil {
			t.Fatal(err)
		}
	}
	return sb.String(), rb.String()
}

// golden compares got with testdata/name; UPDATE_GOLDEN=1 rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGoldenInt96(t *testing.T) {
	sch, rows := dump(t, writeGolden(t, Options{}))
	golden(t, "alltypes_int96.schema", sch)
	golden(t, "alltypes_int96.rows.json", rows)
}

func TestGoldenInt64(t *testing.T) {
	sch, rows := dump(t, writeGolden(t, Options{Timestamps: TimestampsInt64, Codec: "zstd"}))
	golden(t, "alltypes_int64.schema", sch)
	golden(t, "alltypes_int64.rows.json", rows)
}

// TestExactValues checks what arrow's JSON rendering hides: decimal
// unscaled values and scales, and the INT96 encoding of a pre-1970
// instant (Julian day, nanoseconds of the UTC day).
func TestExactValues(t *testing.T) {
	data := writeGolden(t, Options{})
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	decimals := map[string][2]string{ // column → unscaled row 0, row 1
		"dec": {"-1230", "0"}, "dec0": {"-99999999999999999999", "0"},
		"dec18": {"-12345678901234567890123456789012345678", "1"}, "decf": {"-123456789012345678", "999999999999999999"},
	}
	for i, f := range tbl.Schema().Fields() {
		want, ok := decimals[f.Name]
		if !ok {
			continue
		}
		col := tbl.Column(i).Data().Chunk(0).(*array.Decimal128)
		for row, w := range want {
			if got := col.Value(row).BigInt().String(); got != w {
				t.Errorf("%s row %d: unscaled %s, want %s", f.Name, row, got, w)
			}
		}
	}
	rg := rdr.RowGroup(0)
	idx := rdr.MetaData().Schema.ColumnIndexByName("tsm")
	cr, err := rg.Column(idx)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]pq.Int96, 2)
	if _, n, err := cr.(*file.Int96ColumnChunkReader).ReadBatch(2, vals, nil, nil); err != nil || n != 2 {
		t.Fatalf("read int96: %d values, %v", n, err)
	}
	// 1969-12-31 is Julian day 2440587; 23:59:59.999 is 86399.999 s.
	if got := vals[0].ToTime(); !got.Equal(pre1970) {
		t.Errorf("INT96 tsm = %s, want %s", got, pre1970)
	}
	if day := binaryLE32(vals[0][8:]); day != 2440587 {
		t.Errorf("INT96 Julian day = %d, want 2440587", day)
	}
}

func binaryLE32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
