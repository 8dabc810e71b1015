// Package convert owns Kafka Connect's converters: how a record's key and
// value bytes become the sink's record form, an Avro writer schema with its
// binary datum (Value.Schema set), or bytes written as they are
// (Value.Schema nil, for the string format). Confluent's AvroConverter
// (Avro, through the registry), Kafka's JsonConverter with and without
// embedded schemas (Json: the Connect schema maps to Avro as Confluent's
// AvroData maps it, compiled once per schema), Confluent's ProtobufConverter
// (Protobuf: the registry's .proto schema compiled once per id, mapped as
// ProtobufData then AvroData map it), Confluent's JsonSchemaConverter (the
// registry's JSON Schema mapped to a Connect schema as JsonSchemaData does,
// then to Avro the same way, compiled once per id), and the key converters
// (String, ByteArray, the Number converters) live here. The sink calls one
// Converter per record and knows nothing of the wire formats.
package convert

import (
	"context"
	"errors"
	"fmt"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// Value is a converted key or value: an Avro schema and its binary datum,
// or bytes written as they are (Schema nil). The zero Value is null (a
// tombstone, or a JSON payload of null).
type Value struct {
	Schema *schema.Schema
	Datum  []byte
}

// IsNull reports whether v is a null value.
func (v Value) IsNull() bool { return v.Schema == nil && v.Datum == nil }

// Converter turns one record's key or value bytes (never nil: the sink
// handles tombstones) into a Value. Implementations are safe for
// concurrent use: a connector's partitions convert in parallel.
//
// An error that wraps ErrConversion, or one of the schema package's
// record errors (schema.ErrNotFramed, ErrCorruptDatum, ErrUnknownSchema,
// ErrUnsupportedSchema), is the record's own: errors.tolerance applies.
// Any other error (a registry outage, ctx ended) is not the record's
// fault: the sink retries.
type Converter interface {
	Convert(ctx context.Context, topic string, data []byte) (Value, error)
}

// SchemaSource is what a converter whose schema ids are stable across
// restarts (registry ids) also offers: the schema of an id the WAL
// recorded, to make the committed files' schema current after recovery.
type SchemaSource interface {
	SchemaByID(ctx context.Context, id int32) (*schema.Schema, error)
}

// ErrConversion marks bytes a converter cannot read: not JSON, not the
// shape its settings require, a value that does not fit its schema.
var ErrConversion = errors.New("cannot convert the record")

// Error says which converter refused which bytes and why. It wraps
// ErrConversion.
type Error struct {
	Converter string // Connect's class name, short form
	Reason    string
	Err       error // underlying parse error, if any
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v: %s: %v", e.Converter, ErrConversion, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", e.Converter, ErrConversion, e.Reason)
}

// Unwrap exposes ErrConversion and the parse error.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrConversion}
	}
	return []error{ErrConversion, e.Err}
}
