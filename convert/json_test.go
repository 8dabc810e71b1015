package convert

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// native converts one envelope and decodes the datum back with goavro.
func native(t *testing.T, j *JSON, envelope string) (*schema.Schema, any) {
	t.Helper()
	v, err := j.Convert(context.Background(), "t", []byte(envelope))
	if err != nil {
		t.Fatalf("%s: %v", envelope, err)
	}
	got, err := v.Schema.Native(v.Datum)
	if err != nil {
		t.Fatalf("%s: datum does not decode with its schema: %v", envelope, err)
	}
	return v.Schema, got
}

// TestJSONToConnectValues: the envelopes and expected values are
// JsonConverterTest's (apache/kafka connect/json/src/test/java/org/apache/
// kafka/connect/json/JsonConverterTest.java: booleanToConnect,
// byteToConnect, …, decimalToConnect, dateToConnect, timeToConnect,
// timestampToConnect, mapToConnectNonStringKeys, structToConnect), read
// back from the Avro datum the converter makes.
func TestJSONToConnectValues(t *testing.T) {
	j := NewJSON(JSONOptions{SchemasEnable: true})
	for _, tc := range []struct {
		name, envelope string
		want           any
	}{
		{"boolean", `{ "schema": { "type": "boolean" }, "payload": true }`, true},
		{"int8", `{ "schema": { "type": "int8" }, "payload": 12 }`, int32(12)},
		{"int16", `{ "schema": { "type": "int16" }, "payload": 12 }`, int32(12)},
		{"int32", `{ "schema": { "type": "int32" }, "payload": 12 }`, int32(12)},
		{"int64", `{ "schema": { "type": "int64" }, "payload": 4398046511104 }`, int64(4398046511104)},
		{"float32", `{ "schema": { "type": "float32" }, "payload": 12.34 }`, float32(12.34)},
		{"float64", `{ "schema": { "type": "float64" }, "payload": 12.34 }`, 12.34},
		{"bytes", `{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }`, []byte("test-string")},
		{"string", `{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }`, "foo-bar-baz"},
		{"array", `{ "schema": { "type": "array", "items": { "type" : "int32" } }, "payload": [1, 2, 3] }`, []any{int32(1), int32(2), int32(3)}},
		{"map string keys", `{ "schema": { "type": "map", "keys": { "type" : "string" }, "values": { "type" : "int32" } }, "payload": { "key1": 12, "key2": 15} }`,
			map[string]any{"key1": int32(12), "key2": int32(15)}},
		{"map int keys", `{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : "int32" } }, "payload": [ [1, 12], [2, 15] ] }`,
			[]any{map[string]any{"key": int32(1), "value": int32(12)}, map[string]any{"key": int32(2), "value": int32(15)}}},
		{"struct", `{ "schema": { "type": "struct", "fields": [{ "type": "boolean", "optional": false, "field": "field1" }, { "type": "boolean", "optional": false, "field": "field2" }, { "type": "string", "optional": false, "field": "field3" }, { "type": "string", "optional": false, "field": "field4" }, { "type": "boolean", "optional": false, "field": "field5" }] }, "payload": { "field1": true, "field2": false, "field3": "string3", "field4": "string4", "field5": true } }`,
			map[string]any{"field1": true, "field2": false, "field3": "string3", "field4": "string4", "field5": true}},
		{"decimal base64", `{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": { "scale": "2" } }, "payload": "AJw=" }`,
			big.NewRat(156, 100)},
		{"decimal numeric", `{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": { "scale": "2" } }, "payload": 1.56 }`,
			big.NewRat(156, 100)},
		{"decimal negative numeric", `{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": { "scale": "2" } }, "payload": -1.56 }`,
			big.NewRat(-156, 100)},
		{"date", `{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1 }, "payload": 10000 }`,
			time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 10000)},
		{"time", `{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1 }, "payload": 14400000 }`,
			4 * time.Hour},
		{"timestamp", `{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1 }, "payload": 4000000000 }`,
			time.UnixMilli(4000000000).UTC()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := native(t, j, tc.envelope)
			if !equalNative(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

// equalNative compares goavro natives: unions unwrapped, big.Rat by value.
func equalNative(got, want any) bool {
	if r, ok := want.(*big.Rat); ok {
		g, ok := got.(*big.Rat)
		return ok && g.Cmp(r) == 0
	}
	if tw, ok := want.(time.Time); ok {
		g, ok := got.(time.Time)
		return ok && g.Equal(tw)
	}
	return reflect.DeepEqual(got, want)
}

// TestJSONStructSchemaAsAvroData: a struct with optional, int8, logical
// and nested fields maps to the Avro schema Confluent's AvroData makes
// (AvroDataTest's testFromConnect* cases: optional → ["null", T] with
// default null, int8 → int with connect.type, an unnamed struct →
// io.confluent.connect.avro.ConnectDefault).
func TestJSONStructSchemaAsAvroData(t *testing.T) {
	j := NewJSON(JSONOptions{SchemasEnable: true})
	s, got := native(t, j, `{"schema":{"type":"struct","name":"com.example.Order","fields":[
		{"field":"id","type":"int64"},
		{"field":"qty","type":"int8","optional":true},
		{"field":"note","type":"string","optional":true,"doc":"free text"},
		{"field":"price","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"}},
		{"field":"day","type":"int32","name":"org.apache.kafka.connect.data.Date","optional":true},
		{"field":"inner","type":"struct","fields":[{"field":"a","type":"string","default":"x"}]}]},
	 "payload":{"id":7,"qty":3,"price":"AJw=","day":19000,"inner":{"a":null}}}`)
	want := `{"type":"record","name":"Order","namespace":"com.example","fields":[` +
		`{"name":"id","type":"long"},` +
		`{"name":"qty","type":["null",{"type":"int","connect.type":"int8"}],"default":null},` +
		`{"name":"note","doc":"free text","type":["null","string"],"default":null},` +
		`{"name":"price","type":{"type":"bytes","scale":2,"precision":10,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}},` +
		`{"name":"day","type":["null",{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}],"default":null},` +
		`{"name":"inner","type":{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"a","type":"string","default":"x"}]}}]}`
	if s.Text != want {
		t.Fatalf("Avro schema\n got %s\nwant %s", s.Text, want)
	}
	m := got.(map[string]any)
	if m["id"] != int64(7) || m["note"] != nil || !reflect.DeepEqual(m["qty"], map[string]any{"int": int32(3)}) {
		t.Fatalf("decoded %#v", m)
	}
	if inner := m["inner"].(map[string]any); inner["a"] != "x" {
		t.Fatalf("a null required field with a default should take it, got %#v", inner)
	}
	if c, err := s.Columnar(); err != nil || c == nil {
		t.Fatalf("the Avro schema does not map to columns (Parquet, Hive): %v", err)
	}
}

// TestJSONRefusesBadValues: each is a record error (errors.tolerance
// applies) naming what is wrong. Cases after JsonConverterTest's
// (nullSchemaPrimitiveToConnect aside: a null schema cannot be Avro).
func TestJSONRefusesBadValues(t *testing.T) {
	j := NewJSON(JSONOptions{SchemasEnable: true})
	dec := `"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}`
	for _, tc := range []struct{ name, value, want string }{
		{"not json", `{"schema":`, "not a JSON object"},
		{"not an object", `[1,2]`, "not a JSON object"},
		{"no payload", `{"schema":{"type":"int32"}}`, `exactly the fields "schema" and "payload"`},
		{"extra field", `{"schema":{"type":"int32"},"payload":1,"x":2}`, `exactly the fields "schema" and "payload"`},
		{"null schema", `{"schema":null,"payload":1}`, "schema is null"},
		{"unknown type", `{"schema":{"type":"float"},"payload":1}`, `unknown Connect schema type "float"`},
		{"wrong json type", `{"schema":{"type":"int32"},"payload":"1"}`, "want an integer, got a string"},
		{"int8 range", `{"schema":{"type":"int8"},"payload":200}`, "200 is outside [-128, 127]"},
		{"int32 not integral", `{"schema":{"type":"int32"},"payload":1.5}`, "is not a 64-bit integer"},
		{"required null", `{"schema":{"type":"struct","fields":[{"field":"a","type":"string"}]},"payload":{}}`, "payload.a: null for a required field"},
		{"bad base64", `{"schema":{"type":"bytes"},"payload":"!!"}`, "not base64"},
		{"decimal scale", `{"schema":{"type":"bytes",` + dec + `},"payload":1.567}`, "more than 2 fractional digits"},
		{"decimal no scale", `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal"},"payload":"AA=="}`, "Decimal needs a parameter scale"},
		{"date on int64", `{"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Date"},"payload":1}`, "logical type org.apache.kafka.connect.data.Date must be on int32"},
		{"duplicate field", `{"schema":{"type":"struct","fields":[{"field":"a","type":"string"},{"field":"a","type":"string"}]},"payload":{"a":"x"}}`, `field "a" twice`},
		{"bad avro name", `{"schema":{"type":"struct","name":"a-b","fields":[]},"payload":{}}`, "has no Avro form"},
		{"array item", `{"schema":{"type":"array","items":{"type":"int32"}},"payload":[1,"x"]}`, "payload[1]: want an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := j.Convert(context.Background(), "t", []byte(tc.value))
			if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want ErrConversion saying %q", err, tc.want)
			}
		})
	}
}

// TestJSONNullPayloadIsNull: a null payload is a null value (the sink's
// behavior.on.null.values applies), as JsonConverter returns null.
func TestJSONNullPayloadIsNull(t *testing.T) {
	for _, enable := range []bool{true, false} {
		v, err := NewJSON(JSONOptions{SchemasEnable: enable}).Convert(context.Background(), "t", []byte(`{"schema":{"type":"string","optional":true},"payload":null}`))
		if enable && (err != nil || !v.IsNull()) {
			t.Fatalf("schemas.enable=true: got %+v, %v; want null", v, err)
		}
		if !enable && (err != nil || v.IsNull()) {
			t.Fatalf("schemas.enable=false: the envelope is a JSON object like any: got %+v, %v", v, err)
		}
	}
	v, err := NewJSON(JSONOptions{}).Convert(context.Background(), "t", []byte(` null `))
	if err != nil || !v.IsNull() {
		t.Fatalf("schemas.enable=false, null: got %+v, %v", v, err)
	}
}

// TestJSONSchemalessKeepsBytes: schemas.enable=false writes the JSON text
// as it is and refuses what is not JSON.
func TestJSONSchemalessKeepsBytes(t *testing.T) {
	j := NewJSON(JSONOptions{})
	in := []byte(`{"a": 1,  "b":[true]}`)
	v, err := j.Convert(context.Background(), "t", in)
	if err != nil || v.Schema != nil || string(v.Datum) != string(in) {
		t.Fatalf("got %+v, %v", v, err)
	}
	if _, err := j.Convert(context.Background(), "t", []byte(`{"a":`)); !errors.Is(err, ErrConversion) {
		t.Fatalf("bad JSON: got %v", err)
	}
}

// TestJSONSchemaCachedByIdentity: records with the same embedded schema
// share one compiled *schema.Schema (no parse per record) and finding it
// again allocates nothing; another schema gets another id; a full cache
// still converts.
func TestJSONSchemaCachedByIdentity(t *testing.T) {
	j := NewJSON(JSONOptions{SchemasEnable: true, CacheSize: 2})
	conv := func(s string) *schema.Schema {
		v, err := j.Convert(context.Background(), "t", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v.Schema
	}
	a1 := conv(`{"schema":{"type":"int32"},"payload":1}`)
	a2 := conv(`{"schema":{"type":"int32"},"payload":2}`)
	b := conv(`{"schema":{"type":"int64"},"payload":2}`)
	if a1 != a2 {
		t.Fatal("the same schema was compiled twice")
	}
	if b.ID == a1.ID {
		t.Fatalf("two schemas share id %d", b.ID)
	}
	raw := []byte(`{"type":"int32"}`)
	if allocs := testing.AllocsPerRun(100, func() { j.compiled(raw) }); allocs != 0 {
		t.Fatalf("finding a compiled schema allocates %.0f times", allocs)
	}
	c := conv(`{"schema":{"type":"string"},"payload":"x"}`) // past CacheSize: one is dropped
	if c.ID <= b.ID || len(j.byText) > 2 {
		t.Fatalf("cache of size 2 holds %d; new id %d after %d", len(j.byText), c.ID, b.ID)
	}
}

// BenchmarkJSONConvert: a struct envelope whose schema is cached.
// `go test -run '^$' -bench JSONConvert -benchmem ./convert`.
func BenchmarkJSONConvert(b *testing.B) {
	j := NewJSON(JSONOptions{SchemasEnable: true})
	in := []byte(`{"schema":{"type":"struct","name":"Order","fields":[{"field":"id","type":"int64"},{"field":"customer","type":"string"},{"field":"amount","type":"float64"},{"field":"at","type":"int64","name":"org.apache.kafka.connect.data.Timestamp"}]},"payload":{"id":12345,"customer":"c-42","amount":12.5,"at":1700000000000}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Convert(context.Background(), "t", in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestJSONSchemaByID: the partition finds the committed files' schema
// again after a rebalance within the process; an id it never handed out
// (a previous process's) is ErrUnknownSchema, which the partition logs and
// survives.
func TestJSONSchemaByID(t *testing.T) {
	j := NewJSON(JSONOptions{SchemasEnable: true, CacheSize: 1})
	v, err := j.Convert(context.Background(), "t", []byte(`{"schema":{"type":"int32"},"payload":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := j.SchemaByID(context.Background(), v.Schema.ID); err != nil || s != v.Schema {
		t.Fatalf("SchemaByID(%d) = %v, %v", v.Schema.ID, s, err)
	}
	if _, err := j.SchemaByID(context.Background(), v.Schema.ID+1); !errors.Is(err, schema.ErrUnknownSchema) {
		t.Fatalf("an unknown id: %v", err)
	}
	if _, err := j.Convert(context.Background(), "t", []byte(`{"schema":{"type":"int64"},"payload":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := j.SchemaByID(context.Background(), v.Schema.ID); !errors.Is(err, schema.ErrUnknownSchema) {
		t.Fatalf("a schema dropped from the cache is still found: %v", err)
	}
}
