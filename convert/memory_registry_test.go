package convert

import (
	"context"
	"errors"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
)

// TestRegistryConvertersOnMemory: the Protobuf and JSON Schema converters
// read through registry.Memory as through the real client (the embedded
// demo and unit tests elsewhere use it): a .proto schema with a reference
// by subject version, a JSON schema, each fetched once; an id Memory
// does not have is the record's ErrUnknownSchema.
func TestRegistryConvertersOnMemory(t *testing.T) {
	ctx := context.Background()
	m := registry.NewMemory()
	if _, _, err := m.RegisterRaw("common-value", schema.Raw{Type: "PROTOBUF", Text: commonProto}); err != nil {
		t.Fatal(err)
	}
	orderID, _, err := m.RegisterRaw("orders-value", schema.Raw{Type: "PROTOBUF", Text: orderProto,
		References: []schema.Reference{{Name: "common.proto", Subject: "common-value", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	personID, _, err := m.RegisterRaw("people-value", schema.Raw{Type: "JSON", Text: personSchema})
	if err != nil {
		t.Fatal(err)
	}
	p := NewProtobuf(m, ProtobufOptions{}, 0)
	j := NewJSONSchema(m, JSONSchemaOptions{})
	for range 3 {
		v, err := p.Convert(ctx, "orders", wire(t, orderID, []int{0}, fullOrder(t)))
		if err != nil || v.Schema.ID != orderID {
			t.Fatalf("Protobuf through Memory: %v, %v", v.Schema, err)
		}
		v, err = j.Convert(ctx, "people", jsWire(personID, `{"id":1,"born":1,"balance":1,"tags":[],"counts":[],"raw":""}`))
		if err != nil || v.Schema.ID != personID {
			t.Fatalf("JSON Schema through Memory: %v, %v", v.Schema, err)
		}
	}
	if n := m.RawLookups(); n != 3 {
		t.Errorf("%d lookups, want 3: each id once and the reference once", n)
	}
	if _, err := p.Convert(ctx, "orders", schema.AppendWire(nil, 99, []byte{0})); !errors.Is(err, schema.ErrUnknownSchema) {
		t.Errorf("Protobuf, an id Memory lacks: %v, want ErrUnknownSchema", err)
	}
	if _, err := j.Convert(ctx, "people", jsWire(99, `{}`)); !errors.Is(err, schema.ErrUnknownSchema) {
		t.Errorf("JSON Schema, an id Memory lacks: %v, want ErrUnknownSchema", err)
	}
	if _, err := j.Convert(ctx, "people", jsWire(orderID, `{}`)); !errors.Is(err, schema.ErrUnsupportedSchema) {
		t.Errorf("JSON Schema, a Protobuf id: %v, want ErrUnsupportedSchema", err)
	}
}
