package transform

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

const magicSchema = `{"type":"record","name":"name","doc":"doc","fields":[{"name":"magic","type":["null","long"],"default":null}]}`

// InsertFieldTest.copySchemaAndInsertConfiguredFields (apache/kafka,
// connect/transforms/src/test/java/org/apache/kafka/connect/transforms/
// InsertFieldTest.java): "!" required, "?" and no suffix optional, the
// fields appended in Connect's order, the record's name and doc kept.
func TestInsertFieldAsKafkaTest(t *testing.T) {
	c := chainOf(t, "InsertField$Value", "topic.field", "topic_field!", "partition.field", "partition_field",
		"timestamp.field", "timestamp_field?", "static.field", "instance_id", "static.value", "my-instance-id")
	s := mustSchema(t, magicSchema)
	r := recordOf(t, s, map[string]any{"magic": goavro.Union("long", int64(42))}, 789)
	mustApply(t, c, r)
	got := decode(t, r.Value).(map[string]any)
	equal(t, "magic", got["magic"], goavro.Union("long", int64(42)))
	equal(t, "topic_field", got["topic_field"], "test")
	equal(t, "partition_field", got["partition_field"], goavro.Union("int", int32(0)))
	equal(t, "timestamp_field", got["timestamp_field"], goavro.Union("long.timestamp-millis", time.UnixMilli(789).UTC()))
	equal(t, "instance_id", got["instance_id"], goavro.Union("string", "my-instance-id"))
	for _, want := range []string{`"name":"name"`, `"doc":"doc"`, `{"name":"topic_field","type":"string"}`} {
		if !strings.Contains(r.Value.Schema.Text, want) {
			t.Errorf("schema %s lacks %s", r.Value.Schema.Text, want)
		}
	}
	equal(t, "schema id", r.Value.Schema.ID, s.ID)

	// "Exercise caching": a second record of the schema gets the same schema.
	r2 := recordOf(t, s, map[string]any{"magic": nil}, 0)
	mustApply(t, c, r2)
	if r2.Value.Schema != r.Value.Schema {
		t.Error("the second record's schema is not the cached one")
	}
	equal(t, "no timestamp", decode(t, r2.Value).(map[string]any)["timestamp_field"], nil)
}

// InsertFieldTest.insertConfiguredFieldsIntoTombstoneEventWithSchemaLeavesValueUnchanged.
func TestInsertFieldLeavesTombstones(t *testing.T) {
	c := chainOf(t, "InsertField$Value", "topic.field", "topic_field!")
	r := &Record{Topic: "test"}
	mustApply(t, c, r)
	if !r.Value.IsNull() {
		t.Errorf("tombstone became %v", r.Value)
	}
}

// InsertFieldTest.topLevelStructRequired, and a required field with no
// value: a record's own fault (ErrTransform), naming the transform.
func TestInsertFieldFailures(t *testing.T) {
	for _, tt := range []struct {
		name, schema string
		native       any
		ts           int64
		want         string
	}{
		{"top level not a record", `"int"`, int32(42), 1, "only records"},
		{"required timestamp missing", magicSchema, map[string]any{"magic": nil}, 0, `"ts" is required`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := chainOf(t, "InsertField$Value", "timestamp.field", "ts!")
			s := mustSchema(t, tt.schema)
			_, err := c.Apply(recordOf(t, s, tt.native, tt.ts))
			if !errors.Is(err, ErrTransform) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `transform "t"`) {
				t.Fatalf("err = %v, want ErrTransform with %q", err, tt.want)
			}
		})
	}
}

const replaceSchema = `{"type":"record","name":"r","fields":[{"name":"dont","type":"string"},{"name":"abc","type":"int"},{"name":"foo","type":"boolean"},{"name":"etc","type":"string"}]}`

// ReplaceFieldTest.withSchema (exclude "dont", renames abc:xyz,foo:bar)
// and its include variant.
func TestReplaceFieldAsKafkaTest(t *testing.T) {
	value := map[string]any{"dont": "whatever", "abc": int32(42), "foo": true, "etc": "etc"}
	for _, tt := range []struct {
		name  string
		props []string
		want  map[string]any
	}{
		{"exclude and renames", []string{"exclude", "dont", "renames", "abc:xyz,foo:bar"},
			map[string]any{"xyz": int32(42), "bar": true, "etc": "etc"}},
		{"include and renames", []string{"include", "abc,foo", "renames", "abc:xyz,foo:bar"},
			map[string]any{"xyz": int32(42), "bar": true}},
		{"blacklist alias", []string{"blacklist", "dont,etc"}, map[string]any{"abc": int32(42), "foo": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := chainOf(t, "ReplaceField$Value", tt.props...)
			r := recordOf(t, mustSchema(t, replaceSchema), value, 0)
			mustApply(t, c, r)
			equal(t, "value", decode(t, r.Value), tt.want)
		})
	}
}

const typesSchema = `{"type":"record","name":"r","fields":[
 {"name":"i","type":"int"},{"name":"l","type":["null","long"]},{"name":"f","type":"float"},{"name":"d","type":"double"},
 {"name":"b","type":"boolean"},{"name":"s","type":"string"},{"name":"n","type":["null","string"]}]}`

var typesValue = map[string]any{"i": int32(42), "l": goavro.Union("long", int64(42)), "f": float32(42.5), "d": 42.9,
	"b": true, "s": "42", "n": nil}

// MaskFieldTest.testWithSchema: each type masked to its empty value
// (0, false, ""), nulls stay null; with replacement, numbers and strings
// take it (testReplacementWithSchema).
func TestMaskFieldAsKafkaTest(t *testing.T) {
	c := chainOf(t, "MaskField$Value", "fields", "i,l,f,d,b,s,n")
	r := recordOf(t, mustSchema(t, typesSchema), typesValue, 0)
	mustApply(t, c, r)
	equal(t, "masked", decode(t, r.Value), map[string]any{"i": int32(0), "l": goavro.Union("long", int64(0)), "f": float32(0), "d": 0.0,
		"b": false, "s": "", "n": nil})

	c = chainOf(t, "MaskField$Value", "fields", "i,s", "replacement", "123")
	r = recordOf(t, mustSchema(t, typesSchema), typesValue, 0)
	mustApply(t, c, r)
	got := decode(t, r.Value).(map[string]any)
	equal(t, "i", got["i"], int32(123))
	equal(t, "s", got["s"], "123")

	if _, err := New(specOf("MaskField$Value", "fields", "b", "replacement", "x"), nil); err == nil {
		c := chainOf(t, "MaskField$Value", "fields", "b", "replacement", "x")
		if _, err := c.Apply(recordOf(t, mustSchema(t, typesSchema), typesValue, 0)); !errors.Is(err, ErrTransform) {
			t.Errorf("a replacement for a boolean: err = %v", err)
		}
	}
}

// CastTest.castFieldsWithSchema: strings parse, floats truncate, booleans
// are 1/0, numbers are true when not 0, to string is String.valueOf
// (42.9 → "42.9"), optional fields stay optional.
func TestCastAsKafkaTest(t *testing.T) {
	c := chainOf(t, "Cast$Value", "spec", "i:string,l:int32,f:int64,d:int8,b:int32,s:int64,n:float64")
	r := recordOf(t, mustSchema(t, typesSchema), typesValue, 0)
	mustApply(t, c, r)
	equal(t, "cast", decode(t, r.Value), map[string]any{"i": "42", "l": goavro.Union("int", int32(42)), "f": int64(42),
		"d": int32(42), "b": int32(1), "s": int64(42), "n": nil})

	c = chainOf(t, "Cast$Value", "spec", "d:string,f:string,i:boolean,s:float32")
	r = recordOf(t, mustSchema(t, typesSchema), typesValue, 0)
	mustApply(t, c, r)
	got := decode(t, r.Value).(map[string]any)
	equal(t, "d", got["d"], "42.9")
	equal(t, "f", got["f"], "42.5")
	equal(t, "i", got["i"], true)
	equal(t, "s", got["s"], float32(42))

	// CastTest.castWholeRecordValueWithSchemaString etc.: whole-value casts
	// need a primitive top level, which no output format writes.
	if _, err := New(specOf("Cast$Value", "spec", "int64"), nil); err == nil || !strings.Contains(err.Error(), "transforms.t.spec") {
		t.Errorf("whole-value cast: err = %v", err)
	}
	c = chainOf(t, "Cast$Value", "spec", "s:int32")
	if _, err := c.Apply(recordOf(t, mustSchema(t, typesSchema), map[string]any{"i": int32(1), "l": nil, "f": float32(0), "d": 0.0,
		"b": false, "s": "x", "n": nil}, 0)); !errors.Is(err, ErrTransform) {
		t.Errorf("unparseable string: err = %v", err)
	}
}

func TestJavaFloat(t *testing.T) {
	for f, want := range map[float64]string{42: "42.0", 42.9: "42.9", 1e7: "1.0E7", 1.5e-5: "1.5E-5", 0.001: "0.001", -3: "-3.0"} {
		equal(t, "javaFloat", javaFloat(f, 64), want)
	}
}

// TestRewritesCheckTheDatum: the sink skips its own scan when the chain
// rewrites every value (Chain.Validates), so each plan, fused or not,
// must refuse what Schema.Validate refuses: truncated datums, trailing
// bytes, bad union indexes.
func TestRewritesCheckTheDatum(t *testing.T) {
	s := mustSchema(t, typesSchema)
	good := encode(t, s, typesValue)
	for _, class := range [][]string{
		{"InsertField$Value", "topic.field", "t"},       // in order: streamed
		{"ValueToKey", "fields", "s,i"},                 // out of order: spans
		{"SetSchemaMetadata$Value", "schema.name", "x"}, // datum unchanged
		{"HoistField$Value", "field", "x"},
	} {
		c := chainOf(t, class[0], class[1:]...)
		for name, datum := range map[string][]byte{
			"truncated": good[:len(good)-1], "trailing": append(append([]byte{}, good...), 0), "bad union": badUnion(good),
		} {
			_, err := c.Apply(&Record{Topic: "t", Value: Value{Schema: s, Bytes: datum}})
			if !errors.Is(err, schema.ErrCorruptDatum) || !errors.Is(err, ErrTransform) {
				t.Errorf("%s, %s datum: err = %v, want a corrupt datum", class[0], name, err)
			}
		}
	}
	if !chainOf(t, "InsertField$Value", "topic.field", "t").Validates() || chainOf(t, "ValueToKey", "fields", "s").Validates() {
		t.Error("Validates: want true for a value rewrite first, false for ValueToKey")
	}
}

// badUnion sets the union index of field l (the second: after the int
// i's one byte for 42) to 5.
func badUnion(good []byte) []byte {
	b := append([]byte{}, good...)
	b[1] = 10
	return b
}

// TestFusedEqualsStepByStep: runs of transforms without predicates are
// composed into one plan; the result must be what applying them one by
// one gives (a TopicNameMatches predicate that always holds keeps them
// apart), conversions of converted fields included.
func TestFusedEqualsStepByStep(t *testing.T) {
	steps := []configs.TransformSpec{
		{Alias: "mask", Class: "MaskField$Value", Props: propsOf("fields", "i,l", "replacement", "7")},
		{Alias: "cast", Class: "Cast$Value", Props: propsOf("spec", "i:string,l:float64,b:int8")},
		{Alias: "meta", Class: "SetSchemaMetadata$Value", Props: propsOf("schema.name", "renamed")},
		{Alias: "drop", Class: "ReplaceField$Value", Props: propsOf("exclude", "d", "renames", "s:text")},
		{Alias: "ins", Class: "InsertField$Value", Props: propsOf("topic.field", "src!", "offset.field", "off")},
	}
	fusedChain, err := New(steps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fusedChain.Len() != 1 {
		t.Fatalf("%d steps after fusion, want 1", fusedChain.Len())
	}
	apart := append([]configs.TransformSpec(nil), steps...)
	for i := range apart {
		apart[i].Predicate = "all"
	}
	stepChain, err := New(apart, []configs.PredicateSpec{{Alias: "all", Class: "TopicNameMatches", Props: propsOf("pattern", ".*")}})
	if err != nil {
		t.Fatal(err)
	}
	s := mustSchema(t, typesSchema)
	for _, v := range []map[string]any{typesValue, {"i": int32(-1), "l": nil, "f": float32(0), "d": 1.5, "b": false, "s": "", "n": goavro.Union("string", "x")}} {
		a, b := recordOf(t, s, v, 0), recordOf(t, s, v, 0)
		mustApply(t, fusedChain, a)
		mustApply(t, stepChain, b)
		equal(t, "fused value", decode(t, a.Value), decode(t, b.Value))
		equal(t, "fused schema", a.Value.Schema.Text, b.Value.Schema.Text)
	}
	want := map[string]any{"i": "7", "l": goavro.Union("double", 7.0), "f": float32(42.5), "b": int32(1), "text": "42", "n": nil, "src": "test", "off": goavro.Union("long", int64(5))}
	r := recordOf(t, s, typesValue, 0)
	mustApply(t, fusedChain, r)
	equal(t, "value", decode(t, r.Value), want)
}

// TestScratchReused: the first rewrite of a record builds its value in
// the caller's scratch, which the next record reuses; a second rewrite of
// the same record (not fusable: HoistField) must not overwrite its input.
func TestScratchReused(t *testing.T) {
	c, err := New([]configs.TransformSpec{
		{Alias: "ins", Class: "InsertField$Value", Props: propsOf("topic.field", "t!")},
		{Alias: "hoist", Class: "HoistField$Value", Props: propsOf("field", "h")},
		{Alias: "ins2", Class: "InsertField$Value", Props: propsOf("static.field", "x", "static.value", "y")},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := mustSchema(t, replaceSchema)
	scratch := make([]byte, 0, 4)
	for i, abc := range []int32{1, 2} {
		r := recordOf(t, s, map[string]any{"dont": "d", "abc": abc, "foo": true, "etc": "e"}, 0)
		r.Scratch = scratch
		mustApply(t, c, r)
		want := map[string]any{"h": map[string]any{"dont": "d", "abc": abc, "foo": true, "etc": "e", "t": "test"}, "x": goavro.Union("string", "y")}
		equal(t, fmt.Sprint("record ", i), decode(t, r.Value), want)
		if cap(r.Scratch) < 4 || (i == 1 && &r.Scratch[:1][0] != &scratch[:1][0]) {
			t.Errorf("record %d: scratch not kept or not reused", i)
		}
		scratch = r.Scratch
	}
}
