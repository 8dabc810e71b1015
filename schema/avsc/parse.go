package avsc

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Read parses schema JSON into the graph, reading it as goavro, which
// decodes the data, does: any type may be the top level, a schema object
// whose "type" is itself a schema ({"type":{"type":"int"}}) stands for that
// schema, a recursive record is a cycle, a union directly inside a union is
// a branch, and a name defined twice means the later type from there on.
// It fails with a *SchemaError only where no graph can be built (not JSON,
// an unknown type, a field without a type).
//
// mapErr says whether the output formats and Hive can map the schema: nil,
// or the *SchemaError of the first thing they cannot (the top level is not
// a record, a record contains itself, what Read takes in goavro's stead: a
// union directly inside a union, a name defined twice, a fixed without a
// valid size, ...). Reading a schema once thus serves both kinds of
// consumer.
func Read(text string) (root *Node, mapErr, err error) {
	p, root, err := read(text, false)
	return root, p.problem, err
}

// ParseStrict reads the schema JSON as Read does, but only what the output
// formats and Hive can map (mapErr is the error), and as Java Avro must
// read it too (Hive reads the table's Avro schema with it): a schema
// object's "type" must be a type name, as the Avro specification says.
func ParseStrict(text string) (*Node, error) { return mappable(read(text, true)) }

// mappable returns root, or the first problem the parser met: a noted one
// precedes the error that stopped the parser, if any.
func mappable(p *parser, root *Node, err error) (*Node, error) {
	switch {
	case p.problem != nil:
		return nil, p.problem
	case err != nil:
		return nil, err
	}
	return root, nil
}

func read(text string, strict bool) (*parser, *Node, error) {
	p := &parser{named: map[string]*Node{}, open: map[*Node]bool{}, strict: strict}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // keep long defaults exact
	var root any
	if err := dec.Decode(&root); err != nil {
		return p, nil, &SchemaError{Msg: "not JSON: " + err.Error()}
	}
	if !recordObject(root, strict) {
		p.note(topLevelError())
	}
	n, err := p.node(root, "", "")
	if err != nil {
		return p, nil, err
	}
	if n.Kind != Record { // {"type":{...}} wrapping a non-record
		p.note(topLevelError())
	}
	setWidths(n)
	return p, n, nil
}

func topLevelError() *SchemaError { return &SchemaError{Msg: "top level must be a record"} }

// recordObject tells, before parsing, whether the top level can be a
// record, so that the problem noted is the real one rather than one inside
// it. Only the lenient form may wrap the record: {"type":{"type":"record"}}.
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

// parser builds the graph. What stops it is an error; what the formats or
// Hive cannot map is noted (the first one is kept) and parsing goes on, so
// the graph is complete for every other consumer.
type parser struct {
	// named holds every defined named type.
	named map[string]*Node
	// open holds the records whose fields are being parsed: a reference
	// to one is recursion.
	open map[*Node]bool
	// strict notes {"type": <schema>} (see ParseStrict).
	strict bool
	// problem is the first thing noted, nil if none.
	problem error
}

func (p *parser) note(e *SchemaError) {
	if p.problem == nil {
		p.problem = e
	}
}

var primitives = map[string]Kind{
	"null": Null, "boolean": Boolean, "int": Int, "long": Long,
	"float": Float, "double": Double, "bytes": Bytes, "string": String,
}

func isPrimitiveName(v any) bool {
	name, ok := v.(string)
	_, prim := primitives[name]
	return ok && prim
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
		if !nested {
			return nil, &SchemaError{Path: path, Msg: `schema object without "type"`}
		}
		if p.strict {
			p.note(&SchemaError{Path: path, Msg: `"type" must be a string in a schema object`})
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

// annotate records the logical type attributes of m on n as declared, and
// sets n.Logical if the logical type is known, on its base type, and
// (decimal) has valid parameters; otherwise Logical ignores it.
func annotate(n *Node, m map[string]any) {
	declare(n, m)
	lt, ok := logicalNames[n.Declared.LogicalType]
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

// declare sets n.Declared from the attributes in m.
func declare(n *Node, m map[string]any) {
	lt, _ := m["logicalType"].(string)
	n.Declared = Declared{LogicalType: lt}
	if lt == "decimal" {
		n.Declared.Precision, n.Declared.Scale = intAttr(m, "precision"), intAttr(m, "scale")
	}
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

// intAttr reads an integer attribute as it is declared: 0 if absent or not
// an integer.
func intAttr(m map[string]any, key string) int {
	num, ok := m[key].(json.Number)
	if !ok {
		return 0
	}
	i, _ := strconv.Atoi(num.String())
	return i
}

func (p *parser) union(branches []any, ns, path string) (*Node, error) {
	n := &Node{Kind: Union}
	for _, b := range branches {
		if _, nested := b.([]any); nested {
			p.note(&SchemaError{Path: path, Msg: "union directly inside a union"})
		}
		bn, err := p.node(b, ns, path)
		if err != nil {
			return nil, err
		}
		n.Branches = append(n.Branches, bn)
	}
	if len(n.Branches) == 0 {
		p.note(&SchemaError{Path: path, Msg: "empty union"})
	}
	return n, nil
}

func (p *parser) record(m map[string]any, ns, path string) (*Node, error) {
	full, inner, err := fullName(m, ns, path)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: Record, Name: full, Aliases: stringList(m["aliases"])}
	p.define(full, n, path)
	raw, ok := m["fields"].([]any)
	if !ok {
		p.note(&SchemaError{Path: path, Msg: fmt.Sprintf("record %s without fields", full)})
	}
	p.open[n] = true
	defer delete(p.open, n)
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
		p.note(&SchemaError{Path: path, Msg: fmt.Sprintf(`record %s: invalid field name ""`, full)})
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
	if fm["logicalType"] != nil && isPrimitiveName(t) {
		declare(ft, fm) // goavro applies a field's logicalType (Java ignores it)
	}
	doc, _ := fm["doc"].(string)
	def, hasDef := fm["default"]
	return Field{Name: name, Aliases: stringList(fm["aliases"]), Doc: doc, Type: ft,
		Default: def, HasDefault: hasDef}, nil
}

func (p *parser) enum(m map[string]any, ns, path string) (*Node, error) {
	full, _, err := fullName(m, ns, path)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: Enum, Name: full, Aliases: stringList(m["aliases"]), Symbols: stringList(m["symbols"])}
	if d, ok := m["default"].(string); ok {
		n.EnumDefault = &d
	}
	p.define(full, n, path)
	return n, nil
}

func (p *parser) fixed(m map[string]any, ns, path string) (*Node, error) {
	full, _, err := fullName(m, ns, path)
	if err != nil {
		return nil, err
	}
	if size, ok := jsonInt(m["size"]); !ok || size < 0 {
		p.note(&SchemaError{Path: path, Msg: fmt.Sprintf("fixed %s without a valid size", full)})
	}
	n := &Node{Kind: Fixed, Name: full, Aliases: stringList(m["aliases"]), Size: intAttr(m, "size")}
	annotate(n, m)
	p.define(full, n, path)
	return n, nil
}

// define makes full name n from here on.
func (p *parser) define(full string, n *Node, path string) {
	if _, dup := p.named[full]; dup {
		p.note(&SchemaError{Path: path, Msg: fmt.Sprintf("type %s defined twice", full)})
	}
	p.named[full] = n
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
		if p.open[n] {
			p.note(&SchemaError{Path: path, Msg: fmt.Sprintf("recursive type %s cannot be written as columns", c)})
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

// stringList keeps the strings of a JSON array (aliases, symbols).
func stringList(v any) []string {
	raw, _ := v.([]any)
	var out []string
	for _, a := range raw {
		if s, ok := a.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
