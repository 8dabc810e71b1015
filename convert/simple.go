package convert

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// String is Kafka's StringConverter for keys: the UTF-8 text as an Avro
// string, as Connect's optional string schema maps to Avro. (As a value
// converter the sink keeps the bytes as they are: the string format.)
type String struct{}

var stringSchema = mustSchema(`"string"`)

// Convert makes data an Avro string datum.
func (String) Convert(_ context.Context, _ string, data []byte) (Value, error) {
	return Value{Schema: stringSchema, Datum: append(binary.AppendVarint(nil, int64(len(data))), data...)}, nil
}

// NumberKind names one of Kafka's Number converters
// (org.apache.kafka.connect.converters.{Short,Integer,Long,Float,Double}Converter).
type NumberKind string

// The Number converters, by the Avro type their Connect schema maps to.
const (
	Short   NumberKind = "short"
	Integer NumberKind = "integer"
	Long    NumberKind = "long"
	Float   NumberKind = "float"
	Double  NumberKind = "double"
)

// Number is one of Kafka's Number converters: the big-endian bytes Kafka's
// ShortSerializer, IntegerSerializer, … write, as an Avro int, long,
// float or double (Short as int with connect.type int16, as AvroData).
type Number struct {
	kind   NumberKind
	size   int
	schema *schema.Schema
}

var numbers = map[NumberKind]struct {
	size int
	avro string
}{
	Short: {2, `{"type":"int","connect.type":"int16"}`}, Integer: {4, `"int"`}, Long: {8, `"long"`},
	Float: {4, `"float"`}, Double: {8, `"double"`},
}

// NewNumber is the Number converter of kind; it panics on another kind
// (configs only names these).
func NewNumber(kind NumberKind) *Number {
	n, ok := numbers[kind]
	if !ok {
		panic(fmt.Sprintf("convert: no Number converter %q", kind))
	}
	return &Number{kind: kind, size: n.size, schema: mustSchema(n.avro)}
}

// Convert reads the fixed-size big-endian number.
func (n *Number) Convert(_ context.Context, _ string, data []byte) (Value, error) {
	if len(data) != n.size {
		return Value{}, &Error{Converter: string(n.kind) + " converter",
			Reason: fmt.Sprintf("%d bytes; a %s is %d", len(data), n.kind, n.size)}
	}
	var datum []byte
	switch n.kind {
	case Short:
		datum = binary.AppendVarint(nil, int64(int16(binary.BigEndian.Uint16(data))))
	case Integer:
		datum = binary.AppendVarint(nil, int64(int32(binary.BigEndian.Uint32(data))))
	case Long:
		datum = binary.AppendVarint(nil, int64(binary.BigEndian.Uint64(data)))
	case Float:
		datum = binary.LittleEndian.AppendUint32(nil, binary.BigEndian.Uint32(data))
	case Double:
		datum = binary.LittleEndian.AppendUint64(nil, binary.BigEndian.Uint64(data))
	}
	return Value{Schema: n.schema, Datum: datum}, nil
}

func mustSchema(text string) *schema.Schema {
	s, err := schema.New(0, text)
	if err != nil {
		panic(err)
	}
	return s
}
