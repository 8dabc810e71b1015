package transform

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// smt prefixes a class as configs resolves it: the short name.
const smt = ""

// jsonCase is one transform chain on one schemaless JSON value (the key
// too when key is set). Expected outputs are Kafka's test cases
// (connect/transforms/src/test/java/org/apache/kafka/connect/transforms,
// cited per case) in JSON, as the reference's JSON format writes a Map
// (Jackson): the producer's member order, added members at the end.
type jsonCase struct {
	name       string
	specs      []configs.TransformSpec
	value, key string // "": null
	want       string // the value after; "": null
	wantKey    string // checked when set
	wantErr    string // the error contains it
}

func spec(alias, class string, kv ...string) configs.TransformSpec {
	return configs.TransformSpec{Alias: alias, Class: smt + class, Props: propsOf(kv...)}
}

func runJSONCases(t *testing.T, cases []jsonCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.specs, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := &Record{Topic: "test", Partition: 0, Offset: 5, Timestamp: time.UnixMilli(123), Scratch: make([]byte, 0, 8)}
			if tc.value != "" {
				r.Value = Value{Bytes: []byte(tc.value)}
			}
			if tc.key != "" {
				r.Key = Value{Bytes: []byte(tc.key)}
			}
			keep, err := c.Apply(r)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrTransform) {
					t.Fatalf("Apply = %v, %v; want an ErrTransform containing %q", keep, err, tc.wantErr)
				}
				return
			}
			if err != nil || !keep {
				t.Fatalf("Apply = %v, %v", keep, err)
			}
			if r.Value.Schema != nil || string(r.Value.Bytes) != tc.want || r.Value.IsNull() != (tc.want == "") {
				t.Errorf("value = %q (schema %v), want %q", r.Value.Bytes, r.Value.Schema, tc.want)
			}
			if tc.wantKey != "" && string(r.Key.Bytes) != tc.wantKey {
				t.Errorf("key = %q, want %q", r.Key.Bytes, tc.wantKey)
			}
		})
	}
}

func TestInsertFieldSchemaless(t *testing.T) {
	runJSONCases(t, []jsonCase{
		// InsertFieldTest.schemalessInsertConfiguredFields: magic stays 42,
		// topic_field "test", partition_field 0, timestamp_field 123 (a
		// Long: record.timestamp()), instance_id the static value.
		{name: "schemalessInsertConfiguredFields", specs: []configs.TransformSpec{spec("i", "InsertField$Value",
			"topic.field", "topic_field!", "partition.field", "partition_field", "timestamp.field", "timestamp_field?",
			"static.field", "instance_id", "static.value", "my-instance-id")},
			value: `{"magic": 42}`, want: `{"magic":42,"topic_field":"test","partition_field":0,"timestamp_field":123,"instance_id":"my-instance-id"}`},
		{name: "offset (a SinkRecord's kafkaOffset)", specs: []configs.TransformSpec{spec("i", "InsertField$Value", "offset.field", "off")},
			value: `{"a":{"b": [1, 2]}}`, want: `{"a":{"b":[1,2]},"off":5}`},
		// InsertFieldTest.insertConfiguredFieldsIntoTombstoneEventWithoutSchemaLeavesValueUnchanged.
		{name: "tombstone", specs: []configs.TransformSpec{spec("i", "InsertField$Value", "topic.field", "topic_field!")}, want: ""},
		{name: "a name the value has is replaced in place (Map.put)", specs: []configs.TransformSpec{spec("i", "InsertField$Value", "topic.field", "t")},
			value: `{"t":"old","x":1}`, want: `{"t":"test","x":1}`},
		{name: "static.field without static.value inserts nothing (its default is null)", specs: []configs.TransformSpec{spec("i", "InsertField$Value",
			"static.field", "s")}, value: `{}`, want: `{}`},
		{name: "a topic needing escapes", specs: []configs.TransformSpec{spec("i", "InsertField$Value", "topic.field", "q\"uote")},
			value: `{"a":"\"x\""}`, want: `{"a":"\"x\"","q\"uote":"test"}`},
		// requireMap: a JSON value that is not an object.
		{name: "not an object", specs: []configs.TransformSpec{spec("i", "InsertField$Value", "topic.field", "t")},
			value: `[1,2]`, wantErr: "found: an array"},
		{name: "a string", specs: []configs.TransformSpec{spec("i", "InsertField$Value", "topic.field", "t")},
			value: `"x"`, wantErr: "requireMap"},
	})
}

func TestReplaceFieldSchemaless(t *testing.T) {
	runJSONCases(t, []jsonCase{
		// ReplaceFieldTest.schemaless: exclude dont, renames abc:xyz,foo:bar
		// → {xyz: 42, bar: true, etc: "etc"}.
		{name: "schemaless", specs: []configs.TransformSpec{spec("r", "ReplaceField$Value", "exclude", "dont", "renames", "abc:xyz,foo:bar")},
			value: `{"dont":"whatever","abc":42,"foo":true,"etc":"etc"}`, want: `{"xyz":42,"bar":true,"etc":"etc"}`},
		// ReplaceFieldTest.tombstoneSchemaless.
		{name: "tombstoneSchemaless", specs: []configs.TransformSpec{spec("r", "ReplaceField$Value", "include", "abc,foo", "renames", "abc:xyz,foo:bar")}, want: ""},
		{name: "include", specs: []configs.TransformSpec{spec("r", "ReplaceField$Value", "include", "abc,foo")},
			value: ` { "dont" : 1 , "abc" : { "n" : [ 1 , 2 ] } , "foo" : "a b" } `, want: `{"abc":{"n":[1,2]},"foo":"a b"}`},
		{name: "the older whitelist and blacklist", specs: []configs.TransformSpec{spec("r", "ReplaceField$Value", "whitelist", "a,b", "blacklist", "b")},
			value: `{"a":1,"b":2,"c":3}`, want: `{"a":1}`},
		{name: "exclude takes precedence over include", specs: []configs.TransformSpec{spec("r", "ReplaceField$Value", "include", "a,b", "exclude", "b")},
			value: `{"a":1,"b":2}`, want: `{"a":1}`},
		{name: "an escaped key is matched by its name", specs: []configs.TransformSpec{spec("r", "ReplaceField$Value", "renames", "a/b:c")},
			value: `{"a\/b":1}`, want: `{"c":1}`},
		{name: "a rename onto a kept name leaves one member", specs: []configs.TransformSpec{spec("r", "ReplaceField$Value", "renames", "a:b")},
			value: `{"a":1,"b":2}`, want: `{"b":2}`},
		{name: "not an object", specs: []configs.TransformSpec{spec("r", "ReplaceField$Value", "exclude", "a")}, value: `42`, wantErr: "found: a number"},
	})
}

func TestMaskFieldSchemaless(t *testing.T) {
	// MaskFieldTest VALUES as JsonConverter reads JSON: integers are Longs,
	// other numbers Doubles.
	const values = `{"magic":42,"bool":true,"long":42,"double":42.5,"exp":1e3,"string":"55.121.20.20","array":[1,2,3],"map":{"k":"v"},"withDefault":null}`
	mask := func(kv ...string) []configs.TransformSpec {
		return []configs.TransformSpec{spec("m", "MaskField$Value", kv...)}
	}
	runJSONCases(t, []jsonCase{
		// MaskFieldTest.testSchemaless: magic kept, false, 0L, 0d, "", empty
		// list, empty map; null stays null.
		{name: "testSchemaless", specs: mask("fields", "bool,long,double,exp,string,array,map,withDefault"), value: values,
			want: `{"magic":42,"bool":false,"long":0,"double":0.0,"exp":0.0,"string":"","array":[],"map":{},"withDefault":null}`},
		// MaskFieldTest.testSchemalessWithReplacement: 123 for a Long,
		// 123.0 for a Double, "123" for a String.
		{name: "testSchemalessWithReplacement", specs: mask("fields", "long,double,string", "replacement", "123"), value: values,
			want: `{"magic":42,"bool":true,"long":123,"double":123.0,"exp":1e3,"string":"123","array":[1,2,3],"map":{"k":"v"},"withDefault":null}`},
		// MaskFieldTest.testSchemalessUnsupportedReplacementType: booleans,
		// lists and maps take no replacement.
		{name: "bool with a replacement", specs: mask("fields", "bool", "replacement", "false"), value: values, wantErr: "cannot mask a boolean"},
		{name: "list with a replacement", specs: mask("fields", "array", "replacement", "123"), value: values, wantErr: "cannot mask an array"},
		{name: "map with a replacement", specs: mask("fields", "map", "replacement", "123"), value: values, wantErr: "cannot mask an object"},
		// MaskFieldTest.testReplacementTypeMismatch: "foo" is no number.
		{name: "a number with a non-numeric replacement", specs: mask("fields", "long", "replacement", "foo"), value: values, wantErr: `"foo" to a Long`},
		{name: "a double with a non-numeric replacement", specs: mask("fields", "double", "replacement", "foo"), value: values, wantErr: `"foo" to a Double`},
		// MaskField.applySchemaless puts masked(value.get(field)): null for
		// a missing field.
		{name: "a missing field is put as null", specs: mask("fields", "nope"), value: `{"a":1}`, want: `{"a":1,"nope":null}`},
		{name: "not an object", specs: mask("fields", "a"), value: `true`, wantErr: "found: a boolean"},
	})
}

func TestHoistFieldSchemaless(t *testing.T) {
	runJSONCases(t, []jsonCase{
		// HoistFieldTest.schemaless: 42 → {magic: 42}.
		{name: "schemaless", specs: []configs.TransformSpec{spec("h", "HoistField$Value", "field", "magic")}, value: `42`, want: `{"magic":42}`},
		{name: "an object", specs: []configs.TransformSpec{spec("h", "HoistField$Value", "field", "magic")},
			value: `{"a": [1, "x y"]}`, want: `{"magic":{"a":[1,"x y"]}}`},
		{name: "after an insert, on one parse", specs: []configs.TransformSpec{spec("i", "InsertField$Value", "topic.field", "t"),
			spec("h", "HoistField$Value", "field", "magic"), spec("r", "ReplaceField$Value", "renames", "magic:m")},
			value: `{"a":1}`, want: `{"m":{"a":1,"t":"test"}}`},
		{name: "the key (HoistFieldTest's own case is on the key)", specs: []configs.TransformSpec{spec("h", "HoistField$Key", "field", "magic")},
			key: `42`, value: `{}`, want: `{}`, wantKey: `{"magic":42}`},
	})
}

func TestExtractFieldSchemaless(t *testing.T) {
	v2 := func(kv ...string) []configs.TransformSpec {
		return []configs.TransformSpec{spec("e", "ExtractField$Key", append(kv, "field.syntax.version", "V2")...)}
	}
	runJSONCases(t, []jsonCase{
		// ExtractFieldTest.schemaless (on the key): {magic: 42} → 42.
		{name: "schemaless", specs: []configs.TransformSpec{spec("e", "ExtractField$Key", "field", "magic")},
			key: `{"magic":42}`, value: `{}`, want: `{}`, wantKey: `42`},
		// ExtractFieldTest.schemalessAndNestedPath: V2 magic.foo → 42.
		{name: "schemalessAndNestedPath", specs: v2("field", "magic.foo"), key: `{"magic":{"foo":42}}`, value: `{}`, want: `{}`, wantKey: `42`},
		// ExtractFieldTest.nonExistentFieldSchemalessShouldReturnNull: the
		// value becomes null (a tombstone for the sink).
		{name: "nonExistentFieldSchemalessShouldReturnNull", specs: []configs.TransformSpec{spec("e", "ExtractField$Value", "field", "nonexistent")},
			value: `{"magic":42}`, want: ""},
		// ExtractFieldTest.nonExistentNestedFieldSchemalessShouldReturnNull.
		{name: "nonExistentNestedFieldSchemalessShouldReturnNull", specs: []configs.TransformSpec{spec("e", "ExtractField$Value",
			"field", "magic.nonexistent", "field.syntax.version", "V2")}, value: `{"magic":{"foo":42}}`, want: ""},
		// ExtractFieldTest.nullSchemaless.
		{name: "nullSchemaless", specs: []configs.TransformSpec{spec("e", "ExtractField$Value", "field", "magic")}, want: ""},
		{name: "V1 takes a dotted name whole", specs: []configs.TransformSpec{spec("e", "ExtractField$Value", "field", "a.b")},
			value: `{"a":{"b":1},"a.b":{"c": "d"}}`, want: `{"c":"d"}`},
		{name: "V2 with backticks", specs: []configs.TransformSpec{spec("e", "ExtractField$Value", "field", "`a.b`.c", "field.syntax.version", "V2")},
			value: `{"a.b":{"c":[true]}}`, want: `[true]`},
		{name: "V2 through a null", specs: []configs.TransformSpec{spec("e", "ExtractField$Value", "field", "a.b", "field.syntax.version", "V2")},
			value: `{"a":null}`, want: ""},
		{name: "V2 through a non-object (requireMapOrNull)", specs: []configs.TransformSpec{spec("e", "ExtractField$Value", "field", "a.b",
			"field.syntax.version", "V2")}, value: `{"a":3}`, wantErr: "[nested field access], found: a number"},
		{name: "a field that is JSON null", specs: []configs.TransformSpec{spec("e", "ExtractField$Value", "field", "a")}, value: `{"a":null}`, want: ""},
		{name: "not an object", specs: []configs.TransformSpec{spec("e", "ExtractField$Value", "field", "a")}, value: `"a"`, wantErr: "found: a string"},
	})
}

func TestValueToKeySchemaless(t *testing.T) {
	runJSONCases(t, []jsonCase{
		// ValueToKeyTest.schemaless: fields a,b of {a:1,b:2,c:3} → key
		// {a:1,b:2}, the value unchanged.
		{name: "schemaless", specs: []configs.TransformSpec{spec("v", "ValueToKey", "fields", "a,b")},
			value: `{"a":1,"b":2,"c":3}`, want: `{"a":1,"b":2,"c":3}`, wantKey: `{"a":1,"b":2}`},
		{name: "a missing field is null (value.get)", specs: []configs.TransformSpec{spec("v", "ValueToKey", "fields", "b,x")},
			value: `{"a":1,"b":[ 2 ]}`, want: `{"a":1,"b":[ 2 ]}`, wantKey: `{"b":[2],"x":null}`},
		{name: "then a $Key transform on the JSON key", specs: []configs.TransformSpec{spec("v", "ValueToKey", "fields", "a,b"),
			spec("e", "ExtractField$Key", "field", "b")}, value: `{"a":1,"b":"k"}`, want: `{"a":1,"b":"k"}`, wantKey: `"k"`},
		{name: "not an object", specs: []configs.TransformSpec{spec("v", "ValueToKey", "fields", "a")}, value: `[]`, wantErr: "copying fields from value to key"},
	})
}

func TestFlattenSchemaless(t *testing.T) {
	flat := func(kv ...string) []configs.TransformSpec {
		return []configs.TransformSpec{spec("f", "Flatten$Value", kv...)}
	}
	runJSONCases(t, []jsonCase{
		// FlattenTest.testNestedMapWithDelimiter with JSON's types (bytes
		// have none): A → B → the values become A#B#<name>.
		{name: "testNestedMapWithDelimiter", specs: flat("delimiter", "#"),
			value: `{"A":{"B":{"int64":64,"float64":64.0,"boolean":true,"string":"stringy"}}}`,
			want:  `{"A#B#int64":64,"A#B#float64":64.0,"A#B#boolean":true,"A#B#string":"stringy"}`},
		// FlattenTest.testSchemalessArray: arrays, and the maps in them, stay.
		{name: "testSchemalessArray", specs: flat(), value: `{"foo":["bar",{"baz":{"lfg":"lfg"}}]}`, want: `{"foo":["bar",{"baz":{"lfg":"lfg"}}]}`},
		// FlattenTest.testMapWithNullFields: nulls are kept, in order.
		{name: "testMapWithNullFields", specs: flat(), value: `{"firstNull":null,"firstNonNull":"nonNull","secondNull":null,"secondNonNull":"alsoNonNull","thirdNonNull":null}`,
			want: `{"firstNull":null,"firstNonNull":"nonNull","secondNull":null,"secondNonNull":"alsoNonNull","thirdNonNull":null}`},
		{name: "nested nulls and arrays", specs: flat(), value: `{"A":{"B":{"x":[1, {"a":1}]},"null":null},"top":1}`,
			want: `{"A.B.x":[1,{"a":1}],"A.null":null,"top":1}`},
		// FlattenTest.topLevelMapRequired.
		{name: "topLevelMapRequired", specs: flat(), value: `42`, wantErr: "found: a number"},
		// FlattenTest.tombstoneEventWithoutSchemaShouldPassThrough.
		{name: "tombstoneEventWithoutSchemaShouldPassThrough", specs: flat(), want: ""},
		{name: "default delimiter", specs: flat(), value: `{"a":{"b":1},"c":2}`, want: `{"a.b":1,"c":2}`},
		{name: "an empty object leaves nothing", specs: flat(), value: `{"a":{},"c":2}`, want: `{"c":2}`},
		{name: "nothing nested", specs: flat(), value: `{ "a" : 1 }`, want: `{"a":1}`},
		{name: "a name made twice keeps the first place, the last value", specs: flat(), value: `{"a.b":1,"a":{"b":2},"c":3}`, want: `{"a.b":2,"c":3}`},
		{name: "not an object", specs: flat(), value: `[{"a":1}]`, wantErr: "found: an array"},
	})
}

func TestCastSchemaless(t *testing.T) {
	runJSONCases(t, []jsonCase{
		// CastTest.castFieldsSchemaless, with JSON's types (JsonConverter
		// reads integers as Longs, other numbers as Doubles): int8 8 →
		// (short) 8, int32 → (long) 32, int64 → true, float32 → 32.0,
		// float64 → true, boolean → (byte) 1, "42" → 42.
		{name: "castFieldsSchemaless", specs: []configs.TransformSpec{spec("c", "Cast$Value",
			"spec", "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,string:int32")},
			value: `{"int8":8,"int16":16,"int32":32,"int64":64,"float32":32.0,"float64":-64.0,"boolean":true,"string":"42"}`,
			want:  `{"int8":8,"int16":16,"int32":32,"int64":true,"float32":32.0,"float64":true,"boolean":1,"string":42}`},
		{name: "to string (String.valueOf)", specs: []configs.TransformSpec{spec("c", "Cast$Value", "spec", "a:string,b:string,c:string,d:float32")},
			value: `{"a":1e7,"b":12,"c":false,"d":"0.1"}`, want: `{"a":"1.0E7","b":"12","c":"false","d":0.1}`},
		// CastTest.castNullValueRecordSchemaless; a null field stays null; a
		// missing one is put as null (value.get(field)).
		{name: "castNullValueRecordSchemaless", specs: []configs.TransformSpec{spec("c", "Cast$Value", "spec", "a:int8")}, want: ""},
		{name: "null and missing fields", specs: []configs.TransformSpec{spec("c", "Cast$Value", "spec", "a:int8,b:int8")}, value: `{"a":null}`, want: `{"a":null,"b":null}`},
		{name: "a string that is no number", specs: []configs.TransformSpec{spec("c", "Cast$Value", "spec", "a:int32")}, value: `{"a":"x"}`, wantErr: `field "a"`},
		// Cast's SUPPORTED_CAST_INPUT_TYPES: no MAP or ARRAY.
		{name: "an object cannot be cast", specs: []configs.TransformSpec{spec("c", "Cast$Value", "spec", "a:string")}, value: `{"a":{"b":1}}`,
			wantErr: "Cast does not support casting from an object"},
		{name: "not an object", specs: []configs.TransformSpec{spec("c", "Cast$Value", "spec", "a:string")}, value: `1`, wantErr: "[cast types]"},
	})
}

func TestTimestampConverterSchemaless(t *testing.T) {
	// TimestampConverterTest's instants: DATE_PLUS_TIME is 86 401 234 ms
	// (1970-01-02 00:00:01.234 UTC), DATE 86 400 000, TIME 1 234. JSON has
	// no java.util.Date: a Date, Time or Timestamp result is written as
	// Jackson writes a Date, epoch milliseconds.
	tsc := func(kv ...string) []configs.TransformSpec {
		return []configs.TransformSpec{spec("t", "TimestampConverter$Value", append(kv, "field", "ts")...)}
	}
	runJSONCases(t, []jsonCase{
		// testSchemalessUnixToTimestamp.
		{name: "testSchemalessUnixToTimestamp", specs: tsc("target.type", "Timestamp"), value: `{"ts":86401234,"x":1}`, want: `{"ts":86401234,"x":1}`},
		// testSchemalessTimestampToDate / testSchemalessFieldConversion.
		{name: "testSchemalessFieldConversion", specs: tsc("target.type", "Date"), value: `{"ts":86401234}`, want: `{"ts":86400000}`},
		// testSchemalessTimestampToTime.
		{name: "testSchemalessTimestampToTime", specs: tsc("target.type", "Time"), value: `{"ts":86401234}`, want: `{"ts":1234}`},
		// testSchemalessTimestampToString (the pattern with '.' before SSS:
		// hdfs-sink's layouts need it).
		{name: "testSchemalessTimestampToString", specs: tsc("target.type", "string", "format", "yyyy MM dd HH mm ss.SSS z"),
			value: `{"ts":86401234}`, want: `{"ts":"1970 01 02 00 00 01.234 UTC"}`},
		// testSchemalessStringToTimestamp.
		{name: "testSchemalessStringToTimestamp", specs: tsc("target.type", "Timestamp", "format", "yyyy MM dd HH mm ss.SSS z"),
			value: `{"ts":"1970 01 02 00 00 01.234 UTC"}`, want: `{"ts":86401234}`},
		// testSchemalessStringToUnix_Micros: the sub-millisecond part is lost
		// through java.util.Date.
		{name: "testSchemalessStringToUnix_Micros", specs: tsc("target.type", "unix", "unix.precision", "microseconds", "format", "yyyy MM dd HH mm ss.SSS z"),
			value: `{"ts":"1970 01 02 00 00 01.234 UTC"}`, want: `{"ts":86401234000}`},
		{name: "unix seconds in", specs: tsc("target.type", "Timestamp", "unix.precision", "seconds"), value: `{"ts":86401}`, want: `{"ts":86401000}`},
		{name: "unix nanoseconds in and out", specs: tsc("target.type", "unix", "unix.precision", "nanoseconds"), value: `{"ts":86401234123456}`, want: `{"ts":86401234000000}`},
		// testSchemalessNullFieldConversion; a missing field is put as null.
		{name: "testSchemalessNullFieldConversion", specs: tsc("target.type", "Date"), want: ""},
		{name: "a null field", specs: tsc("target.type", "Date"), value: `{"ts":null}`, want: `{"ts":null}`},
		{name: "a missing field", specs: tsc("target.type", "Date"), value: `{"a":1}`, want: `{"a":1,"ts":null}`},
		// inferTimestampType: only Long and String.
		{name: "a Double", specs: tsc("target.type", "Date"), value: `{"ts":1.5}`, wantErr: "does not support a number"},
		{name: "a string without format", specs: tsc("target.type", "Date"), value: `{"ts":"1970"}`, wantErr: "needs format"},
		{name: "a string not matching", specs: tsc("target.type", "Date", "format", "yyyy-MM-dd"), value: `{"ts":"x"}`, wantErr: "does not match format"},
	})
}

// TestHeaderFromSchemaless: HeaderFromTest.schemaless's cases ("basic
// copy", "basic move", "copy with preexisting header", "two headers from
// same field"): the header is the field's string form, after the existing
// headers; move takes the field out of the value. A missing field is a
// null header (value.get). An object field is refused, as on the schema
// path (Connect would write the Map through SimpleHeaderConverter).
func TestHeaderFromSchemaless(t *testing.T) {
	const value = `{"field1":"field1-value","field2":"field2-value","n":42,"d":1.5,"o":{"a":1}}`
	for _, tc := range []struct {
		name, fields, headers, op string
		key                       bool
		want                      string
		wantHeaders               []string // key=value; "key=<nil>" for null
		wantErr                   string
	}{
		{name: "basic copy", fields: "field1", headers: "inserted1", op: "copy", want: value, wantHeaders: []string{"header1=existing-value", "inserted1=field1-value"}},
		{name: "basic move", fields: "field1", headers: "inserted1", op: "move",
			want: `{"field2":"field2-value","n":42,"d":1.5,"o":{"a":1}}`, wantHeaders: []string{"header1=existing-value", "inserted1=field1-value"}},
		{name: "basic move (key)", key: true, fields: "field1", headers: "inserted1", op: "move",
			want: `{"field2":"field2-value","n":42,"d":1.5,"o":{"a":1}}`, wantHeaders: []string{"header1=existing-value", "inserted1=field1-value"}},
		{name: "two headers from same field", fields: "field1,field1", headers: "inserted1,inserted2", op: "move",
			want: `{"field2":"field2-value","n":42,"d":1.5,"o":{"a":1}}`, wantHeaders: []string{"header1=existing-value", "inserted1=field1-value", "inserted2=field1-value"}},
		{name: "numbers and a missing field", fields: "n,d,x", headers: "n,d,x", op: "copy", want: value,
			wantHeaders: []string{"header1=existing-value", "n=42", "d=1.5", "x=<nil>"}},
		{name: "an object field", fields: "o", headers: "o", op: "copy", wantErr: "only primitives into headers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class := "HeaderFrom$Value"
			if tc.key {
				class = "HeaderFrom$Key"
			}
			c := chainOf(t, class, "fields", tc.fields, "headers", tc.headers, "operation", tc.op)
			r := &Record{Headers: []kgo.RecordHeader{{Key: "header1", Value: []byte("existing-value")}}}
			side := &r.Value
			if tc.key {
				r.Value, side = Value{Bytes: []byte(`{}`)}, &r.Key
			}
			*side = Value{Bytes: []byte(value)}
			_, err := c.Apply(r)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Apply err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "value", string(side.Bytes), tc.want)
			var hs []string
			for _, h := range r.Headers {
				v := string(h.Value)
				if h.Value == nil {
					v = "<nil>"
				}
				hs = append(hs, h.Key+"="+v)
			}
			equal(t, "headers", hs, tc.wantHeaders)
		})
	}
}

// TestSchemalessChainParsesOnce: InsertField, ReplaceField and MaskField
// without predicates are fused, and the fused step runs their schemaless
// branches in order on one parse.
func TestSchemalessChainParsesOnce(t *testing.T) {
	specs := []configs.TransformSpec{
		spec("ins", "InsertField$Value", "topic.field", "src", "offset.field", "off"),
		spec("rep", "ReplaceField$Value", "exclude", "drop", "renames", "name:user"),
		spec("mask", "MaskField$Value", "fields", "ssn,user"),
	}
	c, err := New(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.steps[0].t.(*fused); !ok || len(c.steps) != 1 {
		t.Fatalf("steps = %#v, want one fused step", c.steps)
	}
	runJSONCases(t, []jsonCase{{name: "chain", specs: specs, value: `{"name":"ann","drop":1,"ssn":"123","n":2}`,
		want: `{"user":"","ssn":"","n":2,"src":"test","off":5}`}})
}

// TestNeedsSchemasSchemaless: check refuses, on schemaless JSON values
// (and keys), only the transforms without a schemaless branch; on raw
// bytes, every one that needs fields.
func TestNeedsSchemasSchemaless(t *testing.T) {
	supported := []string{"InsertField$Value", "ReplaceField$Value", "MaskField$Value", "HoistField$Value", "ExtractField$Value", "ValueToKey",
		"Flatten$Value", "Cast$Value", "TimestampConverter$Value", "HeaderFrom$Value"}
	props := []string{"topic.field", "t", "exclude", "x", "fields", "f", "field", "f", "spec", "f:int32", "target.type", "unix",
		"schema.name", "n", "headers", "h", "operation", "copy"}
	for _, class := range supported {
		c, err := New(specOf(smt+class, props...), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.NeedsSchemas(SchemalessJSON); got != "" {
			t.Errorf("%s: NeedsSchemas(SchemalessJSON) = %q, want none", class, got)
		}
		if got := c.NeedsSchemas(RawBytes); got != "t" {
			t.Errorf("%s: NeedsSchemas(RawBytes) = %q, want t", class, got)
		}
	}
	for _, class := range []string{"SetSchemaMetadata$Value"} {
		c, err := New(specOf(smt+class, props...), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.NeedsSchemas(SchemalessJSON); got != "t" {
			t.Errorf("%s: NeedsSchemas(SchemalessJSON) = %q, want t", class, got)
		}
	}
	// A fused run names its part without a schemaless branch.
	c, err := New([]configs.TransformSpec{spec("a", "InsertField$Value", "topic.field", "t"), spec("b", "SetSchemaMetadata$Value", "schema.name", "n")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "fused NeedsSchemas", c.NeedsSchemas(SchemalessJSON), "b")
	// Keys: ExtractField$Key works on schemaless JSON keys,
	// SetSchemaMetadata$Key not;
	// after ValueToKey the keys have the values' form.
	for _, tc := range []struct {
		specs        []configs.TransformSpec
		keys, values Form
		want         string
	}{
		{[]configs.TransformSpec{spec("k", "ExtractField$Key", "field", "f")}, SchemalessJSON, WithSchema, ""},
		{[]configs.TransformSpec{spec("k", "ExtractField$Key", "field", "f")}, RawBytes, WithSchema, "k"},
		{[]configs.TransformSpec{spec("k", "SetSchemaMetadata$Key", "schema.name", "n")}, SchemalessJSON, WithSchema, "k"},
		{[]configs.TransformSpec{spec("v", "ValueToKey", "fields", "f"), spec("k", "SetSchemaMetadata$Key", "schema.name", "n")}, RawBytes, SchemalessJSON, "k"},
		{[]configs.TransformSpec{spec("v", "ValueToKey", "fields", "f"), spec("k", "ExtractField$Key", "field", "f")}, RawBytes, SchemalessJSON, ""},
		{[]configs.TransformSpec{spec("v", "ValueToKey", "fields", "f"), spec("k", "SetSchemaMetadata$Key", "schema.name", "n")}, RawBytes, WithSchema, ""},
	} {
		c, err := New(tc.specs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.NeedsKeySchemas(tc.keys, tc.values); got != tc.want {
			t.Errorf("%v keys %d values %d: NeedsKeySchemas = %q, want %q", tc.specs, tc.keys, tc.values, got, tc.want)
		}
	}
}

// TestSchemalessUnsupportedFails: a transform without a schemaless branch
// fails a schemaless value (a record's fault), were check bypassed.
func TestSchemalessUnsupportedFails(t *testing.T) {
	c := chainOf(t, smt+"SetSchemaMetadata$Value", "schema.name", "n")
	_, err := c.Apply(&Record{Value: Value{Bytes: []byte(`{"f":"1"}`)}})
	if !errors.Is(err, ErrTransform) || !errors.Is(err, errSchemaless) {
		t.Fatalf("Apply err = %v", err)
	}
}

// TestHeaderPredicateOnSchemalessAccepted: schemaless values have no
// schema id, so a header predicate may choose whether a value transform
// runs (refused for values with a schema:
// TestHeaderPredicateOnSchemaChangeRefused); it runs per record.
func TestHeaderPredicateOnSchemalessAccepted(t *testing.T) {
	specs := []configs.TransformSpec{{Alias: "i", Class: "InsertField$Value", Props: propsOf("topic.field", "t"), Predicate: "p"}}
	preds := []configs.PredicateSpec{{Alias: "p", Class: "HasHeaderKey", Props: propsOf("name", "h")}}
	c, err := NewForValues(specs, preds, SchemalessJSON)
	if err != nil {
		t.Fatal(err)
	}
	with := &Record{Topic: "test", Value: Value{Bytes: []byte(`{"a":1}`)}, Headers: []kgo.RecordHeader{{Key: "h"}}}
	without := &Record{Topic: "test", Value: Value{Bytes: []byte(`{"a":1}`)}}
	mustApply(t, c, with)
	mustApply(t, c, without)
	equal(t, "with the header", string(with.Value.Bytes), `{"a":1,"t":"test"}`)
	equal(t, "without", string(without.Value.Bytes), `{"a":1}`)
	if _, err := NewForValues(specs, preds, WithSchema); err == nil {
		t.Fatal("NewForValues(WithSchema) accepted a header predicate on InsertField")
	}
}
