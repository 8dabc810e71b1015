// Package avsc owns the parsed form of an Avro schema, the one model every
// consumer walks: schema evolution and the datum scan (package schema), the
// output formats (Parquet, JSON) and the Hive type mapping. It is a graph of
// Nodes with named types resolved and shared by every reference (so a
// recursive type is a cycle), aliases, field docs and defaults, enum
// defaults, logical types both recognised (Logical) and as declared
// (Declared), and the goavro union branch names needed to read goavro's
// native union values.
//
// Read builds the graph of any schema goavro reads. Parse and ParseStrict
// also refuse what the formats and Hive cannot map: a top level that is not
// a record, or a recursive record, because no columnar format or Hive type
// can express one. Because the formats and Hive walk this one model, file
// columns and table columns agree: a logical type on the wrong base type,
// or an invalid decimal, is ignored (Avro specification).
// It imports nothing of this module, so any package may depend on it.
package avsc

import "errors"

// Kind is the Avro type of a Node.
type Kind int

// The Avro types.
const (
	Null Kind = iota
	Boolean
	Int
	Long
	Float
	Double
	Bytes
	String
	Record
	Enum
	Array
	Map
	Fixed
	Union
)

var kindNames = [...]string{"null", "boolean", "int", "long", "float", "double", "bytes", "string", "record", "enum", "array", "map", "fixed", "union"}

func (k Kind) String() string { return kindNames[k] }

// Logical is a recognised Avro logical type.
type Logical int

// The logical types the formats map. None means the plain Kind.
const (
	None Logical = iota
	Date
	TimeMillis
	TimeMicros
	TimestampMillis
	TimestampMicros
	LocalTimestampMillis
	LocalTimestampMicros
	Decimal
	UUID
)

var logicalNames = map[string]Logical{
	"date": Date, "time-millis": TimeMillis, "time-micros": TimeMicros,
	"timestamp-millis": TimestampMillis, "timestamp-micros": TimestampMicros,
	"local-timestamp-millis": LocalTimestampMillis, "local-timestamp-micros": LocalTimestampMicros,
	"decimal": Decimal, "uuid": UUID,
}

// baseOf is the Kind each logical type annotates (decimal: bytes or fixed).
var baseOf = map[Logical]Kind{
	Date: Int, TimeMillis: Int, TimeMicros: Long, TimestampMillis: Long, TimestampMicros: Long,
	LocalTimestampMillis: Long, LocalTimestampMicros: Long, Decimal: Bytes, UUID: String,
}

// ErrInvalidSchema matches every *SchemaError.
var ErrInvalidSchema = errors.New("avro schema not usable")

// SchemaError says where and why a schema cannot be parsed or mapped.
type SchemaError struct {
	Path string // dotted field path, "" for the top level
	Msg  string
}

func (e *SchemaError) Error() string {
	if e.Path == "" {
		return "avro schema: " + e.Msg
	}
	return "avro schema: field " + e.Path + ": " + e.Msg
}

// Is makes errors.Is(err, ErrInvalidSchema) true.
func (e *SchemaError) Is(target error) bool { return target == ErrInvalidSchema }

// Node is one type in the schema graph. Nodes of named types are shared
// wherever the name is referenced, so a recursive type is a cycle.
type Node struct {
	Kind        Kind
	Logical     Logical
	Name        string   // full name of a record, enum or fixed
	Aliases     []string // aliases of a record, enum or fixed, as written
	Fields      []Field  // Record
	Symbols     []string // Enum
	EnumDefault *string  // Enum: the default symbol, nil if none
	Size        int      // Fixed
	Items       *Node    // Array
	Values      *Node    // Map
	Branches    []*Node  // Union
	Precision   int      // Decimal
	Scale       int      // Decimal
	Declared    Declared // the logical type attributes as written

	minWidth int // see MinWidth
}

// Declared holds the logical type attributes of a primitive or fixed type
// exactly as the schema states them, whether or not Logical recognises
// them (an unknown name, the wrong base type, an invalid decimal). goavro
// also applies a logicalType written on a field whose type is a primitive
// name ({"name":"ts","type":"long","logicalType":"timestamp-millis"}), so
// Declared includes that one too, while Logical follows the specification
// and ignores it. goavro's decoding and schema evolution go by Declared;
// the formats and Hive by Logical.
type Declared struct {
	LogicalType      string // "" if none
	Precision, Scale int    // read when LogicalType is "decimal"; 0 unless an integer
}

// Field is a record field.
type Field struct {
	Name       string
	Aliases    []string // as written
	Doc        string   // the field's "doc", "" if absent
	Type       *Node
	Default    any  // the JSON default, numbers as json.Number (exact); see HasDefault
	HasDefault bool // a "default" is present (it may be JSON null)
}

// Nullable reports whether n is a union of null and exactly one other
// branch, and returns that branch.
func (n *Node) Nullable() (*Node, bool) {
	if n.Kind != Union || len(n.Branches) != 2 {
		return nil, false
	}
	switch {
	case n.Branches[0].Kind == Null && n.Branches[1].Kind != Null:
		return n.Branches[1], true
	case n.Branches[1].Kind == Null && n.Branches[0].Kind != Null:
		return n.Branches[0], true
	}
	return nil, false
}

// UnionKey is the name goavro uses for n as a union branch in native
// values (map[name]value): the full name of a named type, the primitive
// name, or "primitive.logical" for the logical types goavro implements.
func (n *Node) UnionKey() string {
	switch n.Kind {
	case Record, Enum, Fixed:
		return n.Name
	case Array, Map:
		return n.Kind.String()
	}
	switch n.Logical {
	case Date:
		return "int.date"
	case TimeMillis:
		return "int.time-millis"
	case TimeMicros:
		return "long.time-micros"
	case TimestampMillis:
		return "long.timestamp-millis"
	case TimestampMicros:
		return "long.timestamp-micros"
	case Decimal:
		return "bytes.decimal"
	}
	return n.Kind.String()
}

// Branch returns the branch of union n named key in goavro's native form.
func (n *Node) Branch(key string) (*Node, bool) {
	for _, b := range n.Branches {
		if b.UnionKey() == key {
			return b, true
		}
	}
	return nil, false
}
