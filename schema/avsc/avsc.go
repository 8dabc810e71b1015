// Package avsc owns the parsed form of an Avro writer schema that the
// output formats (Parquet, JSON) and the Hive type mapping walk: a tree of
// Nodes with named types resolved, logical types recognised, field docs
// kept, and the goavro union branch names needed to read goavro's native
// union values. Because every consumer walks this one model, file columns
// and table columns agree: a logical type on the wrong base type, or an
// invalid decimal, is ignored (Avro specification), and recursive records
// are rejected because no columnar format or Hive type can express them.
// It imports nothing of this module, so any package may depend on it.
package avsc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

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

// Node is one type in the schema tree. Nodes of named types are shared
// wherever the name is referenced.
type Node struct {
	Kind      Kind
	Logical   Logical
	Name      string   // full name of a record, enum or fixed
	Fields    []Field  // Record
	Symbols   []string // Enum
	Size      int      // Fixed
	Items     *Node    // Array
	Values    *Node    // Map
	Branches  []*Node  // Union
	Precision int      // Decimal
	Scale     int      // Decimal
}

// Field is a record field.
type Field struct {
	Name string
	Doc  string // the field's "doc", "" if absent
	Type *Node
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

// Parse reads the schema JSON as goavro, which decodes the data, does: a
// schema object whose "type" is itself a schema ({"type":{"type":"int"}})
// stands for that schema. The top level must be a record.
func Parse(text string) (*Node, error) { return parse(text, false) }

// ParseStrict is Parse for schemas that Java Avro must read too (Hive reads
// the table's Avro schema with it): a schema object's "type" must be a
// type name, as the Avro specification says.
func ParseStrict(text string) (*Node, error) { return parse(text, true) }

func parse(text string, strict bool) (*Node, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, &SchemaError{Msg: "not JSON: " + err.Error()}
	}
	if !recordObject(root, strict) {
		return nil, topLevelError()
	}
	p := &parser{named: map[string]*Node{}, strict: strict}
	n, err := p.node(root, "", "")
	if err != nil {
		return nil, err
	}
	if n.Kind != Record { // {"type":{...}} wrapping a non-record
		return nil, topLevelError()
	}
	return n, nil
}

func topLevelError() error { return &SchemaError{Msg: "top level must be a record"} }

// recordObject rejects, before parsing, a top level that cannot be a
// record, so the error names the real problem rather than one inside it.
// Only the lenient form may wrap the record: {"type":{"type":"record"}}.
func recordObject(root any, strict bool) bool {
	m, ok := root.(map[string]any)
	if !ok {
		return false
	}
	typ, named := m["type"].(string)
	if !named {
		return !strict
	}
	return typ == "record" || typ == "error"
}

type parser struct {
	// named holds every defined named type; a Record with nil Fields is
	// still being parsed, so a reference to it is recursion.
	named map[string]*Node
	// strict rejects {"type": <schema>} (see ParseStrict).
	strict bool
}

var primitives = map[string]Kind{
	"null": Null, "boolean": Boolean, "int": Int, "long": Long,
	"float": Float, "double": Double, "bytes": Bytes, "string": String,
}

func (p *parser) node(v any, ns, path string) (*Node, error) {
	switch t := v.(type) {
	case string:
		if k, ok := primitives[t]; ok {
			return &Node{Kind: k}, nil
		}
		return p.reference(t, ns, path)
	case []any:
		return p.union(t, ns, path)
	case map[string]any:
		return p.complex(t, ns, path)
	}
	return nil, &SchemaError{Path: path, Msg: fmt.Sprintf("unexpected JSON %T as a type", v)}
}

func (p *parser) complex(m map[string]any, ns, path string) (*Node, error) {
	typ, ok := m["type"].(string)
	if !ok {
		inner, nested := m["type"]
		switch {
		case !nested:
			return nil, &SchemaError{Path: path, Msg: `schema object without "type"`}
		case p.strict:
			return nil, &SchemaError{Path: path, Msg: `"type" must be a string in a schema object`}
		}
		return p.node(inner, ns, path) // {"type": {...}} or {"type": [...]}
	}
	switch typ {
	case "record", "error":
		return p.record(m, ns, path)
	case "enum":
		return p.enum(m, ns, path)
	case "fixed":
		return p.fixed(m, ns, path)
	case "array":
		items, err := p.child(m, "items", ns, path)
		return &Node{Kind: Array, Items: items}, err
	case "map":
		values, err := p.child(m, "values", ns, path)
		return &Node{Kind: Map, Values: values}, err
	}
	if k, ok := primitives[typ]; ok {
		n := &Node{Kind: k}
		annotate(n, m)
		return n, nil
	}
	return p.reference(typ, ns, path)
}

func (p *parser) child(m map[string]any, key, ns, path string) (*Node, error) {
	inner, ok := m[key]
	if !ok {
		return nil, &SchemaError{Path: path, Msg: fmt.Sprintf("%v without %q", m["type"], key)}
	}
	return p.node(inner, ns, path)
}

// annotate sets n.Logical if the logical type is known, on its base type,
// and (decimal) has valid parameters; otherwise it is ignored.
func annotate(n *Node, m map[string]any) {
	name, _ := m["logicalType"].(string)
	lt, ok := logicalNames[name]
	if !ok {
		return
	}
	base := n.Kind
	if base == Fixed {
		base = Bytes
	}
	if baseOf[lt] != base || (n.Kind == Fixed && lt != Decimal) {
		return
	}
	if lt == Decimal {
		prec, scale, valid := decimalParams(m)
		if !valid {
			return
		}
		n.Precision, n.Scale = prec, scale
	}
	n.Logical = lt
}

func decimalParams(m map[string]any) (precision, scale int, valid bool) {
	pr, ok := jsonInt(m["precision"])
	if !ok || pr < 1 {
		return 0, 0, false
	}
	var sc int64
	if raw, present := m["scale"]; present {
		if sc, ok = jsonInt(raw); !ok {
			return 0, 0, false
		}
	}
	return int(pr), int(sc), sc >= 0 && sc <= pr
}

func jsonInt(v any) (int64, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := num.Int64()
	return i, err == nil
}

func (p *parser) union(branches []any, ns, path string) (*Node, error) {
	n := &Node{Kind: Union}
	for _, b := range branches {
		if _, nested := b.([]any); nested {
			return nil, &SchemaError{Path: path, Msg: "union directly inside a union"}
		}
		bn, err := p.node(b, ns, path)
		if err != nil {
			return nil, err
		}
		n.Branches = append(n.Branches, bn)
	}
	if len(n.Branches) == 0 {
		return nil, &SchemaError{Path: path, Msg: "empty union"}
	}
	return n, nil
}

func (p *parser) record(m map[string]any, ns, path string) (*Node, error) {
	full, inner, err := fullName(m, ns, path)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: Record, Name: full}
	if err := p.define(full, n, path); err != nil {
		return nil, err
	}
	raw, ok := m["fields"].([]any)
	if !ok {
		return nil, &SchemaError{Path: path, Msg: fmt.Sprintf("record %s without fields", full)}
	}
	fields := make([]Field, 0, len(raw))
	for _, r := range raw {
		f, err := p.field(r, full, inner, path)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	n.Fields = fields
	return n, nil
}

// field parses one field of record full; ns is the namespace inside it.
func (p *parser) field(r any, full, ns, path string) (Field, error) {
	fm, ok := r.(map[string]any)
	if !ok {
		return Field{}, &SchemaError{Path: path, Msg: fmt.Sprintf("record %s: field is not an object", full)}
	}
	name, _ := fm["name"].(string)
	if name == "" {
		return Field{}, &SchemaError{Path: path, Msg: fmt.Sprintf(`record %s: invalid field name ""`, full)}
	}
	fpath := join(path, name)
	t, present := fm["type"]
	if !present {
		return Field{}, &SchemaError{Path: fpath, Msg: "field without type"}
	}
	ft, err := p.node(t, ns, fpath)
	if err != nil {
		return Field{}, err
	}
	doc, _ := fm["doc"].(string)
	return Field{Name: name, Doc: doc, Type: ft}, nil
}

func (p *parser) enum(m map[string]any, ns, path string) (*Node, error) {
	full, _, err := fullName(m, ns, path)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: Enum, Name: full}
	raw, _ := m["symbols"].([]any)
	for _, s := range raw {
		if str, ok := s.(string); ok {
			n.Symbols = append(n.Symbols, str)
		}
	}
	return n, p.define(full, n, path)
}

func (p *parser) fixed(m map[string]any, ns, path string) (*Node, error) {
	full, _, err := fullName(m, ns, path)
	if err != nil {
		return nil, err
	}
	size, ok := jsonInt(m["size"])
	if !ok || size < 0 {
		return nil, &SchemaError{Path: path, Msg: fmt.Sprintf("fixed %s without a valid size", full)}
	}
	n := &Node{Kind: Fixed, Name: full, Size: int(size)}
	annotate(n, m)
	return n, p.define(full, n, path)
}

func (p *parser) define(full string, n *Node, path string) error {
	if _, dup := p.named[full]; dup {
		return &SchemaError{Path: path, Msg: fmt.Sprintf("type %s defined twice", full)}
	}
	p.named[full] = n
	return nil
}

// reference resolves a named type: first in the enclosing namespace, then
// as a full name.
func (p *parser) reference(name, ns, path string) (*Node, error) {
	candidates := []string{name}
	if ns != "" && !strings.Contains(name, ".") {
		candidates = []string{ns + "." + name, name}
	}
	for _, c := range candidates {
		n, ok := p.named[c]
		if !ok {
			continue
		}
		if n.Kind == Record && n.Fields == nil {
			return nil, &SchemaError{Path: path, Msg: fmt.Sprintf("recursive type %s cannot be written as columns", c)}
		}
		return n, nil
	}
	return nil, &SchemaError{Path: path, Msg: fmt.Sprintf("unknown type %q", name)}
}

// fullName applies the Avro namespace rules; inner is the namespace for
// names used inside the type.
func fullName(m map[string]any, ns, path string) (full, inner string, err error) {
	name, _ := m["name"].(string)
	if name == "" {
		return "", "", &SchemaError{Path: path, Msg: fmt.Sprintf("%v without name", m["type"])}
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name, name[:i], nil
	}
	if explicit, ok := m["namespace"].(string); ok {
		ns = explicit
	}
	if ns == "" {
		return name, "", nil
	}
	return ns + "." + name, ns, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
