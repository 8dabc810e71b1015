package schema

import (
	"math/big"
	"reflect"
	"testing"
	"time"
)

const nestedSchema = `{"type":"record","name":"Outer","namespace":"ns","fields":[
	{"name":"id","type":"long"},
	{"name":"tags","type":{"type":"array","items":"string"}},
	{"name":"meta","type":{"type":"record","name":"Meta","fields":[
		{"name":"skip","type":{"type":"map","values":["null","double"]}},
		{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"when","type":["null",{"type":"long","logicalType":"timestamp-micros"}]},
		{"name":"amount","type":{"type":"fixed","name":"Amt","size":4,"logicalType":"decimal","precision":8,"scale":2}},
		{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}}]}},
	{"name":"again","type":"Meta"},
	{"name":"region","type":"string"}]}`

func nestedDatum(t *testing.T, s *Schema, when any) []byte {
	t.Helper()
	meta := func(ms int64) map[string]any {
		return map[string]any{
			"skip": map[string]any{"a": nil, "b": map[string]any{"double": 1.5}},
			"ts":   time.UnixMilli(ms).UTC(), "when": when,
			"amount": big.NewRat(-12345, 100), "kind": "B",
		}
	}
	b, err := s.Codec.BinaryFromNative(nil, map[string]any{
		"id": int64(7), "tags": []any{"x", "y"}, "meta": meta(-86_400_001), "again": meta(1_700_000_000_000), "region": "eu",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFieldNativeMatchesNative: the shortcut returns exactly what a full
// decode holds at the same path, for every kind of leaf and depth.
func TestFieldNativeMatchesNative(t *testing.T) {
	s := mustSchema(t, 1, nestedSchema)
	for _, when := range []any{nil, map[string]any{"long.timestamp-micros": time.UnixMicro(-5).UTC()}} {
		datum := nestedDatum(t, s, when)
		full, err := s.Native(datum)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range [][]string{
			{"id"}, {"tags"}, {"region"}, {"meta"}, {"meta", "skip"}, {"meta", "ts"}, {"meta", "when"},
			{"meta", "amount"}, {"meta", "kind"}, {"again", "ts"}, {"again", "kind"},
		} {
			want := full
			for _, name := range path {
				want = want.(map[string]any)[name]
			}
			got, ok := s.FieldNative(datum, path)
			if !ok {
				t.Fatalf("%v: shortcut could not answer", path)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%v = %#v, full decode has %#v", path, got, want)
			}
		}
	}
}

// TestFieldNativeDeclines: where the shortcut cannot answer it says so,
// and the caller decodes the whole datum.
func TestFieldNativeDeclines(t *testing.T) {
	s := mustSchema(t, 1, nestedSchema)
	good := nestedDatum(t, s, nil)
	tests := []struct {
		name  string
		datum []byte
		path  []string
	}{
		{"no such field", good, []string{"nope"}},
		{"no such nested field", good, []string{"meta", "nope"}},
		{"through an array", good, []string{"tags", "x"}},
		{"through a long", good, []string{"id", "x"}},
		{"empty path", good, nil},
		{"truncated before the field", good[:3], []string{"region"}},
		{"truncated inside the field", good[:len(good)-1], []string{"region"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, ok := s.FieldNative(tt.datum, tt.path); ok {
				t.Fatalf("answered %#v, want ok=false", v)
			}
		})
	}
}

func BenchmarkFieldNative(b *testing.B) {
	s, err := New(1, nestedSchema)
	if err != nil {
		b.Fatal(err)
	}
	meta := map[string]any{"skip": map[string]any{}, "ts": time.UnixMilli(1).UTC(), "when": nil,
		"amount": big.NewRat(1, 100), "kind": "A"}
	datum, err := s.Codec.BinaryFromNative(nil, map[string]any{"id": int64(1), "tags": []any{"a", "b", "c"},
		"meta": meta, "again": meta, "region": "eu"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("shortcut", func(b *testing.B) {
		for range b.N {
			if _, ok := s.FieldNative(datum, []string{"again", "ts"}); !ok {
				b.Fatal("no answer")
			}
		}
	})
	b.Run("full-decode", func(b *testing.B) {
		for range b.N {
			if _, err := s.Native(datum); err != nil {
				b.Fatal(err)
			}
		}
	})
}
