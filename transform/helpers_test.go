package transform

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// mustSchema parses an Avro schema for a test, under id 7.
func mustSchema(t testing.TB, text string) *schema.Schema {
	t.Helper()
	s, err := schema.New(7, text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// encode is the Avro datum of native under s (goavro's native form).
func encode(t testing.TB, s *schema.Schema, native any) []byte {
	t.Helper()
	b, err := s.Codec.BinaryFromNative(nil, native)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode is v's native form, checked as Validate checks files' datums.
func decode(t testing.TB, v Value) any {
	t.Helper()
	if err := v.Schema.Validate(v.Bytes); err != nil {
		t.Fatalf("output datum does not match its schema %s: %v", v.Schema.Text, err)
	}
	n, err := v.Schema.Native(v.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// chainOf builds a chain of one transform (class, props) for a test.
func chainOf(t testing.TB, class string, kv ...string) *Chain {
	t.Helper()
	c, err := New([]configs.TransformSpec{{Alias: "t", Class: class, Props: propsOf(kv...)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func propsOf(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// record is a record of topic "test" partition 0 offset 5 with value
// native under s and timestamp ts (ms; 0: none).
func recordOf(t testing.TB, s *schema.Schema, native any, ts int64) *Record {
	r := &Record{Topic: "test", Offset: 5, Value: Value{Schema: s, Bytes: encode(t, s, native)}}
	if ts != 0 {
		r.Timestamp = time.UnixMilli(ts)
	}
	return r
}

func mustApply(t testing.TB, c *Chain, r *Record) {
	t.Helper()
	keep, err := c.Apply(r)
	if err != nil || !keep {
		t.Fatalf("Apply = %v, %v", keep, err)
	}
}

func equal(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

var _ = kgo.RecordHeader{}

func specOf(class string, kv ...string) []configs.TransformSpec {
	return []configs.TransformSpec{{Alias: "t", Class: class, Props: propsOf(kv...)}}
}
