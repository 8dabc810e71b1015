package convert

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Connect's logical type names (org.apache.kafka.connect.data).
const (
	connectDate      = "org.apache.kafka.connect.data.Date"
	connectTime      = "org.apache.kafka.connect.data.Time"
	connectTimestamp = "org.apache.kafka.connect.data.Timestamp"
	connectDecimal   = "org.apache.kafka.connect.data.Decimal"
	// decimalPrecisionParam is where Confluent's AvroData keeps a decimal's
	// precision; without it AvroData writes 64.
	decimalPrecisionParam   = "connect.decimal.precision"
	defaultDecimalPrecision = 64
)

// connectSchema is a Connect schema as JsonConverter embeds it
// (JsonSchema.ENVELOPE_SCHEMA_FIELD_NAME): a struct's fields are schemas
// with a "field" name.
type connectSchema struct {
	Type       string            `json:"type"`
	Optional   bool              `json:"optional"`
	Name       string            `json:"name"`
	Version    *int              `json:"version"`
	Doc        string            `json:"doc"`
	Default    json.RawMessage   `json:"default"`
	Parameters map[string]string `json:"parameters"`
	Field      string            `json:"field"`
	Fields     []*connectSchema  `json:"fields"`
	Items      *connectSchema    `json:"items"`
	Keys       *connectSchema    `json:"keys"`
	Values     *connectSchema    `json:"values"`
	// ref, when set, is the identity of a struct that may appear more
	// than once (a Protobuf message's full name): Avro defines its record
	// once and names it after that, as AvroData does. JsonConverter's
	// schemas have none: each struct is its own.
	ref string
	// entryObjects: a map with other than string keys whose payload is an
	// array of {"key": …, "value": …} objects (JsonSchemaData), not of
	// [key, value] pairs (JsonConverter).
	entryObjects bool
}

// kind is what a compiled node encodes.
type kind uint8

const (
	kindBoolean kind = iota
	kindInt8
	kindInt16
	kindInt32
	kindInt64
	kindFloat32
	kindFloat64
	kindString
	kindBytes
	kindArray
	kindMap      // string keys: an Avro map
	kindEntryMap // other keys: an array of key/value records, as AvroData writes it
	kindStruct
	kindDate      // int32 days since the epoch
	kindTime      // int32 milliseconds since midnight
	kindTimestamp // int64 milliseconds since the epoch
	kindDecimal   // unscaled two's complement bytes, scale from the schema
)

// node is a Connect schema compiled once: the Avro it maps to is written
// from it, and each payload is encoded by walking it.
type node struct {
	kind     kind
	optional bool
	// def is the default a missing or null required value takes (JSON,
	// as Connect writes it); nil: none.
	def    json.RawMessage
	scale  int
	fields []field
	elem   *node // array items, map values
	key    *node // map keys
	// entryObjects: kindEntryMap entries are {"key", "value"} objects.
	entryObjects bool
}

type field struct {
	name string
	n    *node
}

var primitiveKinds = map[string]kind{
	"boolean": kindBoolean, "int8": kindInt8, "int16": kindInt16, "int32": kindInt32, "int64": kindInt64,
	"float32": kindFloat32, "float64": kindFloat64, "string": kindString, "bytes": kindBytes,
}

// compile checks a Connect schema and compiles it; at says where it is
// (a field path) for errors.
func compile(s *connectSchema, at string) (*node, error) {
	if s == nil {
		return nil, fmt.Errorf("%s: no schema", at)
	}
	n := &node{optional: s.Optional, def: nullIsNone(s.Default)}
	if k, ok := primitiveKinds[s.Type]; ok {
		n.kind = k
		return n, logical(n, s, at)
	}
	var err error
	switch s.Type {
	case "array":
		n.kind = kindArray
		n.elem, err = compile(s.Items, at+"[]")
	case "map":
		n.kind = kindMap
		if n.key, err = compile(s.Keys, at+"{key}"); err != nil {
			return nil, err
		}
		if n.key.kind != kindString || n.key.optional {
			n.kind, n.entryObjects = kindEntryMap, s.entryObjects
		}
		n.elem, err = compile(s.Values, at+"{value}")
	case "struct":
		n.kind = kindStruct
		err = compileFields(n, s, at)
	default:
		err = fmt.Errorf("%s: unknown Connect schema type %q", at, s.Type)
	}
	return n, err
}

func compileFields(n *node, s *connectSchema, at string) error {
	seen := map[string]bool{}
	for _, f := range s.Fields {
		if f == nil || f.Field == "" {
			return fmt.Errorf("%s: a struct field without a name", at)
		}
		if seen[f.Field] {
			return fmt.Errorf("%s: field %q twice", at, f.Field)
		}
		seen[f.Field] = true
		fn, err := compile(f, at+"."+f.Field)
		if err != nil {
			return err
		}
		n.fields = append(n.fields, field{name: f.Field, n: fn})
	}
	return nil
}

// logical applies Connect's logical types to a primitive node: the name
// decides, on the base type Connect defines for it.
func logical(n *node, s *connectSchema, at string) error {
	want, lk := map[string]kind{connectDate: kindInt32, connectTime: kindInt32, connectTimestamp: kindInt64, connectDecimal: kindBytes}[s.Name],
		map[string]kind{connectDate: kindDate, connectTime: kindTime, connectTimestamp: kindTimestamp, connectDecimal: kindDecimal}[s.Name]
	if lk == 0 {
		return nil
	}
	if n.kind != want {
		return fmt.Errorf("%s: logical type %s must be on %s, not %s", at, s.Name, kindName(want), s.Type)
	}
	n.kind = lk
	if lk == kindDecimal {
		scale, err := strconv.Atoi(s.Parameters["scale"])
		if err != nil || scale < 0 {
			return fmt.Errorf("%s: Decimal needs a parameter scale >= 0, not %q", at, s.Parameters["scale"])
		}
		n.scale = scale
	}
	return nil
}

func kindName(k kind) string {
	for name, pk := range primitiveKinds {
		if pk == k {
			return name
		}
	}
	return "?"
}

func nullIsNone(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return raw
}

// avroWriter writes the Avro schema of a compiled Connect schema as
// Confluent's AvroData (fromConnectSchema) does: optional → a union with
// null first and a null default, int8/int16 → int with connect.type,
// unnamed structs → io.confluent.connect.avro.ConnectDefault, ConnectDefault2, …,
// maps with other than string keys → arrays of MapEntry records.
type avroWriter struct {
	b        strings.Builder
	defaults int // unnamed structs so far
	entries  int // MapEntry records so far
	names    map[string]bool
	refs     map[string]string // struct identity (connectSchema.ref) → the record's full name
	ns       string            // the enclosing record's namespace, which a name without one inherits
}

// avroSchema is the Avro schema JSON of n (compiled from s).
func avroSchema(s *connectSchema, n *node) (string, error) {
	w := &avroWriter{names: map[string]bool{}, refs: map[string]string{}}
	if err := w.schema(s, n); err != nil {
		return "", err
	}
	return w.b.String(), nil
}

func (w *avroWriter) schema(s *connectSchema, n *node) error {
	if n.optional {
		w.b.WriteString(`["null",`)
		defer w.b.WriteString(`]`)
	}
	return w.bare(s, n)
}

func (w *avroWriter) bare(s *connectSchema, n *node) error {
	switch n.kind {
	case kindBoolean, kindInt32, kindInt64, kindFloat32, kindFloat64, kindString, kindBytes:
		w.b.WriteString(strconv.Quote(map[kind]string{kindBoolean: "boolean", kindInt32: "int", kindInt64: "long",
			kindFloat32: "float", kindFloat64: "double", kindString: "string", kindBytes: "bytes"}[n.kind]))
	case kindInt8, kindInt16:
		fmt.Fprintf(&w.b, `{"type":"int","connect.type":%q}`, s.Type)
	case kindDate:
		fmt.Fprintf(&w.b, `{"type":"int","connect.version":1,"connect.name":%q,"logicalType":"date"}`, connectDate)
	case kindTime:
		fmt.Fprintf(&w.b, `{"type":"int","connect.version":1,"connect.name":%q,"logicalType":"time-millis"}`, connectTime)
	case kindTimestamp:
		fmt.Fprintf(&w.b, `{"type":"long","connect.version":1,"connect.name":%q,"logicalType":"timestamp-millis"}`, connectTimestamp)
	case kindDecimal:
		precision := defaultDecimalPrecision
		if p, err := strconv.Atoi(s.Parameters[decimalPrecisionParam]); err == nil && p > 0 {
			precision = p
		}
		fmt.Fprintf(&w.b, `{"type":"bytes","scale":%d,"precision":%d,"connect.version":1,"connect.parameters":{"scale":"%d"},"connect.name":%q,"logicalType":"decimal"}`,
			n.scale, precision, n.scale, connectDecimal)
	case kindArray:
		w.b.WriteString(`{"type":"array","items":`)
		if err := w.schema(s.Items, n.elem); err != nil {
			return err
		}
		w.b.WriteString(`}`)
	case kindMap:
		w.b.WriteString(`{"type":"map","values":`)
		if err := w.schema(s.Values, n.elem); err != nil {
			return err
		}
		w.b.WriteString(`}`)
	case kindEntryMap:
		return w.entryMap(s, n)
	case kindStruct:
		return w.record(s, n)
	}
	return nil
}

func (w *avroWriter) entryMap(s *connectSchema, n *node) error {
	w.entries++
	name := "MapEntry"
	if w.entries > 1 {
		name += strconv.Itoa(w.entries)
	}
	fmt.Fprintf(&w.b, `{"type":"array","items":{"type":"record","name":%q,"namespace":"io.confluent.connect.avro","fields":[{"name":"key","type":`, name)
	if err := w.schema(s.Keys, n.key); err != nil {
		return err
	}
	w.b.WriteString(`},{"name":"value","type":`)
	if err := w.schema(s.Values, n.elem); err != nil {
		return err
	}
	w.b.WriteString(`}]}}`)
	return nil
}

func (w *avroWriter) record(s *connectSchema, n *node) error {
	full := s.Name
	if full == "" {
		w.defaults++
		full = "io.confluent.connect.avro.ConnectDefault"
		if w.defaults > 1 {
			full += strconv.Itoa(w.defaults)
		}
	}
	if written, ok := w.refs[s.ref]; ok && s.ref != "" {
		w.b.WriteString(strconv.Quote(written)) // defined before: its full name
		return nil
	}
	if w.names[full] {
		return fmt.Errorf("struct name %q is used by two different structs: Avro needs distinct record names", full)
	}
	w.names[full] = true
	ns, name := "", full
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		ns, name = full[:i], full[i+1:]
	}
	if s.ref != "" {
		w.refs[s.ref] = qualified(cmp.Or(ns, w.ns), name)
	}
	defer func(outer string) { w.ns = outer }(w.ns)
	w.ns = cmp.Or(ns, w.ns)
	fmt.Fprintf(&w.b, `{"type":"record","name":%q`, name)
	if ns != "" {
		fmt.Fprintf(&w.b, `,"namespace":%q`, ns)
	}
	if s.Doc != "" {
		fmt.Fprintf(&w.b, `,"doc":%q`, s.Doc)
	}
	w.b.WriteString(`,"fields":[`)
	for i, f := range n.fields {
		if i > 0 {
			w.b.WriteByte(',')
		}
		fs := s.Fields[i]
		fmt.Fprintf(&w.b, `{"name":%q`, f.name)
		if fs.Doc != "" {
			fmt.Fprintf(&w.b, `,"doc":%q`, fs.Doc)
		}
		w.b.WriteString(`,"type":`)
		if err := w.schema(fs, f.n); err != nil {
			return err
		}
		if f.n.optional {
			w.b.WriteString(`,"default":null`)
		} else if d, ok := avroDefault(f.n); ok {
			w.b.WriteString(`,"default":`)
			w.b.Write(d)
		}
		w.b.WriteString(`}`)
	}
	w.b.WriteString(`]}`)
	return nil
}

// avroDefault is a required field's default in Avro's JSON where Connect's
// JSON default means the same (booleans, numbers, strings); other
// defaults (bytes, logical types, containers) are not carried into the
// Avro schema, though a null payload still takes them.
func avroDefault(n *node) (json.RawMessage, bool) {
	if n.def == nil {
		return nil, false
	}
	switch n.kind {
	case kindBoolean, kindInt8, kindInt16, kindInt32, kindInt64, kindFloat32, kindFloat64, kindString:
		return n.def, true
	}
	return nil, false
}

// qualified is a record's full name in its namespace.
func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "." + name
}
