package sink

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/sink/deadletter"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// capturedDLQ is a dead-letter topic that keeps what it is sent.
type capturedDLQ struct{ causes []error }

func (d *capturedDLQ) Send(_ context.Context, _ *kgo.Record, cause error) error {
	d.causes = append(d.causes, cause)
	return nil
}

// keyRegistry is an in-memory registry with a Protobuf and a JSON Schema
// key schema, as a producer's serializers register them.
func keyRegistry(t *testing.T) (m *registry.Memory, protoID, jsonID int32) {
	t.Helper()
	m = registry.NewMemory()
	var err error
	if protoID, _, err = m.RegisterRaw("t-key", schema.Raw{Type: "PROTOBUF",
		Text: `syntax = "proto3"; message OrderKey { string region = 1; int64 id = 2; }`}); err != nil {
		t.Fatal(err)
	}
	if jsonID, _, err = m.RegisterRaw("u-key", schema.Raw{Type: "JSON",
		Text: `{"type":"object","title":"OrderKey","properties":{"region":{"type":"string"},"id":{"type":"integer"}},"required":["region","id"]}`}); err != nil {
		t.Fatal(err)
	}
	return m, protoID, jsonID
}

// protoKey is an OrderKey in Confluent's Protobuf wire format (message
// indexes: the single byte 0, the file's first message).
func protoKey(id int32, region string, n int64) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendString(b, region)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(n))
	return schema.AppendWire(nil, id, append([]byte{0}, b...))
}

// TestRegistryKeys: Protobuf and JSON Schema keys are read through the
// registry with the value's converter types on registry.Memory; a key
// the converter refuses is a bad record whose dead-letter stage is
// KEY_CONVERTER, Connect's, where it was VALUE_CONVERTER for every bad
// record; a value's refusal stays VALUE_CONVERTER.
func TestRegistryKeys(t *testing.T) {
	reg, protoID, jsonID := keyRegistry(t)
	value := orderEnvelope(1, false)
	for _, tc := range []struct {
		name     string
		keys     convert.Converter
		key      []byte
		value    []byte
		wantKey  string // the key as Avro reads it back, when good
		badStage deadletter.Stage
	}{
		{"a Protobuf key", convert.NewProtobuf(reg, convert.ProtobufOptions{}, 0), protoKey(protoID, "eu", 7), value, "map[id:map[long:7] region:map[string:eu]]", ""},
		{"a JSON Schema key", convert.NewJSONSchema(reg, convert.JSONSchemaOptions{}), schema.AppendWire(nil, jsonID, []byte(`{"region":"eu","id":7}`)), value, "map[id:7 region:eu]", ""},
		{"a null key", convert.NewProtobuf(reg, convert.ProtobufOptions{}, 0), nil, value, "<nil>", ""},
		{"a Protobuf key that does not parse", convert.NewProtobuf(reg, convert.ProtobufOptions{}, 0), schema.AppendWire(nil, protoID, []byte{0, 0x0a, 0xff}), value, "", deadletter.StageKeyConverter},
		{"a JSON Schema key that does not fit", convert.NewJSONSchema(reg, convert.JSONSchemaOptions{}), schema.AppendWire(nil, jsonID, []byte(`{"region":5,"id":7}`)), value, "", deadletter.StageKeyConverter},
		{"a key not framed", convert.NewJSONSchema(reg, convert.JSONSchemaOptions{}), []byte(`{"region":"eu","id":7}`), value, "", deadletter.StageKeyConverter},
		{"a key of a JSON id read as Protobuf", convert.NewProtobuf(reg, convert.ProtobufOptions{}, 0), schema.AppendWire(nil, jsonID, []byte{0}), value, "", deadletter.StageKeyConverter},
		{"a good key, a bad value", convert.NewProtobuf(reg, convert.ProtobufOptions{}, 0), protoKey(protoID, "eu", 7), []byte("not json"), "", deadletter.StageValueConverter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dlq := &capturedDLQ{}
			c := &Connector{cfg: withDefaults(Config{Name: "keys", Value: convert.NewJSON(convert.JSONOptions{SchemasEnable: true}), Key: tc.keys,
				Tolerance: ToleranceAll, DLQTopic: "dlq"}), dlq: dlq}
			kr := &kgo.Record{Topic: "t", Partition: 1, Offset: 5, Key: tc.key, Value: tc.value}
			r, err := c.decode(context.Background(), kr, &transform.Record{})
			if tc.badStage == "" {
				if err != nil {
					t.Fatal(err)
				}
				var got any
				if r.Key.Schema != nil {
					if got, err = r.Key.Schema.Native(r.Key.Datum); err != nil {
						t.Fatal(err)
					}
				}
				if fmt.Sprint(got) != tc.wantKey {
					t.Fatalf("key read as %v, want %s", got, tc.wantKey)
				}
				return
			}
			if !isBadRecord(err) {
				t.Fatalf("%v is not a bad record", err)
			}
			if err := c.badRecord(context.Background(), kr, err); err != nil || len(dlq.causes) != 1 {
				t.Fatalf("badRecord = %v, %d sent", err, len(dlq.causes))
			}
			if got := deadletter.StageOf(dlq.causes[0]); got != tc.badStage {
				t.Fatalf("stage %s for %v, want %s", got, dlq.causes[0], tc.badStage)
			}
		})
	}
}

// TestFailedStep: each kind of bad record has Connect's stage and the
// executing class Connect names (the configured converter, the default
// one, the transform's full class, SinkTask).
func TestFailedStep(t *testing.T) {
	configured := &Connector{cfg: Config{KeyClass: convert.ProtobufClass, ValueClass: convert.JSONClass}}
	defaults := &Connector{}
	for _, tc := range []struct {
		c         *Connector
		cause     error
		want      deadletter.Stage
		wantClass string
	}{
		{configured, &keyError{&convert.Error{Converter: "ProtobufConverter", Reason: "x"}}, deadletter.StageKeyConverter, convert.ProtobufClass},
		{defaults, &keyError{schema.ErrNotFramed}, deadletter.StageKeyConverter, "org.apache.kafka.connect.converters.ByteArrayConverter"},
		{configured, &convert.Error{Converter: "JsonConverter", Reason: "x"}, deadletter.StageValueConverter, convert.JSONClass},
		{defaults, fmt.Errorf("schema 3: %w", schema.ErrUnknownSchema), deadletter.StageValueConverter, convert.AvroClass},
		{defaults, fmt.Errorf("record 4: %w", &transform.Error{Transform: "a", Class: "Cast$Value", Err: errors.New("bad")}), deadletter.StageTransformation,
			"org.apache.kafka.connect.transforms.Cast$Value"},
		{defaults, errNullValue, deadletter.StageTaskPut, "org.apache.kafka.connect.sink.SinkTask"},
		{defaults, &partitioner.RecordError{What: "field region", Reason: "missing"}, deadletter.StageTaskPut, "org.apache.kafka.connect.sink.SinkTask"},
		{defaults, &format.ValueError{Path: "at", Msg: "past 2262"}, deadletter.StageTaskPut, "org.apache.kafka.connect.sink.SinkTask"},
	} {
		if got, class := tc.c.failedStep(tc.cause); got != tc.want || class != tc.wantClass {
			t.Errorf("failedStep(%v) = %s, %s; want %s, %s", tc.cause, got, class, tc.want, tc.wantClass)
		}
	}
	if !errors.Is(&keyError{schema.ErrNotFramed}, schema.ErrNotFramed) {
		t.Error("a key's error hides its cause")
	}
}
