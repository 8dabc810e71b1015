package transform

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// FieldPathNotationTest (apache/kafka, connect/transforms/src/test/java/
// org/apache/kafka/connect/transforms/field/FieldPathNotationTest.java):
// the same paths and the steps Connect's SingleFieldPath builds from them.
func TestFieldPathAsKafkaTest(t *testing.T) {
	for _, tt := range []struct {
		path string
		v2   bool
		want []string
	}{
		// shouldBuildV1WithDotsAndBacktickPair
		{"foo.bar.baz", false, []string{"foo.bar.baz"}},
		{"foo`bar`", false, []string{"foo`bar`"}},
		{"foo.`bar.baz`", false, []string{"foo.`bar.baz`"}},
		// shouldIncludeEmptyFieldNames
		{"..", true, []string{"", "", ""}},
		{"foo..", true, []string{"foo", "", ""}},
		{".bar.", true, []string{"", "bar", ""}},
		{"..baz", true, []string{"", "", "baz"}},
		// shouldBuildV2WithEmptyPath, WithoutDots, WhenIncludesDots
		{"", true, nil},
		{"foobarbaz", true, []string{"foobarbaz"}},
		{"foo.bar.baz", true, []string{"foo", "bar", "baz"}},
		// shouldBuildV2WithoutWrappingBackticks
		{"foo`bar`baz", true, []string{"foo`bar`baz"}},
		// shouldBuildV2WhenIncludesDotsAndBacktickPair
		{"`foo.bar.baz`", true, []string{"foo.bar.baz"}},
		{"foo.`bar.baz`", true, []string{"foo", "bar.baz"}},
		{"`foo.bar`.baz", true, []string{"foo.bar", "baz"}},
		{"foo.`bar`.baz", true, []string{"foo", "bar", "baz"}},
		// shouldBuildV2AndIgnoreBackticksThatAreNotWrapping
		{"foo.``bar.baz`", true, []string{"foo", "`bar.baz"}},
		{"foo.`bar.baz``", true, []string{"foo", "bar.baz`"}},
		{"foo.`ba`r.baz`", true, []string{"foo", "ba`r.baz"}},
		{"foo.ba`r.baz", true, []string{"foo", "ba`r", "baz"}},
		{"foo.``bar``.baz", true, []string{"foo", "`bar`", "baz"}},
		{"``foo.bar.baz``", true, []string{"`foo.bar.baz`"}},
		// shouldBuildV2AndEscapeBackticks
		{"foo.`bar\\`.baz`", true, []string{"foo", "bar`.baz"}},
		{"foo.`bar.`baz`", true, []string{"foo", "bar.`baz"}},
		{"foo.`bar\\`.`baz`", true, []string{"foo", "bar`.`baz"}},
		{"foo.`bar\\\\`.\\`baz`", true, []string{"foo", "bar\\`.\\`baz"}},
	} {
		got, err := fieldPath(tt.path, tt.v2)
		if err != nil || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
			t.Errorf("fieldPath(%q, v2=%v) = %q, %v; want %q", tt.path, tt.v2, got, err, tt.want)
		}
	}
}

// FieldPathNotationTest.shouldFailV2WhenIncompleteBackticks: the same
// paths fail, naming the opening backtick's position.
func TestFieldPathIncompleteBackticks(t *testing.T) {
	for path, at := range map[string]int{"`foo.bar.baz": 0, "foo.`bar.baz": 4, "foo.bar.`baz": 8, "foo.bar.`baz\\`": 8} {
		_, err := fieldPath(path, true)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("incomplete backtick pair in path %q at position %d", path, at)) {
			t.Errorf("fieldPath(%q) err = %v, want the backtick at %d named", path, err, at)
		}
	}
}

// nullableNestedSchema: a nullable record on the way (o), a nullable leaf
// (o.n) and a required one (o.r), beside nestedSchema's required records.
const nullableNestedSchema = `{"type":"record","name":"top","fields":[
 {"name":"A","type":{"type":"record","name":"a","fields":[{"name":"B","type":{"type":"record","name":"b","fields":[{"name":"int32","type":"int"},{"name":"string","type":"string"}]}},{"name":"after","type":"long"}]}},
 {"name":"o","type":["null",{"type":"record","name":"o","fields":[{"name":"r","type":"string"},{"name":"n","type":["null","long"]}]}]},
 {"name":"magic","type":"int"}]}`

// ExtractFieldTest.withSchemaAndNestedPath (apache/kafka, connect/transforms/
// src/test/java/org/apache/kafka/connect/transforms/ExtractFieldTest.java):
// "magic.foo" under V2 is the nested field's value with its schema; here
// deeper paths, the fields around the nested one, and a null on the way
// (Connect's SingleFieldPath.valueFrom answers null).
func TestExtractFieldNestedPath(t *testing.T) {
	s := mustSchema(t, nullableNestedSchema)
	o := goavro.Union("o", map[string]any{"r": "req", "n": goavro.Union("long", int64(7))})
	full := map[string]any{"A": map[string]any{"B": map[string]any{"int32": int32(8), "string": "x"}, "after": int64(9)}, "o": o, "magic": int32(42)}
	noO := map[string]any{"A": full["A"], "o": nil, "magic": int32(1)}
	for _, tt := range []struct {
		name, field string
		value       map[string]any
		want        any
		wantSchema  string
	}{
		{"two levels", "A.B", full, map[string]any{"int32": int32(8), "string": "x"}, `"name":"b"`},
		{"three levels, the last field", "A.B.string", full, "x", `"string"`},
		{"a field after a nested record", "A.after", full, int64(9), `"long"`},
		{"through a nullable record", "o.n", full, goavro.Union("long", int64(7)), `["null","long"]`},
		{"a null on the way", "o.n", noO, nil, `["null","long"]`},
		{"backticks around a plain name", "`A`.`B`.int32", full, int32(8), `"int"`},
		{"one step under V2 is a top-level field", "magic", full, int32(42), `"int"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := recordOf(t, s, tt.value, 0)
			mustApply(t, chainOf(t, "ExtractField$Value", "field", tt.field, "field.syntax.version", "v2"), r)
			equal(t, tt.field, decode(t, r.Value), tt.want)
			if !strings.Contains(r.Value.Schema.Text, tt.wantSchema) {
				t.Errorf("schema %s, want %s in it", r.Value.Schema.Text, tt.wantSchema)
			}
		})
	}
}

// ExtractFieldTest.nonExistentNestedFieldWithSchemaShouldFail and the
// paths hdfs-sink refuses: each a record's failure (errors.tolerance)
// naming the path, or a config error naming the key.
func TestExtractFieldNestedPathFailures(t *testing.T) {
	s := mustSchema(t, nullableNestedSchema)
	value := map[string]any{"A": map[string]any{"B": map[string]any{"int32": int32(8), "string": "x"}, "after": int64(9)}, "o": nil, "magic": int32(42)}
	for _, tt := range []struct{ field, want string }{
		{"A.nonexistent", `has no field "nonexistent" (path "A.nonexistent")`},
		{"magic.foo", `field "magic" of schema `},
		{"magic.foo", `is an Avro int, not a record: path "magic.foo"`},
		{"o.r", `passes a nullable record but its field is not nullable`},
	} {
		c := chainOf(t, "ExtractField$Value", "field", tt.field, "field.syntax.version", "V2")
		_, err := c.Apply(recordOf(t, s, value, 0))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.field, err, tt.want)
		}
	}
	// Under V1 (the default) a dotted name is one field's name.
	_, err := chainOf(t, "ExtractField$Value", "field", "A.B").Apply(recordOf(t, s, value, 0))
	if err == nil || !strings.Contains(err.Error(), `no field "A.B"`) {
		t.Errorf("V1 A.B: err = %v", err)
	}
	for _, tt := range []struct {
		props []string
		want  string
	}{
		{[]string{"field", "A", "field.syntax.version", "V3"}, `transforms.t.field.syntax.version: must be V1 or V2, not "V3"`},
		{[]string{"field", "`A.B", "field.syntax.version", "V2"}, "transforms.t.field: incomplete backtick pair"},
	} {
		if _, err := New(specOf("ExtractField$Value", tt.props...), nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.props, err, tt.want)
		}
	}
}

// TestExtractFieldInFusedChains: a chain fuses its rewriters into one
// plan; the fused chain must write what the transforms write applied one
// by one. ExtractField's output is a field's encoding, not a record made
// field by field: a rewriter fused after it once indexed its one op by the
// extracted record's fields (index out of range: a panic per record).
func TestExtractFieldInFusedChains(t *testing.T) {
	s := mustSchema(t, nullableNestedSchema)
	value := map[string]any{"A": map[string]any{"B": map[string]any{"int32": int32(8), "string": "x"}, "after": int64(9)}, "o": nil, "magic": int32(42)}
	insert := []string{"InsertField$Value", "static.field", "s", "static.value", "v"}
	for _, tt := range []struct {
		name  string
		chain [][]string
	}{
		{"extract a record, then insert", [][]string{{"ExtractField$Value", "field", "A"}, insert}},
		{"extract a nested record, then insert", [][]string{{"ExtractField$Value", "field", "A.B", "field.syntax.version", "V2"}, insert}},
		{"extract, then drop a field", [][]string{{"ExtractField$Value", "field", "A"}, {"ReplaceField$Value", "exclude", "after"}}},
		{"drop a field, then extract", [][]string{{"ReplaceField$Value", "exclude", "magic"}, {"ExtractField$Value", "field", "A.after", "field.syntax.version", "V2"}}},
		{"cast, then extract", [][]string{{"Cast$Value", "spec", "magic:string"}, {"ExtractField$Value", "field", "magic"}}},
		{"extract twice", [][]string{{"ExtractField$Value", "field", "A"}, {"ExtractField$Value", "field", "B.string", "field.syntax.version", "V2"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var specs []configs.TransformSpec
			one := recordOf(t, s, value, 0)
			for i, step := range tt.chain {
				spec := configs.TransformSpec{Alias: fmt.Sprint("t", i), Class: step[0], Props: propsOf(step[1:]...)}
				specs = append(specs, spec)
				mustApply(t, chainOf(t, step[0], step[1:]...), one)
			}
			fused, err := New(specs, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := recordOf(t, s, value, 0)
			mustApply(t, fused, r)
			if r.Value.Schema.Text != one.Value.Schema.Text || !bytes.Equal(r.Value.Bytes, one.Value.Bytes) {
				t.Fatalf("fused chain wrote %v (%s), one by one %v (%s)", decode(t, r.Value), r.Value.Schema.Text, decode(t, one.Value), one.Value.Schema.Text)
			}
		})
	}
}
