package schema

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// richSchema covers every type; %X% marks where widenedSchema adds a field
// with a default to each record.
const richSchemaTemplate = `{"type":"record","name":"Rich","namespace":"t","fields":[
	{"name":"n","type":"null"},
	{"name":"b","type":"boolean"},
	{"name":"i","type":"int"},
	{"name":"l","type":"long"},
	{"name":"f","type":"float"},
	{"name":"d","type":"double"},
	{"name":"by","type":"bytes"},
	{"name":"s","type":"string"},
	{"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN","BLUE"]}},
	{"name":"fx","type":{"type":"fixed","name":"F3","size":3}},
	{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":30,"scale":5}},
	{"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},
	{"name":"day","type":{"type":"int","logicalType":"date"}},
	{"name":"inner","type":{"type":"record","name":"Inner","fields":[
		{"name":"a","type":"int"},
		{"name":"tags","type":{"type":"array","items":"string"}}%X%]}},
	{"name":"list","type":{"type":"array","items":"Inner"}},
	{"name":"byKey","type":{"type":"map","values":["null","Inner","double"]}},
	{"name":"u","type":["null","string","long","Color","F3",{"type":"array","items":"int"},{"type":"map","values":"bytes"}]},
	{"name":"tree","type":["null",{"type":"record","name":"Node","fields":[
		{"name":"v","type":"long"},
		{"name":"kids","type":{"type":"array","items":"Node"}}%X%]}]}%X%]}`

func richSchemas(t testing.TB) (plain, wide *Schema) {
	extra := `,{"name":"zz","type":["string","null"],"default":"z"}`
	plain = mustSchema(t, 1, strings.ReplaceAll(richSchemaTemplate, "%X%", ""))
	wide = mustSchema(t, 2, strings.ReplaceAll(richSchemaTemplate, "%X%", extra))
	return plain, wide
}

// gen builds a random raw native value of n.
func gen(n *avsc.Node, rng *rand.Rand, depth int) any {
	switch n.Kind {
	case avsc.Null:
		return nil
	case avsc.Boolean:
		return rng.IntN(2) == 1
	case avsc.Int:
		return []int32{0, -1, math.MinInt32, math.MaxInt32, rng.Int32() - rng.Int32()}[rng.IntN(5)]
	case avsc.Long:
		return []int64{0, -1, math.MinInt64, math.MaxInt64, rng.Int64() - rng.Int64()}[rng.IntN(5)]
	case avsc.Float:
		return math.Float32frombits(rng.Uint32()) // includes NaN payloads and infinities
	case avsc.Double:
		return math.Float64frombits(rng.Uint64())
	case avsc.Bytes:
		return randBytes(rng, rng.IntN(6))
	case avsc.String:
		return string(randBytes(rng, rng.IntN(6))) // not necessarily UTF-8
	case avsc.Enum:
		return n.Symbols[rng.IntN(len(n.Symbols))]
	case avsc.Fixed:
		return randBytes(rng, n.Size)
	case avsc.Array:
		out := make([]any, rng.IntN(maxLen(depth)))
		for i := range out {
			out[i] = gen(n.Items, rng, depth+1)
		}
		return out
	case avsc.Map:
		// Avro does not order map entries and goavro decodes into Go maps,
		// so only maps of at most one entry have a unique encoding.
		out := map[string]any{}
		for range rng.IntN(2) {
			out[string(randBytes(rng, 3))] = gen(n.Values, rng, depth+1)
		}
		return out
	case avsc.Record:
		out := make(map[string]any, len(n.Fields))
		for _, f := range n.Fields {
			out[f.Name] = gen(f.Type, rng, depth+1)
		}
		return out
	}
	b := n.Branches[rng.IntN(len(n.Branches))]
	if depth > 4 {
		b = n.Branches[0] // null: keeps recursive values finite
	}
	if b.Kind == avsc.Null {
		return nil
	}
	return map[string]any{rawKey(b): gen(b, rng, depth+1)}
}

func maxLen(depth int) int {
	if depth > 4 {
		return 1
	}
	return 4
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// Property: projecting onto the writer's own schema returns the datum, and
// a detour through a schema with extra defaulted fields at every level
// comes back to it too. Datums come from goavro's encoder (minimal varints,
// one block per array or map), for which the encoding is unique.
func TestProjectIdentityProperty(t *testing.T) {
	plain, wide := richSchemas(t)
	pp, err := parse(plain)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		datum, err := pp.raw.BinaryFromNative(nil, gen(pp.tree, rng, 0))
		if err != nil {
			t.Fatal(err)
		}
		same, err := Project(plain, plain, datum)
		if err != nil || !bytes.Equal(same, datum) {
			t.Fatalf("case %d: Project(w, w, d) = %x, %v; want %x", i, same, err, datum)
		}
		widened, err := Project(plain, wide, datum)
		if err != nil {
			t.Fatalf("case %d: widen: %v", i, err)
		}
		back, err := Project(wide, plain, widened)
		if err != nil || !bytes.Equal(back, datum) {
			t.Fatalf("case %d: round trip through wide = %x, %v; want %x", i, back, err, datum)
		}
	}
}

// Fuzz: any datum the writer decodes projects onto its own schema, and
// through the widened schema and back, to a datum with the same value
// (maps may come out in another order); anything else is a *DatumError.
func FuzzProjectIdentity(f *testing.F) {
	plain, wide := richSchemas(f)
	pp, err := parse(plain)
	if err != nil {
		f.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		d, err := pp.raw.BinaryFromNative(nil, gen(pp.tree, rng, 0))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(d)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, datum []byte) {
		out, err := Project(plain, plain, datum)
		if err != nil {
			var de *DatumError
			if !errors.As(err, &de) {
				t.Fatalf("Project = %v, want *DatumError", err)
			}
			return
		}
		want, _, _ := pp.raw.NativeFromBinary(datum)
		if got, _, err := pp.raw.NativeFromBinary(out); err != nil || !sameNative(got, want) {
			t.Fatalf("Project(w, w, %x) = %x: value %#v, want %#v (%v)", datum, out, got, want, err)
		}
		widened, err := Project(plain, wide, datum)
		if err != nil {
			t.Fatalf("widen: %v", err)
		}
		back, err := Project(wide, plain, widened)
		if err != nil {
			t.Fatalf("narrow: %v", err)
		}
		if got, _, err := pp.raw.NativeFromBinary(back); err != nil || !sameNative(got, want) {
			t.Fatalf("round trip of %x = %x: value %#v, want %#v (%v)", datum, back, got, want, err)
		}
	})
}

// sameNative is reflect.DeepEqual with floats compared by bits, so that a
// NaN equals itself when its payload is kept.
func sameNative(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameNative(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameNative(x[i], y[i]) {
				return false
			}
		}
		return true
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}
