package wiring

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
)

// avroOnly is a registry that serves Avro schemas only (no RawByID).
type avroOnly struct{ schema.Registry }

// TestProtobufConverterWired: ProtobufConverter values and keys read
// through the registry client (or the in-memory registry); a registry
// that serves only Avro schemas is refused when the connector is built,
// not at the first record.
func TestProtobufConverterWired(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	c := conftest.Connector(t, t.TempDir(), "a", map[string]string{
		"value.converter": convert.ProtobufClass, "value.converter.schema.registry.url": "http://127.0.0.1:1",
		"key.converter": convert.ProtobufClass,
	})
	client, err := registry.NewClient(registry.ClientConfig{URLs: []string{"http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := SinkConfig(c, ConnectorDeps{Registry: client, Mem: NewProcessMemory(0, 1, log), Log: log, Security: kafkaSecurity(t, c)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Value.(*convert.Protobuf); !ok {
		t.Errorf("value converter %T, want *convert.Protobuf", cfg.Value)
	}
	if _, ok := cfg.Key.(*convert.Protobuf); !ok {
		t.Errorf("key converter %T, want *convert.Protobuf", cfg.Key)
	}
	mem, err := SinkConfig(c, ConnectorDeps{Registry: registry.NewMemory(), Mem: NewProcessMemory(0, 1, log), Log: log, Security: kafkaSecurity(t, c)})
	if _, ok := mem.Key.(*convert.Protobuf); err != nil || !ok {
		t.Errorf("the in-memory registry: key converter %T, %v; want *convert.Protobuf", mem.Key, err)
	}
	_, err = SinkConfig(c, ConnectorDeps{Registry: avroOnly{registry.NewMemory()}, Mem: NewProcessMemory(0, 1, log), Log: log, Security: kafkaSecurity(t, c)})
	if err == nil || !strings.Contains(err.Error(), "ProtobufConverter needs a registry client") {
		t.Errorf("an Avro-only registry: %v, want a refusal", err)
	}
}

// TestJSONSchemaConverterWired: JsonSchemaConverter values and keys read
// through the connector's registry client; a registry that cannot fetch
// JSON schemas is refused, never replaced by the Avro default.
func TestJSONSchemaConverterWired(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	const js = "io.confluent.connect.json.JsonSchemaConverter"
	c := conftest.Connector(t, t.TempDir(), "a", map[string]string{"value.converter": js, "key.converter": js})
	reg, err := RegistryFor(c, log)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := SinkConfig(c, ConnectorDeps{Registry: reg, Mem: NewProcessMemory(0, 1, log), Log: log, Security: kafkaSecurity(t, c)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Value.(*convert.JSONSchema); !ok {
		t.Fatalf("value converter %T, want *convert.JSONSchema", cfg.Value)
	}
	if _, ok := cfg.Key.(*convert.JSONSchema); !ok {
		t.Fatalf("key converter %T, want *convert.JSONSchema", cfg.Key)
	}
	_, err = SinkConfig(c, ConnectorDeps{Registry: avroOnly{registry.NewMemory()}, Mem: NewProcessMemory(0, 1, log), Log: log, Security: kafkaSecurity(t, c)})
	if err == nil || !strings.Contains(err.Error(), "serves JSON schemas") {
		t.Fatalf("a registry without schema texts: err = %v", err)
	}
}

// TestJSONSchemaCacheSizeWired: schemas.cache.size reaches the JSON Schema
// converter: with 1, an id read again after another is fetched again.
func TestJSONSchemaCacheSizeWired(t *testing.T) {
	const js = "io.confluent.connect.json.JsonSchemaConverter"
	c := conftest.Connector(t, t.TempDir(), "a", map[string]string{"value.converter": js, "value.converter.schemas.cache.size": "1"})
	m := registry.NewMemory()
	var ids []int32
	for _, title := range []string{"A", "B"} {
		id, _, err := m.RegisterRaw("t-value", schema.Raw{Type: "JSON", Text: `{"type":"object","title":"` + title + `","properties":{}}`})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	v := ValueConverter(c, m)
	for _, id := range []int32{ids[0], ids[1], ids[0]} {
		if _, err := v.Convert(context.Background(), "t", schema.AppendWire(nil, id, []byte(`{}`))); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.RawLookups(); n != 3 {
		t.Fatalf("%d registry lookups with schemas.cache.size 1, want 3 (the first id dropped for the second)", n)
	}
}

// TestJSONSchemaKeyConverterWired: key.converter's JSON Schema converter
// names the key's fields in its errors.
func TestJSONSchemaKeyConverterWired(t *testing.T) {
	const js = "io.confluent.connect.json.JsonSchemaConverter"
	c := conftest.Connector(t, t.TempDir(), "a", map[string]string{"value.converter": js, "key.converter": js})
	m := registry.NewMemory()
	id, _, err := m.RegisterRaw("t-key", schema.Raw{Type: "JSON", Text: `{"type":"object","properties":{"id":{"type":"integer"}}}`})
	if err != nil {
		t.Fatal(err)
	}
	_, err = KeyConverter(c, m).Convert(context.Background(), "t", schema.AppendWire(nil, id, []byte(`{"id":"x"}`)))
	if err == nil || !strings.Contains(err.Error(), "key.id") {
		t.Fatalf("a key that does not fit: %v, want an error naming key.id", err)
	}
}
