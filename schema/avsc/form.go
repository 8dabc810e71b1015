package avsc

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Canonical renders n in Parsing Canonical Form (Avro specification): full
// names, only the attributes that shape the encoding, and every later
// occurrence of a named type as its name, so the text stands alone and a
// recursive type stays finite. Logical types are left out: goavro decodes
// with it to the underlying values, decimals as bytes and timestamps as
// integers, exactly and without a detour through time.Time or big.Rat.
func (n *Node) Canonical() string { return n.form(false) }

// CanonicalLogical is Canonical with the declared logical type attributes
// kept (logicalType, and precision and scale of a decimal; see Declared).
// Two schemas with the same CanonicalLogical encode every value in the
// same bytes and goavro decodes them to the same types.
func (n *Node) CanonicalLogical() string { return n.form(true) }

func (n *Node) form(logical bool) string {
	var b strings.Builder
	n.writeForm(&b, map[string]bool{}, logical)
	return b.String()
}

func (n *Node) writeForm(b *strings.Builder, seen map[string]bool, logical bool) {
	switch n.Kind {
	case Record, Enum, Fixed:
		if seen[n.Name] {
			b.WriteString(quote(n.Name))
			return
		}
		seen[n.Name] = true
		n.writeNamed(b, seen, logical)
	case Array:
		fmt.Fprintf(b, `{"type":%q,"items":`, n.Kind.String())
		n.Items.writeForm(b, seen, logical)
		b.WriteByte('}')
	case Map:
		fmt.Fprintf(b, `{"type":%q,"values":`, n.Kind.String())
		n.Values.writeForm(b, seen, logical)
		b.WriteByte('}')
	case Union:
		b.WriteByte('[')
		for i, br := range n.Branches {
			if i > 0 {
				b.WriteByte(',')
			}
			br.writeForm(b, seen, logical)
		}
		b.WriteByte(']')
	default:
		n.writePrimitive(b, logical)
	}
}

func (n *Node) writePrimitive(b *strings.Builder, logical bool) {
	if !logical || n.Declared.LogicalType == "" {
		b.WriteString(quote(n.Kind.String()))
		return
	}
	fmt.Fprintf(b, `{"type":%q`, n.Kind.String())
	n.writeLogical(b)
	b.WriteByte('}')
}

func (n *Node) writeNamed(b *strings.Builder, seen map[string]bool, logical bool) {
	fmt.Fprintf(b, `{"name":%s,"type":%q`, quote(n.Name), n.Kind.String())
	switch n.Kind {
	case Record:
		b.WriteString(`,"fields":[`)
		for i := range n.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, `{"name":%s,"type":`, quote(n.Fields[i].Name))
			n.Fields[i].Type.writeForm(b, seen, logical)
			b.WriteByte('}')
		}
		b.WriteByte(']')
	case Enum:
		b.WriteString(`,"symbols":[`)
		for i, s := range n.Symbols {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(s))
		}
		b.WriteByte(']')
	case Fixed:
		fmt.Fprintf(b, `,"size":%d`, n.Size)
		if logical && n.Declared.LogicalType != "" {
			n.writeLogical(b)
		}
	}
	b.WriteByte('}')
}

func (n *Node) writeLogical(b *strings.Builder) {
	d := n.Declared
	fmt.Fprintf(b, `,"logicalType":%s`, quote(d.LogicalType))
	if d.LogicalType == "decimal" {
		fmt.Fprintf(b, `,"precision":%d,"scale":%d`, d.Precision, d.Scale)
	}
}

func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
