package avsc

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/linkedin/goavro/v2"
)

func TestParseFailures(t *testing.T) {
	tests := []struct{ name, text, path string }{
		{"not json", `{`, ""},
		{"top-level not a record", `"string"`, ""},
		{"unknown type", `{"type":"record","name":"R","fields":[{"name":"a","type":"Nope"}]}`, "a"},
		{"recursive", `{"type":"record","name":"R","fields":[{"name":"a","type":["null","R"]}]}`, "a"},
		{"union in union", `{"type":"record","name":"R","fields":[{"name":"a","type":["null",["int"]]}]}`, "a"},
		{"defined twice", `{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"fixed","name":"F","size":1}},{"name":"b","type":{"type":"fixed","name":"F","size":1}}]}`, "b"},
		{"field without type", `{"type":"record","name":"R","fields":[{"name":"a"}]}`, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			var se *SchemaError
			if !errors.As(err, &se) || se.Path != tt.path || !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("Parse = %v, want SchemaError at %q", err, tt.path)
			}
		})
	}
}

// TestLogicalTypes: valid annotations are recognised; ones on the wrong
// base type or with invalid decimal parameters are ignored (Avro spec).
func TestLogicalTypes(t *testing.T) {
	tests := []struct {
		typ  string
		want Logical
	}{
		{`{"type":"int","logicalType":"date"}`, Date},
		{`{"type":"long","logicalType":"date"}`, None},
		{`{"type":"long","logicalType":"local-timestamp-micros"}`, LocalTimestampMicros},
		{`{"type":"string","logicalType":"uuid"}`, UUID},
		{`{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}`, None},
		{`{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}`, Decimal},
		{`{"type":"bytes","logicalType":"decimal","precision":4,"scale":5}`, None},
		{`{"type":"bytes","logicalType":"decimal","scale":1}`, None},
		{`{"type":"fixed","name":"D","size":4,"logicalType":"decimal","precision":9}`, Decimal},
		{`{"type":"string","logicalType":"x-custom"}`, None},
	}
	for _, tt := range tests {
		n, err := Parse(`{"type":"record","name":"R","fields":[{"name":"a","type":` + tt.typ + `}]}`)
		if err != nil {
			t.Fatalf("%s: %v", tt.typ, err)
		}
		if got := n.Fields[0].Type.Logical; got != tt.want {
			t.Errorf("%s: logical %d, want %d", tt.typ, got, tt.want)
		}
	}
}

// TestUnionKeysMatchGoavro: every branch name computed by UnionKey is the
// key goavro puts in native union values.
func TestUnionKeysMatchGoavro(t *testing.T) {
	branches := []string{`"int"`, `{"type":"int","logicalType":"date"}`, `{"type":"long","logicalType":"timestamp-micros"}`,
		`{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}`, `{"type":"fixed","name":"ns.F","size":2}`,
		`{"type":"enum","name":"E","symbols":["A"]}`, `{"type":"array","items":"int"}`, `{"type":"map","values":"int"}`,
		`{"type":"record","name":"Q","fields":[]}`, `{"type":"long","logicalType":"local-timestamp-millis"}`}
	checked := 0
	for _, b := range branches {
		text := `{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":["null",` + b + `]}]}`
		root, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		codec, err := goavro.NewCodec(text)
		if err != nil {
			t.Fatal(err)
		}
		// Branch index 1, then the smallest value of each type.
		for _, tail := range [][]byte{{0}, {2, 1, 2}, {0, 0}} {
			v, _, err := codec.NativeFromBinary(append([]byte{2}, tail...))
			if err != nil {
				continue
			}
			for key := range v.(map[string]any)["a"].(map[string]any) {
				if _, ok := root.Fields[0].Type.Branch(key); !ok {
					t.Errorf("%s: goavro key %q not found", b, key)
				}
				checked++
			}
			break
		}
	}
	if checked != len(branches) {
		t.Fatalf("checked %d of %d branches", checked, len(branches))
	}
}

func TestDecimals(t *testing.T) {
	tests := []struct {
		rat   string
		scale int
		want  string
	}{
		{"-12.3", 2, "-12.30"}, {"1/200", 3, "0.005"}, {"42", 0, "42"}, {"-1/1000000000000000000", 18, "-0.000000000000000001"}, {"0", 2, "0.00"},
	}
	for _, tt := range tests {
		r, _ := new(big.Rat).SetString(tt.rat)
		u, err := Unscaled(r, tt.scale)
		if err != nil {
			t.Fatal(err)
		}
		if got := DecimalString(u, tt.scale); got != tt.want {
			t.Errorf("%s scale %d = %s, want %s", tt.rat, tt.scale, got, tt.want)
		}
	}
	if _, err := Unscaled(big.NewRat(1, 3), 2); err == nil {
		t.Error("1/3 accepted at scale 2")
	}
}

// TestParseStrictRejectsNestedType: goavro reads {"type":<schema>} as that
// schema, so Parse must too; Java Avro (Hive) refuses it, so ParseStrict
// must. Everything else parses the same.
func TestParseStrictRejectsNestedType(t *testing.T) {
	nested := `{"type":"record","name":"R","fields":[{"name":"a","type":{"type":{"type":"int"}}}]}`
	root, err := Parse(nested)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if k := root.Fields[0].Type.Kind; k != Int {
		t.Fatalf("nested type parsed as %v, want int", k)
	}
	if _, err := goavro.NewCodec(nested); err != nil {
		t.Fatalf("goavro no longer accepts the nested form, Parse need not: %v", err)
	}
	_, err = ParseStrict(nested)
	var se *SchemaError
	if !errors.As(err, &se) || se.Path != "a" || !strings.Contains(se.Msg, `"type" must be a string`) {
		t.Fatalf("ParseStrict = %v, want a SchemaError at a", err)
	}
	wrapped := `{"type":{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}}`
	if root, err := Parse(wrapped); err != nil || root.Name != "R" {
		t.Fatalf("Parse(wrapped record) = %v, %v", root, err)
	}
	if _, err := ParseStrict(wrapped); err == nil || !strings.Contains(err.Error(), "top level must be a record") {
		t.Fatalf("ParseStrict(wrapped record) = %v, want the top-level error", err)
	}
	plain := `{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"int"}}]}`
	if _, err := ParseStrict(plain); err != nil {
		t.Fatalf("ParseStrict(plain): %v", err)
	}
}

// TestFieldDocs: field docs are kept for Hive column comments.
func TestFieldDocs(t *testing.T) {
	root, err := Parse(`{"type":"record","name":"R","doc":"record doc","fields":[
		{"name":"a","type":"int","doc":"Preis in €"},
		{"name":"b","type":"int"},
		{"name":"c","type":"int","doc":7}]}`)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"Preis in €", "", ""} {
		if got := root.Fields[i].Doc; got != want {
			t.Errorf("field %s doc %q, want %q", root.Fields[i].Name, got, want)
		}
	}
}

// TestParseFailureMessages: the messages say what is wrong; hive shows
// them to the user unchanged.
func TestParseFailureMessages(t *testing.T) {
	rec := func(fields string) string { return `{"type":"record","name":"R","fields":[` + fields + `]}` }
	tests := []struct{ name, text, want string }{
		{"top-level array", `{"type":"array","items":"int"}`, "top level must be a record"},
		{"top-level union", `["null",` + rec(`{"name":"a","type":"int"}`) + `]`, "top level must be a record"},
		{"top-level nested non-record", `{"type":{"type":"int"}}`, "top level must be a record"},
		{"field not object", rec(`"a"`), "field is not an object"},
		{"empty field name", rec(`{"name":"","type":"int"}`), `invalid field name ""`},
		{"field without type", rec(`{"name":"a"}`), "field without type"},
		{"fixed without size", rec(`{"name":"a","type":{"type":"fixed","name":"F"}}`), "without a valid size"},
		{"empty union", rec(`{"name":"a","type":[]}`), "empty union"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestReadAcceptsWhatFormatsRefuse: Read models every schema goavro reads
// (recursion as a cycle, any top level) and reports, as mapErr, the error
// Parse gives for it.
func TestReadAcceptsWhatFormatsRefuse(t *testing.T) {
	recursive := `{"type":"record","name":"R","fields":[{"name":"next","type":["null","R"]}]}`
	root, mapErr, err := Read(recursive)
	if err != nil {
		t.Fatal(err)
	}
	if next, _ := root.Fields[0].Type.Nullable(); next != root {
		t.Fatalf("R.next is %+v, want R itself", next)
	}
	_, perr := Parse(recursive)
	if mapErr == nil || mapErr.Error() != perr.Error() || !strings.Contains(perr.Error(), "recursive type R") {
		t.Fatalf("mapErr %v, Parse error %v", mapErr, perr)
	}
	for _, text := range []string{`"string"`, `["null","int"]`, `{"type":"array","items":"long"}`} {
		root, mapErr, err := Read(text)
		if err != nil || root == nil || mapErr == nil || !strings.Contains(mapErr.Error(), "top level must be a record") {
			t.Errorf("Read(%s) = %v, %v, %v", text, root, mapErr, err)
		}
	}
	if _, _, err := Read(`{"type":"record","name":"R","fields":[{"name":"a","type":"Nope"}]}`); err == nil {
		t.Error("unknown type read")
	}
}

// TestReadEvolutionAttributes: what schema resolution needs is kept as
// written: aliases, exact defaults, enum defaults, declared logical types.
func TestReadEvolutionAttributes(t *testing.T) {
	root, _, err := Read(`{"type":"record","name":"R","namespace":"n","aliases":["old.Q"],"fields":[
		{"name":"big","aliases":["was"],"type":"long","default":9007199254740993},
		{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"],"default":"A"}},
		{"name":"ts","type":"long","logicalType":"timestamp-millis"},
		{"name":"x","type":{"type":"string","logicalType":"x-custom"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	f := root.Fields
	switch {
	case len(root.Aliases) != 1 || root.Aliases[0] != "old.Q":
		t.Errorf("record aliases %q", root.Aliases)
	case len(f[0].Aliases) != 1 || f[0].Aliases[0] != "was" || !f[0].HasDefault || f[0].Default.(json.Number) != "9007199254740993":
		t.Errorf("field big: %+v", f[0])
	case f[1].Type.EnumDefault == nil || *f[1].Type.EnumDefault != "A" || f[1].HasDefault:
		t.Errorf("enum: %+v", f[1])
	case f[2].Type.Logical != None || f[2].Type.Declared.LogicalType != "timestamp-millis":
		t.Errorf("field-level logical type: %+v", f[2].Type)
	case f[3].Type.Logical != None || f[3].Type.Declared.LogicalType != "x-custom":
		t.Errorf("unknown logical type: %+v", f[3].Type)
	}
}

// TestCanonicalForms: Parsing Canonical Form drops docs, aliases and
// defaults and writes a named type once; CanonicalLogical keeps the
// declared logical type attributes.
func TestCanonicalForms(t *testing.T) {
	root, _, err := Read(`{"type":"record","name":"R","namespace":"n","doc":"d","fields":[
		{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2},"default":"\u0000"},
		{"name":"next","type":["null","R"]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	const canonical = `{"name":"n.R","type":"record","fields":[{"name":"d","type":"bytes"},{"name":"next","type":["null","n.R"]}]}`
	const logical = `{"name":"n.R","type":"record","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}},{"name":"next","type":["null","n.R"]}]}`
	if got := root.Canonical(); got != canonical {
		t.Errorf("Canonical = %s", got)
	}
	if got := root.CanonicalLogical(); got != logical {
		t.Errorf("CanonicalLogical = %s", got)
	}
}
