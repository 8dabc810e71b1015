package json

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

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
 {"name":"u","type":["null","int","Color",{"type":"long","logicalType":"timestamp-millis"}]},
 {"name":"nested","type":{"type":"record","name":"Inner","fields":[
   {"name":"a","type":"int"},
   {"name":"tags","type":{"type":"array","items":"string"}}]}},
 {"name":"onested","type":["null","Inner"]},
 {"name":"arr","type":{"type":"array","items":["null","long"]}},
 {"name":"m","type":{"type":"map","values":"int"}}
]}`

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

var leapDay = time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)

var rows = []map[string]any{{
	"b": true, "i": int32(math.MaxInt32), "l": int64(math.MaxInt64), "f": float32(1.5), "d": math.Inf(-1),
	"s": "héllo \"世界\" 🚀\n<&>\x01", "by": []byte{0, 1, 255}, "e": "GREEN", "fx": []byte("abcd"),
	"dt": leapDay, "tm": 23*time.Hour + 59*time.Minute + 59*time.Second + 999*time.Millisecond,
	"tu":  23*time.Hour + 59*time.Minute + 59*time.Second + 999999*time.Microsecond,
	"tsm": time.Date(1969, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
	"tsu": time.Date(1969, 12, 31, 23, 59, 59, 999_999_000, time.UTC),
	"ltm": leapDay.Add(12 * time.Hour).UnixMilli(), "ltu": int64(-1),
	"dec": rat("-12.30"), "dec0": rat("-99999999999999999999"), "dec18": rat("-12345678901234567890.123456789012345678"),
	"decf": rat("0.0005"), "id": "123e4567-e89b-12d3-a456-426614174000",
	"os": map[string]any{"string": "set"}, "u": map[string]any{"long.timestamp-millis": leapDay},
	"nested": map[string]any{"a": int32(1), "tags": []any{"x", ""}}, "onested": map[string]any{"t.Inner": map[string]any{"a": int32(2), "tags": []any{}}},
	"arr": []any{map[string]any{"long": int64(1)}, nil}, "m": map[string]any{"z": int32(-1), "ü": int32(2), "a": int32(0)},
}, {
	"b": false, "i": int32(math.MinInt32), "l": int64(math.MinInt64), "f": float32(math.NaN()), "d": -1e-300,
	"s": "", "by": []byte{}, "e": "RED", "fx": []byte{0, 0, 0, 0},
	"dt": time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), "tm": time.Duration(0), "tu": time.Duration(0),
	"tsm": time.Unix(0, 0), "tsu": time.Date(2262, 4, 11, 0, 0, 0, 1000, time.UTC),
	"ltm": int64(0), "ltu": int64(1),
	"dec": rat("0"), "dec0": rat("0"), "dec18": rat("0.000000000000000001"), "decf": rat("-99999999999999.9999"),
	"id": "", "os": nil, "u": map[string]any{"t.Color": "RED"},
	"nested": map[string]any{"a": int32(0), "tags": []any{}}, "onested": nil,
	"arr": []any{}, "m": map[string]any{},
}}

// want is the golden output, one line per row, checked field by field
// against the package doc.
var want = strings.Join([]string{
	`{"b":true,"i":2147483647,"l":9223372036854775807,"f":1.5,"d":"-Infinity",` +
		`"s":"héllo \"世界\" 🚀\n<&>\u0001","by":"AAH/","e":"GREEN","fx":"YWJjZA==",` +
		`"dt":"2024-02-29","tm":"23:59:59.999","tu":"23:59:59.999999",` +
		`"tsm":"1969-12-31T23:59:59.999Z","tsu":"1969-12-31T23:59:59.999999Z",` +
		`"ltm":"2024-02-29T12:00:00.000","ltu":"1969-12-31T23:59:59.999999",` +
		`"dec":"-12.30","dec0":"-99999999999999999999","dec18":"-12345678901234567890.123456789012345678",` +
		`"decf":"0.0005","id":"123e4567-e89b-12d3-a456-426614174000",` +
		`"os":"set","u":"2024-02-29T00:00:00.000Z","nested":{"a":1,"tags":["x",""]},"onested":{"a":2,"tags":[]},` +
		`"arr":[1,null],"m":{"a":0,"z":-1,"ü":2}}`,
	`{"b":false,"i":-2147483648,"l":-9223372036854775808,"f":"NaN","d":-1e-300,` +
		`"s":"","by":"","e":"RED","fx":"AAAAAA==",` +
		`"dt":"1969-12-31","tm":"00:00:00.000","tu":"00:00:00.000000",` +
		`"tsm":"1970-01-01T00:00:00.000Z","tsu":"2262-04-11T00:00:00.000001Z",` +
		`"ltm":"1970-01-01T00:00:00.000","ltu":"1970-01-01T00:00:00.000001",` +
		`"dec":"0.00","dec0":"0","dec18":"0.000000000000000001","decf":"-99999999999999.9999",` +
		`"id":"","os":null,"u":"RED","nested":{"a":0,"tags":[]},"onested":null,` +
		`"arr":[],"m":{}}`,
}, "\n") + "\n"

func mustSchema(t testing.TB, text string) *schema.Schema {
	t.Helper()
	s, err := schema.New(3, text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGolden(t *testing.T) {
	s := mustSchema(t, allTypes)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		datum, err := s.Codec.BinaryFromNative(nil, row)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteDatum(datum); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 || w.BytesBuffered() == 0 {
		t.Fatalf("wrote %d bytes before Flush, buffered %d", buf.Len(), w.BytesBuffered())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if !stdjson.Valid([]byte(line)) {
			t.Errorf("invalid JSON: %s", line)
		}
	}
}

// TestValueFailures: values that cannot be written are errors naming the
// field, and nothing of the record is kept.
func TestValueFailures(t *testing.T) {
	rec := func(typ string) string {
		return `{"type":"record","name":"R","fields":[{"name":"ok","type":"int"},{"name":"v","type":` + typ + `}]}`
	}
	tests := []struct {
		name, schema string
		value        any
	}{
		{"time-millis of 24h", rec(`{"type":"int","logicalType":"time-millis"}`), 24 * time.Hour},
		{"negative time-micros", rec(`{"type":"long","logicalType":"time-micros"}`), -time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSchema(t, tt.schema)
			w, _ := NewWriter(io.Discard, s, Options{})
			datum, err := s.Codec.BinaryFromNative(nil, map[string]any{"ok": int32(1), "v": tt.value})
			if err != nil {
				t.Fatal(err)
			}
			err = w.WriteDatum(datum)
			var ve *format.ValueError
			if !errors.As(err, &ve) || ve.Path != "v" {
				t.Fatalf("err = %v, want a ValueError at v", err)
			}
			if w.BytesBuffered() != 0 {
				t.Fatal("partial line kept after a failed record")
			}
		})
	}
}

// TestAppendMismatch: native values of the wrong shape (not produced by
// goavro for that schema) are errors, not panics.
func TestAppendMismatch(t *testing.T) {
	root, err := avsc.ParseStrict(rec1(`["null","int"]`))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		map[string]any{"v": "str"},                            // not a union map
		map[string]any{"v": map[string]any{"long": int64(1)}}, // no such branch
		map[string]any{"v": map[string]any{"int": "x"}},       // wrong Go type
		[]any{}, // not a record
	} {
		if _, err := Append(nil, root, v); err == nil {
			t.Errorf("Append(%v) succeeded", v)
		}
	}
}

func rec1(typ string) string {
	return `{"type":"record","name":"R","fields":[{"name":"v","type":` + typ + `}]}`
}

func TestWriterLifecycle(t *testing.T) {
	s := mustSchema(t, `{"type":"record","name":"R","fields":[{"name":"n","type":"long"}]}`)
	if _, err := NewWriter(io.Discard, s, Options{BufferBytes: -1}); err == nil {
		t.Fatal("negative buffer accepted")
	}
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, s, Options{BufferBytes: 10})
	datum, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": int64(123456)})
	for range 2 {
		if err := w.WriteDatum(datum); err != nil {
			t.Fatal(err)
		}
	}
	if buf.String() != "{\"n\":123456}\n{\"n\":123456}\n" || w.BytesBuffered() != 0 {
		t.Fatalf("buffer limit: wrote %q, holding %d", buf.String(), w.BytesBuffered())
	}
	if err := w.WriteDatum([]byte{0x80}); err == nil {
		t.Fatal("truncated datum accepted")
	}
	if err := w.Close(); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	if err := w.WriteDatum(datum); !errors.Is(err, format.ErrClosed) || err.Error() != "json: writer closed" {
		t.Fatalf("after close: %v", err)
	}
}

func BenchmarkWrite1KB(b *testing.B) {
	s := mustSchema(b, `{"type":"record","name":"E","fields":[{"name":"id","type":"long"},
	 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},{"name":"user","type":"string"},
	 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
	 {"name":"tags","type":{"type":"array","items":"string"}},{"name":"note","type":["null","string"]},
	 {"name":"payload","type":"string"}]}`)
	datum, err := s.Codec.BinaryFromNative(nil, map[string]any{
		"id": int64(1), "ts": time.UnixMilli(1_700_000_000_000), "user": "user-1", "amount": rat("1234.56"),
		"tags": []any{"a", "bb"}, "note": map[string]any{"string": "n"}, "payload": strings.Repeat("lorem ipsum ", 80),
	})
	if err != nil {
		b.Fatal(err)
	}
	w, _ := NewWriter(io.Discard, s, Options{})
	b.SetBytes(int64(len(datum)))
	for b.Loop() {
		if err := w.WriteDatum(datum); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// TestSchemalessValues: with no schema each datum is a value's JSON text
// (JsonConverter, schemas.enable=false), written on one line as the
// producer wrote it (keys' order, numbers' text, spaces); a value over
// several lines is compacted onto one. Multi-line text that is not JSON is
// an error and appends nothing (single-line text was checked by the
// converter and is not scanned again).
func TestSchemalessValues(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{
		"{\n  \"z\": 1,\n  \"a\": [1.50, \"x\\ny\"],\n  \"big\": 12345678901234567890\n}",
		`"a string"`, `42`, ` [ ] `, `{"nested":{"k":null}}`, "[1,\r2]",
	} {
		if err := w.WriteDatum([]byte(v)); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
	}
	if err := w.WriteDatum([]byte("{\"a\":\n")); err == nil || !strings.Contains(err.Error(), "a schemaless value is not JSON") {
		t.Errorf("truncated JSON over two lines: err = %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"a":[1.50,"x\ny"],"big":12345678901234567890}` + "\n" + `"a string"` + "\n42\n [ ] \n" + `{"nested":{"k":null}}` + "\n[1,2]\n"
	if buf.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
}

// BenchmarkWriteSchemaless1KB: one schemaless JSON value of 1 KB on one
// line, the common case; the converter has checked it already.
func BenchmarkWriteSchemaless1KB(b *testing.B) {
	value := []byte(`{"id":12345,"ts":1700000000000,"user":"user-1","amount":"1234.56","tags":["a","bb"],"note":"n","payload":"` +
		strings.Repeat("lorem ipsum ", 80) + `"}`)
	w, _ := NewWriter(io.Discard, nil, Options{})
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteDatum(value); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}
