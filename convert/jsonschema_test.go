package convert

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// jsonSchemaTexts is a SchemaTexts of fixed schemas that counts lookups.
type jsonSchemaTexts struct {
	texts   map[int32]schema.Raw
	lookups atomic.Int64
}

func (r *jsonSchemaTexts) RawByID(_ context.Context, id int32) (schema.Raw, error) {
	r.lookups.Add(1)
	if t, ok := r.texts[id]; ok {
		return t, nil
	}
	return schema.Raw{}, schema.ErrUnknownSchema
}

func jsonSchemaReg(schemas map[int32]string) *jsonSchemaTexts {
	r := &jsonSchemaTexts{texts: map[int32]schema.Raw{}}
	for id, s := range schemas {
		r.texts[id] = schema.Raw{Type: "JSON", Text: s}
	}
	return r
}

func jsWire(id int32, json string) []byte { return schema.AppendWire(nil, id, []byte(json)) }

// TestJSONSchemaToAvro: the Connect schema JsonSchemaData.toConnectSchema
// derives (confluentinc/schema-registry json-schema-converter
// JsonSchemaData.java; JsonSchemaDataTest: testToConnectInt8..Float64,
// testToConnectBytes, testToConnectNullableString, testToConnectArray,
// testToConnectMapStringKeys, testToConnectMapNonStringKeys,
// testToConnectRecord with connect.index and a title), written as Avro the
// way AvroData does (the same writer JsonConverter uses).
func TestJSONSchemaToAvro(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"primitives: integer is long, number double, title the record name",
			`{"type":"object","title":"com.example.Person","properties":{"id":{"type":"integer"},"score":{"type":"number"},"name":{"type":"string","description":"full name"},"ok":{"type":"boolean"}}}`,
			`{"type":"record","name":"Person","namespace":"com.example","fields":[{"name":"id","type":"long"},{"name":"score","type":"double"},{"name":"name","doc":"full name","type":"string"},{"name":"ok","type":"boolean"}]}`},
		{"connect.type picks the Connect type",
			`{"type":"object","title":"R","properties":{"a":{"type":"integer","connect.type":"int8"},"b":{"type":"integer","connect.type":"int16"},"c":{"type":"integer","connect.type":"int32"},"d":{"type":"number","connect.type":"float32"},"e":{"type":"string","connect.type":"bytes"}}}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"int","connect.type":"int8"}},{"name":"b","type":{"type":"int","connect.type":"int16"}},{"name":"c","type":"int"},{"name":"d","type":"float"},{"name":"e","type":"bytes"}]}`},
		{"connect.index orders the fields, not the text",
			`{"type":"object","title":"Record","properties":{"string":{"type":"string","connect.index":1},"int8":{"type":"integer","connect.type":"int8","connect.index":0}}}`,
			`{"type":"record","name":"Record","fields":[{"name":"int8","type":{"type":"int","connect.type":"int8"}},{"name":"string","type":"string"}]}`},
		{"without connect.index the order written",
			`{"type":"object","title":"R","properties":{"z":{"type":"string"},"a":{"type":"string"}}}`,
			`{"type":"record","name":"R","fields":[{"name":"z","type":"string"},{"name":"a","type":"string"}]}`},
		{"oneOf null and a type, and type [T, null]: optional",
			`{"type":"object","title":"R","properties":{"s":{"oneOf":[{"type":"null"},{"type":"string"}],"connect.index":0},"n":{"type":["integer","null"]}}}`,
			`{"type":"record","name":"R","fields":[{"name":"s","type":["null","string"],"default":null},{"name":"n","type":["null","long"],"default":null}]}`},
		{"logical types by title",
			`{"type":"object","title":"L","properties":{` +
				`"d":{"type":"integer","title":"org.apache.kafka.connect.data.Date","connect.type":"int32","connect.version":1},` +
				`"t":{"type":"integer","title":"org.apache.kafka.connect.data.Time","connect.type":"int32"},` +
				`"ts":{"type":"integer","title":"org.apache.kafka.connect.data.Timestamp","connect.type":"int64"},` +
				`"m":{"type":"number","title":"org.apache.kafka.connect.data.Decimal","connect.type":"bytes","connect.parameters":{"scale":"2","connect.decimal.precision":"10"}}}}`,
			`{"type":"record","name":"L","fields":[` +
				`{"name":"d","type":{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}},` +
				`{"name":"t","type":{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}},` +
				`{"name":"ts","type":{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}},` +
				`{"name":"m","type":{"type":"bytes","scale":2,"precision":10,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}}]}`},
		{"arrays, maps with string keys, maps of entries; untitled structs are ConnectDefault",
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer","connect.type":"int8"}},` +
				`"m":{"type":"object","connect.type":"map","additionalProperties":{"type":"integer","connect.type":"int8"}},` +
				`"e":{"type":"array","connect.type":"map","items":{"type":"object","properties":{"key":{"type":"integer","connect.type":"int8","connect.index":0},"value":{"type":"integer","connect.type":"int16","connect.index":1}}}},` +
				`"in":{"type":"object","properties":{"x":{"type":"boolean"}}}}}`,
			`{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[` +
				`{"name":"a","type":{"type":"array","items":{"type":"int","connect.type":"int8"}}},` +
				`{"name":"m","type":{"type":"map","values":{"type":"int","connect.type":"int8"}}},` +
				`{"name":"e","type":{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro","fields":[{"name":"key","type":{"type":"int","connect.type":"int8"}},{"name":"value","type":{"type":"int","connect.type":"int16"}}]}}},` +
				`{"name":"in","type":{"type":"record","name":"ConnectDefault2","namespace":"io.confluent.connect.avro","fields":[{"name":"x","type":"boolean"}]}}]}`},
		{"local $refs, one optional through oneOf (JsonSchemaDataTest.testToConnectRecordWithOptionalReference)",
			`{"title":"Event","type":"object","properties":{"price":{"$ref":"#/definitions/Price"},"note":{"oneOf":[{"type":"null"},{"$ref":"#/definitions/Note"}]}},` +
				`"definitions":{"Price":{"type":"object","title":"Price","properties":{"amount":{"type":"number"}}},"Note":{"type":"string"}}}`,
			`{"type":"record","name":"Event","fields":[{"name":"price","type":{"type":"record","name":"Price","fields":[{"name":"amount","type":"double"}]}},{"name":"note","type":["null","string"],"default":null}]}`},
		{"defaults of primitives carry over",
			`{"type":"object","title":"R","properties":{"n":{"type":"integer","default":7},"s":{"type":"string","default":"x"}}}`,
			`{"type":"record","name":"R","fields":[{"name":"n","type":"long","default":7},{"name":"s","type":"string","default":"x"}]}`},
		{"enum is a string",
			`{"type":"object","title":"R","properties":{"c":{"type":"string","enum":["red","green"]}}}`,
			`{"type":"record","name":"R","fields":[{"name":"c","type":"string"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compileJSONSchema(5, schema.Raw{Type: "JSON", Text: tc.in}, false, "value")
			if c.err != nil {
				t.Fatal(c.err)
			}
			if c.schema.Text != tc.want || c.schema.ID != 5 {
				t.Fatalf("id %d, Avro\n%s\nwant\n%s", c.schema.ID, c.schema.Text, tc.want)
			}
		})
	}
}

func TestJSONSchemaOptionalForNonRequired(t *testing.T) {
	in := `{"type":"object","title":"Record","required":["int8"],"properties":{"int8":{"type":"integer","connect.type":"int8"},"string":{"type":"string"}}}`
	// JsonSchemaDataTest.testToConnectRecordWithOptionalAndRequired.
	want := `{"type":"record","name":"Record","fields":[{"name":"int8","type":{"type":"int","connect.type":"int8"}},{"name":"string","type":["null","string"],"default":null}]}`
	c := compileJSONSchema(1, schema.Raw{Type: "JSON", Text: in}, true, "value")
	if c.err != nil || c.schema.Text != want {
		t.Fatalf("got %v %v, want %s", c.schema, c.err, want)
	}
	if c := compileJSONSchema(1, schema.Raw{Type: "JSON", Text: in}, false, "value"); c.err != nil || strings.Contains(c.schema.Text, "null") {
		t.Fatalf("by default a property is required (use.optional.for.nonrequired.properties=false): %v %v", c.schema, c.err)
	}
}

// TestJSONSchemaRefusals: schemas with no Connect or Avro form are
// unsupported schemas (errors.tolerance applies to their records), with
// the place and the reason.
func TestJSONSchemaRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		text schema.Raw
		want string
	}{
		{"not JSON Schema", schema.Raw{Type: "AVRO", Text: `"string"`}, "schema type AVRO is not JSON"},
		{"references", schema.Raw{Type: "JSON", Text: `{"type":"string"}`, References: []schema.Reference{{Name: "a.json"}}}, "references are not supported"},
		{"not an object", schema.Raw{Type: "JSON", Text: `true`}, "must be a JSON object"},
		{"any value", schema.Raw{Type: "JSON", Text: `{"title":"x"}`}, "no type"},
		{"union", schema.Raw{Type: "JSON", Text: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`}, "oneOf is supported only as a null and one other"},
		{"allOf", schema.Raw{Type: "JSON", Text: `{"allOf":[{"type":"string"}]}`}, "allOf is not supported"},
		{"two types", schema.Raw{Type: "JSON", Text: `{"type":["string","integer"]}`}, "only one type"},
		{"tuple", schema.Raw{Type: "JSON", Text: `{"type":"array","items":[{"type":"string"}]}`}, "one items schema"},
		{"map without values", schema.Raw{Type: "JSON", Text: `{"type":"object","connect.type":"map"}`}, "additionalProperties"},
		{"bad connect.type", schema.Raw{Type: "JSON", Text: `{"type":"integer","connect.type":"int128"}`}, `connect.type "int128"`},
		{"external $ref", schema.Raw{Type: "JSON", Text: `{"$ref":"other.json"}`}, "only references inside the schema"},
		{"dangling $ref", schema.Raw{Type: "JSON", Text: `{"$ref":"#/definitions/none"}`}, `no "definitions"`},
		{"recursive", schema.Raw{Type: "JSON", Text: `{"type":"object","title":"N","properties":{"next":{"$ref":"#"}}}`}, "references deep"},
		{"logical type on the wrong base", schema.Raw{Type: "JSON", Text: `{"type":"integer","title":"org.apache.kafka.connect.data.Date"}`}, "must be on int32"},
		{"decimal without scale", schema.Raw{Type: "JSON", Text: `{"type":"number","connect.type":"bytes","title":"org.apache.kafka.connect.data.Decimal"}`}, "scale"},
		{"same record name twice", schema.Raw{Type: "JSON", Text: `{"title":"E","type":"object","properties":{"a":{"$ref":"#/definitions/P"},"b":{"$ref":"#/definitions/P"}},"definitions":{"P":{"type":"object","title":"P","properties":{"x":{"type":"number"}}}}}`}, "distinct record names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compileJSONSchema(3, tc.text, false, "value")
			if c.err == nil {
				t.Fatalf("compiled to %s", c.schema.Text)
			}
			if !errors.Is(c.err, schema.ErrUnsupportedSchema) || !strings.Contains(c.err.Error(), tc.want) || !strings.Contains(c.err.Error(), "id 3") {
				t.Fatalf("err = %v, want ErrUnsupportedSchema naming id 3 and %q", c.err, tc.want)
			}
		})
	}
}

const personSchema = `{"type":"object","title":"Person","properties":{` +
	`"id":{"type":"integer"},"name":{"oneOf":[{"type":"null"},{"type":"string"}]},` +
	`"born":{"type":"integer","title":"org.apache.kafka.connect.data.Date","connect.type":"int32"},` +
	`"balance":{"type":"number","title":"org.apache.kafka.connect.data.Decimal","connect.type":"bytes","connect.parameters":{"scale":"2"}},` +
	`"tags":{"type":"array","items":{"type":"string"}},` +
	`"counts":{"type":"array","connect.type":"map","items":{"type":"object","properties":{"key":{"type":"integer","connect.type":"int32"},"value":{"type":"string"}}}},` +
	`"raw":{"type":"string","connect.type":"bytes"}}}`

// TestJSONSchemaConvertValues: values as JsonSchemaData.toConnectData
// reads them (decimals as numbers or base64, bytes as base64, maps of
// entries as {"key","value"} objects, extra properties ignored), read back
// from the Avro datum.
func TestJSONSchemaConvertValues(t *testing.T) {
	j := NewJSONSchema(jsonSchemaReg(map[int32]string{21: personSchema}), JSONSchemaOptions{})
	for _, tc := range []struct {
		name, json string
		want       map[string]any
	}{
		{"all fields", `{"id":1,"name":"ann","born":19000,"balance":12.34,"tags":["a"],"counts":[{"key":1,"value":"x"}],"raw":"AQI=","extra":true}`,
			map[string]any{"id": int64(1), "name": map[string]any{"string": "ann"}, "born": int32(19000), "balance": big.NewRat(1234, 100),
				"tags": []any{"a"}, "counts": []any{map[string]any{"key": int32(1), "value": "x"}}, "raw": []byte{1, 2}}},
		{"null optional, base64 decimal", `{"id":2,"name":null,"born":0,"balance":"BNI=","tags":[],"counts":[],"raw":""}`,
			map[string]any{"id": int64(2), "name": nil, "born": int32(0), "balance": big.NewRat(1234, 100),
				"tags": []any{}, "counts": []any{}, "raw": []byte{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := j.Convert(context.Background(), "t", jsWire(21, tc.json))
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Schema.Native(v.Datum)
			if err != nil {
				t.Fatal(err)
			}
			g := got.(map[string]any)
			for k, w := range tc.want {
				if r, ok := w.(*big.Rat); ok {
					if gr, _ := g[k].(*big.Rat); gr == nil || gr.Cmp(r) != 0 {
						t.Fatalf("%s = %v, want %v", k, g[k], r)
					}
					continue
				}
				if _, isTime := g[k].(interface{ Unix() int64 }); isTime {
					continue // born: a date; its days are checked below
				}
				if !reflect.DeepEqual(g[k], w) {
					t.Fatalf("%s = %#v, want %#v", k, g[k], w)
				}
			}
			if v.Schema.ID != 21 {
				t.Fatalf("schema id %d, want the registry's 21", v.Schema.ID)
			}
		})
	}
}

// TestJSONSchemaBadRecords: each is the record's own fault, so
// errors.tolerance applies (sink/badrecord.go matches these sentinels).
func TestJSONSchemaBadRecords(t *testing.T) {
	reg := jsonSchemaReg(map[int32]string{21: personSchema, 23: `{"oneOf":[{"type":"null"},{"type":"object","title":"O","properties":{"s":{"type":"string"}}}]}`})
	reg.texts[30] = schema.Raw{Type: "PROTOBUF", Text: `syntax = "proto3";`}
	j := NewJSONSchema(reg, JSONSchemaOptions{})
	for _, tc := range []struct {
		name  string
		value []byte
		want  error
		says  string
	}{
		{"wrong magic", []byte{1, 0, 0, 0, 21, '{', '}'}, schema.ErrNotFramed, "magic"},
		{"too short", []byte{0, 0}, schema.ErrNotFramed, "shorter"},
		{"unknown id", jsWire(99, `{}`), schema.ErrUnknownSchema, ""},
		{"a Protobuf id", jsWire(30, `{}`), schema.ErrUnsupportedSchema, "PROTOBUF is not JSON"},
		{"not JSON", jsWire(21, `{"id":`), ErrConversion, "schema 21: not JSON"},
		{"two values", jsWire(21, `{} {}`), ErrConversion, "not JSON"},
		{"missing required", jsWire(21, `{"name":"x"}`), ErrConversion, "value.id: null for a required field"},
		{"wrong type", jsWire(21, `{"id":"one"}`), ErrConversion, "value.id: want an integer, got a string"},
		{"fraction for an integer", jsWire(21, `{"id":1.5}`), ErrConversion, "not a 64-bit integer"},
		{"date out of range", jsWire(21, `{"id":1,"born":3000000000}`), ErrConversion, "value.born"},
		{"decimal scale", jsWire(21, `{"id":1,"born":1,"balance":1.234}`), ErrConversion, "more than 2 fractional digits"},
		{"entry as a pair", jsWire(21, `{"id":1,"born":1,"balance":1,"tags":[],"counts":[[1,"x"]]}`), ErrConversion, `{"key", "value"} object`},
		{"null for a required root", jsWire(21, `null`), ErrConversion, "null for a required field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := j.Convert(context.Background(), "t", tc.value)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want %v saying %q", err, tc.want, tc.says)
			}
		})
	}
	if v, err := j.Convert(context.Background(), "t", jsWire(23, `null`)); err != nil || !v.IsNull() {
		t.Fatalf("JSON null with an optional root = %v, %v, want the null value (behavior.on.null.values)", v, err)
	}
}

// TestJSONSchemaCachesByID: one registry lookup and one compile per id,
// the same *Schema for every record and for SchemaByID (recovery), and the
// cached path allocates no more than decoding the JSON and encoding the
// datum do.
func TestJSONSchemaCachesByID(t *testing.T) {
	reg := jsonSchemaReg(map[int32]string{21: personSchema})
	j := NewJSONSchema(reg, JSONSchemaOptions{})
	rec := jsWire(21, `{"id":1,"name":"ann","born":1,"balance":1,"tags":["a"],"counts":[],"raw":""}`)
	first, err := j.Convert(context.Background(), "t", rec)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		v, err := j.Convert(context.Background(), "t", rec)
		if err != nil || v.Schema != first.Schema {
			t.Fatalf("Convert = %v, %v: want the cached schema", v.Schema, err)
		}
	}
	s, err := j.SchemaByID(context.Background(), 21)
	if err != nil || s != first.Schema {
		t.Fatalf("SchemaByID = %v, %v, want the records' schema", s, err)
	}
	if n := reg.lookups.Load(); n != 1 {
		t.Fatalf("registry lookups = %d, want 1", n)
	}
	c, _ := j.compiled(context.Background(), 21)
	body := rec[schema.WireHeaderLen:]
	decodeOnly := testing.AllocsPerRun(100, func() {
		v, _ := decodeJSON(body)
		_, _ = encode(nil, c.root, v, "value")
	})
	convert := testing.AllocsPerRun(100, func() { _, _ = j.Convert(context.Background(), "t", rec) })
	if convert > decodeOnly {
		t.Fatalf("Convert allocates %.0f per record, decoding and encoding alone %.0f", convert, decodeOnly)
	}
}

func TestJSONSchemaSchemaChangeIsANewID(t *testing.T) {
	v2 := strings.Replace(personSchema, `"tags"`, `"email":{"oneOf":[{"type":"null"},{"type":"string"}]},"tags"`, 1)
	j := NewJSONSchema(jsonSchemaReg(map[int32]string{21: personSchema, 22: v2}), JSONSchemaOptions{})
	a, err := j.Convert(context.Background(), "t", jsWire(21, `{"id":1,"born":1,"balance":1,"tags":[],"counts":[],"raw":""}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := j.Convert(context.Background(), "t", jsWire(22, `{"id":1,"born":1,"balance":1,"email":"e","tags":[],"counts":[],"raw":""}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Schema.ID != 21 || b.Schema.ID != 22 || !strings.Contains(b.Schema.Text, `"email"`) {
		t.Fatalf("schemas %d %d, want 21 and 22 with the new field", a.Schema.ID, b.Schema.ID)
	}
	// schema.compatibility BACKWARD reads the old records as the new schema.
	if d, err := schema.CompatBackward.Decide(a.Schema, b.Schema); err != nil || d == schema.Same {
		t.Fatalf("Decide = %v, %v: a new id with a new field is a schema change", d, err)
	}
}

// TestJSONSchemaCacheSize: schemas.cache.size bounds the ids kept
// compiled, the oldest compiled dropped first (and fetched again when
// asked for); a schema that cannot be used takes a place, since its
// records fail without a lookup each; an id the registry does not know
// takes none and is asked for again.
func TestJSONSchemaCacheSize(t *testing.T) {
	const small = `{"type":"object","title":"S","properties":{"n":{"type":"integer"}}}`
	for _, tc := range []struct {
		name    string
		size    int
		ids     []int32
		lookups int64
	}{
		{"default keeps every id", 0, []int32{1, 2, 3, 1, 2, 3}, 3},
		{"size 2 drops the oldest compiled", 2, []int32{1, 2, 1, 3, 3, 1}, 4},
		{"size 1 keeps the last", 1, []int32{1, 1, 2, 2, 1}, 3},
		{"an unusable schema takes a place", 2, []int32{9, 9, 1, 2, 9}, 4},
		{"an unknown id takes none", 2, []int32{1, 99, 99, 1}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := jsonSchemaReg(map[int32]string{1: small, 2: small, 3: small})
			reg.texts[9] = schema.Raw{Type: "AVRO", Text: `"string"`}
			j := NewJSONSchema(reg, JSONSchemaOptions{CacheSize: tc.size})
			for i, id := range tc.ids {
				v, err := j.Convert(context.Background(), "t", jsWire(id, `{"n":1}`))
				switch id {
				case 9:
					if !errors.Is(err, schema.ErrUnsupportedSchema) {
						t.Fatalf("record %d (id 9, an Avro schema): %v, want ErrUnsupportedSchema", i, err)
					}
				case 99:
					if !errors.Is(err, schema.ErrUnknownSchema) {
						t.Fatalf("record %d (id 99, unknown): %v, want ErrUnknownSchema", i, err)
					}
				default:
					if err != nil || v.Schema.ID != id {
						t.Fatalf("record %d (id %d): %v, %v", i, id, v.Schema, err)
					}
				}
			}
			if n := reg.lookups.Load(); n != tc.lookups {
				t.Fatalf("ids %v with schemas.cache.size %d: %d registry lookups, want %d", tc.ids, tc.size, n, tc.lookups)
			}
		})
	}
}

// blockingTexts holds every lookup until release is closed.
type blockingTexts struct {
	*jsonSchemaTexts
	release chan struct{}
}

func (b blockingTexts) RawByID(ctx context.Context, id int32) (schema.Raw, error) {
	<-b.release
	return b.jsonSchemaTexts.RawByID(ctx, id)
}

// TestJSONSchemaConcurrentMisses: partitions that meet a new id together
// share one registry lookup and one compiled schema. The registry answers
// only once every caller has missed the cache, so without the shared
// flight each caller's lookup would be counted.
func TestJSONSchemaConcurrentMisses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ids     []int32
		lookups int64
	}{
		{"eight records of one id", []int32{21, 21, 21, 21, 21, 21, 21, 21}, 1},
		{"four records of each of two ids", []int32{21, 22, 21, 22, 21, 22, 21, 22}, 2},
		{"eight records of an unknown id share the failure", []int32{99, 99, 99, 99, 99, 99, 99, 99}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := blockingTexts{jsonSchemaReg(map[int32]string{21: personSchema, 22: personSchema}), make(chan struct{})}
			j := NewJSONSchema(reg, JSONSchemaOptions{})
			var missed sync.WaitGroup
			missed.Add(len(tc.ids))
			j.cache.missed = func(int32) { missed.Done() }
			go func() { missed.Wait(); close(reg.release) }()
			schemas := make([]*schema.Schema, len(tc.ids))
			errs := make([]error, len(tc.ids))
			var wg sync.WaitGroup
			for i, id := range tc.ids {
				wg.Go(func() {
					v, err := j.Convert(context.Background(), "t", jsWire(id, `{"id":1,"born":1,"balance":1,"tags":[],"counts":[],"raw":""}`))
					schemas[i], errs[i] = v.Schema, err
				})
			}
			wg.Wait()
			for i, id := range tc.ids {
				first := slices.Index(tc.ids, id)
				switch {
				case id == 99 && !errors.Is(errs[i], schema.ErrUnknownSchema):
					t.Errorf("record %d: %v, want ErrUnknownSchema", i, errs[i])
				case id != 99 && (errs[i] != nil || schemas[i].ID != id || schemas[i] != schemas[first]):
					t.Errorf("record %d of id %d: schema %p, %v; want the one schema compiled for the id (%p)", i, id, schemas[i], errs[i], schemas[first])
				}
			}
			if n := reg.lookups.Load(); n != tc.lookups {
				t.Fatalf("%d registry lookups for ids %v, want %d", n, tc.ids, tc.lookups)
			}
		})
	}
}

// TestJSONSchemaKeyErrorsNameTheKey: as key.converter, a field path in an
// error starts at the key, not at the value.
func TestJSONSchemaKeyErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		key  bool
		says string
	}{{false, "value.id: want an integer"}, {true, "key.id: want an integer"}} {
		j := NewJSONSchema(jsonSchemaReg(map[int32]string{21: personSchema}), JSONSchemaOptions{Key: tc.key})
		_, err := j.Convert(context.Background(), "t", jsWire(21, `{"id":"one"}`))
		if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Key %v: %v, want it to say %q", tc.key, err, tc.says)
		}
	}
}
