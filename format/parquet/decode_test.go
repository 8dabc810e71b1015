package parquet

import (
	"bytes"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

const failSchema = `{"type":"record","name":"F","fields":[
 {"name":"id","type":"long"},
 {"name":"flag","type":"boolean"},
 {"name":"n","type":"int"},
 {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
 {"name":"o","type":["null","string"]},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}},
 {"name":"wide","type":{"type":"fixed","name":"W","size":32,"logicalType":"decimal","precision":40,"scale":0}},
 {"name":"items","type":{"type":"array","items":{"type":"record","name":"I","fields":[
   {"name":"s","type":"string"},
   {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}}]}}},
 {"name":"m","type":{"type":"map","values":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}}},
 {"name":"nulls","type":{"type":"array","items":"null"}}
]}`

// failRow is a datum of failSchema field by field, so a test can put
// any bytes in any place.
type failRow struct {
	id, n, enum, branch, ts int64
	flag                    byte
	str                     string
	dec, wide               []byte
	items                   []failItem
	keys                    []string
	vals                    [][]byte
	itemCount, nullCount    int64 // block counts as written
	trailing                []byte
}

type failItem struct {
	s  string
	at int64
}

func goodRow(id int64) failRow {
	return failRow{id: id, n: 7, enum: 1, branch: 1, str: "x", ts: 1_700_000_000_000_000, flag: 1,
		dec: []byte{0x04, 0xd2}, wide: make([]byte, 32),
		items: []failItem{{"a", 1}, {"b", 2}}, itemCount: 2,
		keys: []string{"k", "j"}, vals: [][]byte{{1}, {0xff}}, nullCount: 3}
}

func (r failRow) encode() []byte {
	b := putLong(nil, r.id)
	b = append(b, r.flag)
	b = putLong(putLong(b, r.n), r.enum)
	if b = putLong(b, r.branch); r.branch == 1 {
		b = putBytes(b, []byte(r.str))
	}
	b = putBytes(putLong(b, r.ts), r.dec)
	b = append(b, r.wide...)
	if b = putLong(b, r.itemCount); r.itemCount != 0 {
		for _, it := range r.items {
			b = putLong(putBytes(b, []byte(it.s)), it.at)
		}
		b = putLong(b, 0)
	}
	if b = putLong(b, int64(len(r.keys))); len(r.keys) != 0 {
		for i, k := range r.keys {
			b = putBytes(putBytes(b, []byte(k)), r.vals[i])
		}
		b = putLong(b, 0)
	}
	if b = putLong(b, r.nullCount); r.nullCount != 0 {
		b = putLong(b, 0)
	}
	return append(b, r.trailing...)
}

// bigFixed is v in 32 bytes of two's complement.
func bigFixed(v *big.Int) []byte { return twos(v, 32, false) }

// TestRejectedDatumKeepsWriterUsable: for each kind of bad datum,
// WriteDatum fails the right way, nothing of the datum is staged (the
// file has exactly the good rows before and after, all columns even),
// and the old path agrees.
func TestRejectedDatumKeepsWriterUsable(t *testing.T) {
	ten40 := new(big.Int).Exp(big.NewInt(10), big.NewInt(40), nil)
	tests := []struct {
		name      string
		mod       func(*failRow)
		valuePath string // "" for a corrupt datum
		raw       []byte // instead of mod
	}{
		{name: "truncated", raw: goodRow(99).encode()[:20]},
		{name: "empty", raw: []byte{}},
		{name: "boolean byte 2", mod: func(r *failRow) { r.flag = 2 }},
		{name: "int beyond 32 bits", mod: func(r *failRow) { r.n = 1 << 31 }},
		{name: "enum index", mod: func(r *failRow) { r.enum = 2 }},
		{name: "negative union index", mod: func(r *failRow) { r.branch = -1 }},
		{name: "union index", mod: func(r *failRow) { r.branch = 2 }},
		{name: "trailing byte", mod: func(r *failRow) { r.trailing = []byte{0} }},
		{name: "duplicate map key", mod: func(r *failRow) { r.keys = []string{"k", "k"} }},
		{name: "block larger than datum", mod: func(r *failRow) { r.itemCount = 1000 }},
		{name: "zero-width block too large", mod: func(r *failRow) { r.nullCount = 1<<16 + 1 }},
		{name: "item truncated", mod: func(r *failRow) { r.itemCount = 3 }},
		{name: "timestamp beyond INT96", mod: func(r *failRow) { r.ts = 1 << 62 }, valuePath: "ts"},
		{name: "decimal digits", mod: func(r *failRow) { r.dec = []byte{0x27, 0x10} }, valuePath: "dec"},
		{name: "negative decimal digits", mod: func(r *failRow) { r.dec = []byte{0xd8, 0xf0} }, valuePath: "dec"},
		{name: "decimal256 digits", mod: func(r *failRow) { r.wide = bigFixed(ten40) }, valuePath: "wide"},
		{name: "nested timestamp", mod: func(r *failRow) { r.items[1].at = -1 << 62 }, valuePath: "items[].at"},
		{name: "map value digits", mod: func(r *failRow) { r.vals[1] = []byte{0, 0x27, 0x10} }, valuePath: "m{}"},
		{name: "value then corrupt", valuePath: "", mod: func(r *failRow) { r.ts, r.trailing = 1<<62, []byte{1} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := tt.raw
			if tt.mod != nil {
				r := goodRow(99)
				tt.mod(&r)
				bad = r.encode()
			}
			var buf bytes.Buffer
			w, err := NewWriter(&buf, mustSchema(t, failSchema), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.WriteDatum(goodRow(1).encode()); err != nil {
				t.Fatal(err)
			}
			before := builderLens(w)
			err = w.WriteDatum(bad)
			checkRejection(t, err, tt.valuePath)
			if after := builderLens(w); !slices.Equal(before, after) {
				t.Fatalf("builder lengths %v after the bad datum, %v before", after, before)
			}
			if old := outcome(newOracle(t, w.s, TimestampsInt96).write(bad)); old != outcome(err) {
				t.Errorf("old path: %s, new: %s", old, outcome(err))
			}
			if err := w.WriteDatum(goodRow(2).encode()); err != nil {
				t.Fatalf("next datum: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, rows := dump(t, buf.Bytes())
			lines := strings.Split(strings.TrimSuffix(rows, "\n"), "\n")
			if len(lines) != 2 || !strings.Contains(lines[0], `"id":1,`) || !strings.Contains(lines[1], `"id":2,`) {
				t.Fatalf("file rows:\n%s", rows)
			}
		})
	}
}

// builderLens lists the length of every builder of w, nested ones too.
func builderLens(w *Writer) []int {
	var lens []int
	var walk func(b array.Builder)
	walk = func(b array.Builder) {
		lens = append(lens, b.Len())
		switch b := b.(type) {
		case *array.StructBuilder:
			for i := range b.NumField() {
				walk(b.FieldBuilder(i))
			}
		case *array.MapBuilder:
			walk(b.KeyBuilder())
			walk(b.ItemBuilder())
		case *array.ListBuilder:
			walk(b.ValueBuilder())
		}
	}
	for _, f := range w.rb.Fields() {
		walk(f)
	}
	return lens
}

func checkRejection(t *testing.T, err error, valuePath string) {
	t.Helper()
	var ve *format.ValueError
	switch {
	case err == nil:
		t.Fatal("bad datum accepted")
	case valuePath == "":
		if !errors.Is(err, schema.ErrCorruptDatum) || errors.As(err, &ve) {
			t.Fatalf("err = %v, want a corrupt datum", err)
		}
	default:
		if !errors.As(err, &ve) || ve.Path != valuePath || errors.Is(err, schema.ErrCorruptDatum) {
			t.Fatalf("err = %v, want a ValueError at %s", err, valuePath)
		}
	}
}

// TestMapKeysSorted: entries land sorted by key whatever their order
// on the wire, including maps inside map values.
func TestMapKeysSorted(t *testing.T) {
	text := `{"type":"record","name":"R","fields":[
	 {"name":"mm","type":{"type":"map","values":{"type":"map","values":"int"}}}]}`
	s := mustSchema(t, text)
	datum, err := s.Codec.BinaryFromNative(nil, map[string]any{"mm": map[string]any{
		"b": map[string]any{"z": int32(1), "y": int32(2), "x": int32(3)},
		"a": map[string]any{"q": int32(4), "p": int32(5)},
		"c": map[string]any{}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteDatum(datum); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, rows := dump(t, buf.Bytes())
	want := `{"mm":[{"key":"a","value":[{"key":"p","value":5},{"key":"q","value":4}]},` +
		`{"key":"b","value":[{"key":"x","value":3},{"key":"y","value":2},{"key":"z","value":1}]},` +
		`{"key":"c","value":[]}]}` + "\n"
	if rows != want {
		t.Fatalf("rows\n%s\nwant\n%s", rows, want)
	}
}

// TestNoReferenceToDatum: the writer keeps nothing pointing into the
// caller's buffer once WriteDatum returns.
func TestNoReferenceToDatum(t *testing.T) {
	w, err := NewWriter(&bytes.Buffer{}, mustSchema(t, failSchema), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WriteDatum(goodRow(1).encode()); err != nil {
		t.Fatal(err)
	}
	if w.st.datum != nil {
		t.Fatal("state still holds the datum")
	}
}
