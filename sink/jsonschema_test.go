package sink

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// jsonSchemaTexts is a convert.RawSchemas: JSON schema 7, an Avro schema
// 8, an unusable schema 9, and an outage for any other id.
type jsonSchemaTexts struct{}

var errJSONSchemaOutage = errors.New("registry down")

func (jsonSchemaTexts) RawByID(_ context.Context, id int32) (schema.Raw, error) {
	switch id {
	case 7:
		return schema.Raw{Type: "JSON", Text: `{"type":"object","title":"T","properties":{"seq":{"type":"integer"}}}`}, nil
	case 8:
		return schema.Raw{Type: "AVRO", Text: `"string"`}, nil
	case 9:
		return schema.Raw{}, &schema.SchemaError{ID: 9, Reason: "gone"}
	}
	return schema.Raw{}, errJSONSchemaOutage
}

// TestJSONSchemaBadRecords: what JsonSchemaConverter refuses is the
// record's own fault (errors.tolerance applies, and with none the
// connector stops naming connector, topic, partition and offset); a
// registry outage is not (the partition retries).
func TestJSONSchemaBadRecords(t *testing.T) {
	c := &Connector{cfg: withDefaults(Config{Name: "orders", Value: convert.NewJSONSchema(jsonSchemaTexts{}, convert.JSONSchemaOptions{})})}
	ok := &kgo.Record{Topic: "t", Partition: 2, Offset: 41, Value: schema.AppendWire(nil, 7, []byte(`{"seq":41}`))}
	if r, err := c.decode(context.Background(), ok, &transform.Record{}); err != nil || r.Schema.ID != 7 {
		t.Fatalf("decode = %v, %v", r, err)
	}
	for _, value := range [][]byte{
		[]byte(`{"seq":1}`), // not framed
		schema.AppendWire(nil, 7, []byte(`{"seq":"x"}`)),
		schema.AppendWire(nil, 7, []byte(`{`)),
		schema.AppendWire(nil, 8, []byte(`"s"`)),
		schema.AppendWire(nil, 9, []byte(`{}`)),
	} {
		kr := &kgo.Record{Topic: "t", Partition: 2, Offset: 42, Value: value}
		_, err := c.decode(context.Background(), kr, &transform.Record{})
		if !isBadRecord(err) {
			t.Fatalf("%q: %v is not a bad record", value, err)
		}
		stop := c.badRecord(context.Background(), kr, err)
		if msg := stop.Error(); !strings.Contains(msg, `connector "orders": bad record at topic t partition 2 offset 42`) {
			t.Fatalf("%q with errors.tolerance=none: %v", value, stop)
		}
	}
	outage := &kgo.Record{Topic: "t", Value: schema.AppendWire(nil, 10, []byte(`{}`))}
	if _, err := c.decode(context.Background(), outage, &transform.Record{}); !errors.Is(err, errJSONSchemaOutage) || isBadRecord(err) {
		t.Fatalf("a registry outage: %v; want a retried failure, not a bad record", err)
	}
}
