package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// This file holds a small Avro schema model. goavro keeps its parsed schema
// private, and both the compatibility decision (what is a material change)
// and projection (which field of the writer feeds which field of the
// reader) need to walk the schema tree.

// kind is an Avro type.
type kind uint8

const (
	kNull kind = iota
	kBoolean
	kInt
	kLong
	kFloat
	kDouble
	kBytes
	kString
	kRecord
	kEnum
	kFixed
	kArray
	kMap
	kUnion
)

var kindNames = [...]string{
	kNull: "null", kBoolean: "boolean", kInt: "int", kLong: "long", kFloat: "float",
	kDouble: "double", kBytes: "bytes", kString: "string", kRecord: "record",
	kEnum: "enum", kFixed: "fixed", kArray: "array", kMap: "map", kUnion: "union",
}

func (k kind) String() string { return kindNames[k] }

// primitiveKinds maps primitive type names to kinds.
var primitiveKinds = map[string]kind{
	"null": kNull, "boolean": kBoolean, "int": kInt, "long": kLong,
	"float": kFloat, "double": kDouble, "bytes": kBytes, "string": kString,
}

// node is one parsed Avro schema. Named types (record, enum, fixed) are
// shared by every reference to them, so a recursive schema is a cyclic graph.
type node struct {
	kind    kind
	name    string   // full name of a record, enum or fixed
	aliases []string // unqualified aliases of a named type
	// logical type attributes: they do not change the binary encoding but do
	// change the output column type, so they are part of the material form.
	logical          string
	precision, scale int

	fields      []*field // record
	symbols     []string // enum
	enumDefault *string  // enum default symbol, if any
	size        int      // fixed
	items       *node    // array items or map values
	branches    []*node  // union
}

// field is one record field.
type field struct {
	name    string
	aliases []string
	typ     *node
	def     any // JSON default decoded with UseNumber; meaningful if hasDef
	hasDef  bool
}

// short returns the unqualified part of a full name.
func short(full string) string {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[i+1:]
	}
	return full
}

// unionKey is the name goavro uses for n as a union member.
func (n *node) unionKey() string {
	switch n.kind {
	case kRecord, kEnum, kFixed:
		return n.name
	default:
		return n.kind.String()
	}
}

// parseAvsc parses Avro schema JSON. The text has already been accepted by
// goavro, so errors here are rare and mean our model is stricter than
// goavro's.
func parseAvsc(text string) (*node, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // keep long defaults exact
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("parse schema JSON: %w", err)
	}
	p := &avscParser{named: map[string]*node{}}
	return p.parse(v, "")
}

type avscParser struct {
	named map[string]*node
}

func (p *avscParser) parse(v any, ns string) (*node, error) {
	switch t := v.(type) {
	case string:
		return p.ref(t, ns)
	case []any:
		u := &node{kind: kUnion}
		for _, b := range t {
			n, err := p.parse(b, ns)
			if err != nil {
				return nil, err
			}
			u.branches = append(u.branches, n)
		}
		return u, nil
	case map[string]any:
		return p.object(t, ns)
	}
	return nil, fmt.Errorf("schema element %v is neither a name, an object nor a union", v)
}

// ref resolves a primitive or a previously defined named type.
func (p *avscParser) ref(name, ns string) (*node, error) {
	if k, ok := primitiveKinds[name]; ok {
		return &node{kind: k}, nil
	}
	if !strings.Contains(name, ".") && ns != "" {
		if n, ok := p.named[ns+"."+name]; ok {
			return n, nil
		}
	}
	if n, ok := p.named[name]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("unknown type %q", name)
}

func (p *avscParser) object(m map[string]any, ns string) (*node, error) {
	t, ok := m["type"].(string)
	if !ok {
		// {"type": {...}} or {"type": [...]}: a wrapped schema.
		return p.parse(m["type"], ns)
	}
	switch t {
	case "record", "error":
		return p.record(m, ns)
	case "enum":
		return p.enum(m, ns)
	case "fixed":
		n, _, err := p.define(m, ns, kFixed)
		if err != nil {
			return nil, err
		}
		n.size = intAttr(m, "size")
		setLogical(n, m)
		return n, nil
	case "array", "map":
		key, k := "items", kArray
		if t == "map" {
			key, k = "values", kMap
		}
		items, err := p.parse(m[key], ns)
		if err != nil {
			return nil, err
		}
		return &node{kind: k, items: items}, nil
	}
	n, err := p.ref(t, ns)
	if err != nil {
		return nil, err
	}
	if _, prim := primitiveKinds[t]; prim {
		setLogical(n, m)
	}
	return n, nil
}

// define registers a named type before its body is parsed, so that the
// body may refer to it.
func (p *avscParser) define(m map[string]any, ns string, k kind) (*node, string, error) {
	name, _ := m["name"].(string)
	if name == "" {
		return nil, "", fmt.Errorf("%s without a name", k)
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ns = name[:i]
	} else if explicit, ok := m["namespace"].(string); ok {
		ns = explicit
	}
	full := short(name)
	if ns != "" {
		full = ns + "." + full
	}
	n := &node{kind: k, name: full, aliases: shortAliases(m)}
	p.named[full] = n
	return n, ns, nil
}

func (p *avscParser) record(m map[string]any, ns string) (*node, error) {
	n, ns, err := p.define(m, ns, kRecord)
	if err != nil {
		return nil, err
	}
	raw, _ := m["fields"].([]any)
	for _, rf := range raw {
		fm, ok := rf.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("record %s: field %v is not an object", n.name, rf)
		}
		typ, err := p.parse(fm["type"], ns)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", n.name, err)
		}
		if t, ok := fm["type"].(string); ok && fm["logicalType"] != nil {
			if _, prim := primitiveKinds[t]; prim {
				// goavro applies a logicalType written on the field itself
				// (Java ignores it); follow the decoder our formats use.
				setLogical(typ, fm)
			}
		}
		name, _ := fm["name"].(string)
		def, hasDef := fm["default"]
		n.fields = append(n.fields, &field{name: name, aliases: shortAliases(fm), typ: typ, def: def, hasDef: hasDef})
	}
	return n, nil
}

func (p *avscParser) enum(m map[string]any, ns string) (*node, error) {
	n, _, err := p.define(m, ns, kEnum)
	if err != nil {
		return nil, err
	}
	syms, _ := m["symbols"].([]any)
	for _, s := range syms {
		str, _ := s.(string)
		n.symbols = append(n.symbols, str)
	}
	if d, ok := m["default"].(string); ok {
		n.enumDefault = &d
	}
	return n, nil
}

func shortAliases(m map[string]any) []string {
	raw, _ := m["aliases"].([]any)
	var out []string
	for _, a := range raw {
		if s, ok := a.(string); ok {
			out = append(out, short(s))
		}
	}
	return out
}

func setLogical(n *node, m map[string]any) {
	n.logical, _ = m["logicalType"].(string)
	if n.logical == "decimal" {
		n.precision, n.scale = intAttr(m, "precision"), intAttr(m, "scale")
	}
}

func intAttr(m map[string]any, key string) int {
	if num, ok := m[key].(json.Number); ok {
		i, _ := strconv.Atoi(num.String())
		return i
	}
	return 0
}

// form renders n in Parsing Canonical Form. With logical set, logical type
// attributes are kept (the "material form": two schemas with the same
// material form encode the same bytes and map to the same output types).
// Without it, they are dropped too (the "raw form" that projection decodes
// with, so decimals stay bytes and timestamps stay integers: exact, and no
// detour through time.Time or big.Rat).
func (n *node) form(logical bool) string {
	var b strings.Builder
	n.writeForm(&b, map[string]bool{}, logical)
	return b.String()
}

func (n *node) writeForm(b *strings.Builder, seen map[string]bool, logical bool) {
	switch n.kind {
	case kRecord, kEnum, kFixed:
		if seen[n.name] {
			b.WriteString(quote(n.name))
			return
		}
		seen[n.name] = true
		n.writeNamed(b, seen, logical)
	case kArray, kMap:
		key := "items"
		if n.kind == kMap {
			key = "values"
		}
		fmt.Fprintf(b, `{"type":%q,%q:`, n.kind.String(), key)
		n.items.writeForm(b, seen, logical)
		b.WriteByte('}')
	case kUnion:
		b.WriteByte('[')
		for i, br := range n.branches {
			if i > 0 {
				b.WriteByte(',')
			}
			br.writeForm(b, seen, logical)
		}
		b.WriteByte(']')
	default:
		if !logical || n.logical == "" {
			b.WriteString(quote(n.kind.String()))
			return
		}
		fmt.Fprintf(b, `{"type":%q`, n.kind.String())
		n.writeLogical(b)
		b.WriteByte('}')
	}
}

func (n *node) writeNamed(b *strings.Builder, seen map[string]bool, logical bool) {
	fmt.Fprintf(b, `{"name":%s,"type":%q`, quote(n.name), n.kind.String())
	switch n.kind {
	case kRecord:
		b.WriteString(`,"fields":[`)
		for i, f := range n.fields {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, `{"name":%s,"type":`, quote(f.name))
			f.typ.writeForm(b, seen, logical)
			b.WriteByte('}')
		}
		b.WriteByte(']')
	case kEnum:
		b.WriteString(`,"symbols":[`)
		for i, s := range n.symbols {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(s))
		}
		b.WriteByte(']')
	case kFixed:
		fmt.Fprintf(b, `,"size":%d`, n.size)
		if logical && n.logical != "" {
			n.writeLogical(b)
		}
	}
	b.WriteByte('}')
}

func (n *node) writeLogical(b *strings.Builder) {
	fmt.Fprintf(b, `,"logicalType":%s`, quote(n.logical))
	if n.logical == "decimal" {
		fmt.Fprintf(b, `,"precision":%d,"scale":%d`, n.precision, n.scale)
	}
}

func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
