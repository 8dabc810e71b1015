package transform

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

const tsSchema = `{"type":"record","name":"r","fields":[{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"s","type":"string"},{"name":"u","type":["null","long"]}]}`

// TimestampConverterTest (apache/kafka, connect/transforms/src/test/java/
// org/apache/kafka/connect/transforms/TimestampConverterTest.java): its
// DATE_PLUS_TIME is 1970-01-02 00:00:01 UTC = 86401000 ms; as Date it is
// day 1, as Time 1000 ms; unix.precision scales the long.
func TestTimestampConverterAsKafkaTest(t *testing.T) {
	const datePlusTime = 86401000
	value := map[string]any{"ts": time.UnixMilli(datePlusTime).UTC(), "s": "1970-01-02T00:00:01.000Z", "u": goavro.Union("long", int64(86401))}
	for _, tt := range []struct {
		name  string
		props []string
		field string
		want  any
	}{
		{"Timestamp to string", []string{"field", "ts", "target.type", "string", "format", "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"}, "ts", "1970-01-02T00:00:01.000Z"},
		{"Timestamp to unix", []string{"field", "ts", "target.type", "unix"}, "ts", int64(datePlusTime)},
		{"Timestamp to Date", []string{"field", "ts", "target.type", "Date"}, "ts", time.Unix(86400, 0).UTC()},
		{"Timestamp to Time", []string{"field", "ts", "target.type", "Time"}, "ts", time.Second},
		{"string to Timestamp", []string{"field", "s", "target.type", "Timestamp", "format", "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"}, "s", time.UnixMilli(datePlusTime).UTC()},
		{"unix seconds to Timestamp", []string{"field", "u", "target.type", "Timestamp", "unix.precision", "seconds"}, "u",
			goavro.Union("long.timestamp-millis", time.UnixMilli(datePlusTime).UTC())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := chainOf(t, "TimestampConverter$Value", tt.props...)
			r := recordOf(t, mustSchema(t, tsSchema), value, 0)
			mustApply(t, c, r)
			equal(t, tt.field, decode(t, r.Value).(map[string]any)[tt.field], tt.want)
		})
	}
}

func TestTimestampConverterConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		props []string
		want  string
	}{
		{[]string{"field", "ts", "target.type", "Instant"}, "transforms.t.target.type"},
		{[]string{"field", "ts", "target.type", "string"}, "transforms.t.format: is required"},
		{[]string{"field", "ts", "target.type", "string", "format", "yyyy Q"}, `transforms.t.format: pattern letters "Q"`},
		{[]string{"target.type", "unix"}, "transforms.t.field"},
	} {
		if _, err := New(specOf("TimestampConverter$Value", tt.props...), nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.props, err, tt.want)
		}
	}
}

const nestedSchema = `{"type":"record","name":"top","fields":[{"name":"A","type":{"type":"record","name":"a","fields":[
 {"name":"B","type":{"type":"record","name":"b","fields":[{"name":"int32","type":"int"},{"name":"string","type":"string"}]}}]}},
 {"name":"magic","type":"int"}]}`

// ExtractFieldTest.withSchema, HoistFieldTest.withSchema, FlattenTest
// (nestedStruct, with delimiter "_": Avro names cannot hold "."),
// SetSchemaMetadataTest.schemaNameAndVersionUpdate, ValueToKeyTest.withSchema.
func TestShapeTransformsAsKafkaTests(t *testing.T) {
	s := mustSchema(t, nestedSchema)
	value := map[string]any{"A": map[string]any{"B": map[string]any{"int32": int32(8), "string": "x"}}, "magic": int32(42)}

	r := recordOf(t, s, value, 0)
	mustApply(t, chainOf(t, "ExtractField$Value", "field", "magic"), r)
	equal(t, "extracted", decode(t, r.Value), int32(42))

	r = recordOf(t, s, value, 0)
	before := r.Value.Bytes
	mustApply(t, chainOf(t, "HoistField$Value", "field", "magic"), r)
	equal(t, "hoisted", decode(t, r.Value), map[string]any{"magic": value})
	if !bytes.Equal(r.Value.Bytes, before) {
		t.Error("hoisting re-encoded the datum")
	}

	r = recordOf(t, s, value, 0)
	mustApply(t, chainOf(t, "Flatten$Value", "delimiter", "_"), r)
	equal(t, "flat", decode(t, r.Value), map[string]any{"A_B_int32": int32(8), "A_B_string": "x", "magic": int32(42)})

	r = recordOf(t, s, value, 0)
	mustApply(t, chainOf(t, "SetSchemaMetadata$Value", "schema.name", "foo", "schema.version", "42"), r)
	if !strings.Contains(r.Value.Schema.Text, `"name":"foo"`) || !strings.Contains(r.Value.Schema.Text, `"connect.version":42`) {
		t.Errorf("schema %s", r.Value.Schema.Text)
	}

	r = recordOf(t, s, value, 0)
	mustApply(t, chainOf(t, "ValueToKey", "fields", "magic"), r)
	equal(t, "key", decode(t, r.Key), map[string]any{"magic": int32(42)})
	equal(t, "value unchanged", decode(t, r.Value), value)

	// Flatten of a nullable nested record is refused, per record schema.
	ns := mustSchema(t, `{"type":"record","name":"t","fields":[{"name":"o","type":["null",{"type":"record","name":"o","fields":[{"name":"x","type":"int"}]}]}]}`)
	if _, err := chainOf(t, "Flatten$Value", "delimiter", "_").Apply(recordOf(t, ns, map[string]any{"o": nil}, 0)); err == nil || !strings.Contains(err.Error(), "nullable record") {
		t.Errorf("nullable nested record: err = %v", err)
	}
}

// RegexRouterTest (staticReplacement, leadingWildcard, slice) and
// TimestampRouterTest.defaultConfiguration (1483425001864 → test-20170103).
func TestRoutersAsKafkaTests(t *testing.T) {
	for _, tt := range []struct{ regex, replacement, topic, want string }{
		{"foo", "bar", "foo", "bar"},
		{"foo", "bar", "foobar", "foobar"},
		{".*-(.*)", "$1", "a-b", "b"},
		{"(.*)-(\\d\\d\\d\\d\\d\\d\\d\\d)", "$1", "index-20160117", "index"},
		{"(.*)", "prefix-$1", "orig", "prefix-orig"},
	} {
		r := &Record{Topic: tt.topic}
		mustApply(t, chainOf(t, "RegexRouter", "regex", tt.regex, "replacement", tt.replacement), r)
		equal(t, tt.regex+" on "+tt.topic, r.Topic, tt.want)
	}
	r := &Record{Topic: "test", Timestamp: time.UnixMilli(1483425001864)}
	c := chainOf(t, "TimestampRouter")
	mustApply(t, c, r)
	equal(t, "timestamp router", r.Topic, "test-20170103")
	if !c.ChangesTopic() {
		t.Error("a router chain does not say it changes topics")
	}
}

// InsertHeaderTest, DropHeadersTest, HeaderFromTest (copy and move).
func TestHeaderTransformsAsKafkaTests(t *testing.T) {
	r := &Record{Topic: "test", Headers: []kgo.RecordHeader{{Key: "keep", Value: []byte("1")}, {Key: "drop", Value: []byte("2")}, {Key: "drop"}}}
	mustApply(t, chainOf(t, "InsertHeader", "header", "inserted", "value.literal", "inserted-value"), r)
	mustApply(t, chainOf(t, "DropHeaders", "headers", "drop"), r)
	equal(t, "headers", r.Headers, []kgo.RecordHeader{{Key: "keep", Value: []byte("1")}, {Key: "inserted", Value: []byte("inserted-value")}})

	s := mustSchema(t, replaceSchema)
	value := map[string]any{"dont": "whatever", "abc": int32(42), "foo": true, "etc": "etc"}
	r = recordOf(t, s, value, 0)
	mustApply(t, chainOf(t, "HeaderFrom$Value", "fields", "abc,foo", "headers", "h_abc,h_foo", "operation", "move"), r)
	equal(t, "moved headers", r.Headers, []kgo.RecordHeader{{Key: "h_abc", Value: []byte("42")}, {Key: "h_foo", Value: []byte("true")}})
	equal(t, "value without moved fields", decode(t, r.Value), map[string]any{"dont": "whatever", "etc": "etc"})
}

// TopicNameMatchesTest, HasHeaderKeyTest, RecordIsTombstone, negate and
// Filter: the predicate decides which records a transform applies to.
func TestPredicatesAndFilter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		pred   configs.PredicateSpec
		negate bool
		rec    Record
		keep   bool
	}{
		{"topic matches whole name", configs.PredicateSpec{Class: "TopicNameMatches", Props: propsOf("pattern", "my-prefix-.*")}, false, Record{Topic: "my-prefix-foo"}, false},
		{"topic is anchored", configs.PredicateSpec{Class: "TopicNameMatches", Props: propsOf("pattern", "my-prefix-.*")}, false, Record{Topic: "x-my-prefix-foo"}, true},
		{"negated", configs.PredicateSpec{Class: "TopicNameMatches", Props: propsOf("pattern", "my-prefix-.*")}, true, Record{Topic: "my-prefix-foo"}, true},
		{"header present", configs.PredicateSpec{Class: "HasHeaderKey", Props: propsOf("name", "h")}, false, Record{Headers: []kgo.RecordHeader{{Key: "h"}}}, false},
		{"header absent", configs.PredicateSpec{Class: "HasHeaderKey", Props: propsOf("name", "h")}, false, Record{Headers: []kgo.RecordHeader{{Key: "x"}}}, true},
		{"tombstone", configs.PredicateSpec{Class: "RecordIsTombstone"}, false, Record{}, false},
		{"not a tombstone", configs.PredicateSpec{Class: "RecordIsTombstone"}, false, Record{Value: Value{Bytes: []byte{}}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.pred.Alias = "p"
			c, err := New([]configs.TransformSpec{{Alias: "f", Class: "Filter", Predicate: "p", Negate: tt.negate}}, []configs.PredicateSpec{tt.pred})
			if err != nil {
				t.Fatal(err)
			}
			keep, err := c.Apply(&tt.rec)
			if err != nil || keep != tt.keep {
				t.Errorf("Apply = %v, %v; want %v", keep, err, tt.keep)
			}
		})
	}
}

// A header predicate cannot choose whether the value's schema changes:
// one registry id would be written with two schemas.
func TestHeaderPredicateOnSchemaChangeRefused(t *testing.T) {
	_, err := New([]configs.TransformSpec{{Alias: "i", Class: "InsertField$Value", Props: propsOf("topic.field", "t"), Predicate: "p"}},
		[]configs.PredicateSpec{{Alias: "p", Class: "HasHeaderKey", Props: propsOf("name", "h")}})
	if err == nil || !strings.Contains(err.Error(), "transforms.i.predicate") {
		t.Fatalf("err = %v", err)
	}
}
