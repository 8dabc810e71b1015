package transform

import (
	"encoding/binary"
	"fmt"

	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// descent is one step into a nested record: the record field index takes
// from the record node's datum. nullable: the datum at this step is a
// [null, record] union whose branch nullAt is null.
type descent struct {
	node     *avsc.Node
	index    int
	nullable bool
	nullAt   int64
}

// nestedPlan is where a nested path's field lies: the descents below the
// top-level field, and how to write a null when a nullable record on the
// way is null (the leaf's null branch; nil: the path has no nullable step).
type nestedPlan struct {
	steps    []descent
	leafNull []byte
}

// compileNested plans ExtractField of a nested path: the top-level field
// is taken as a span, and the plan descends into it record by record. A
// nullable record on the way makes the extracted value null when it is
// null, as Connect's path lookup does; the leaf must then be nullable too
// (a null of a type that has none could not be written).
func (t *extractField) compileNested(s *schema.Schema) (*rewrite, error) {
	tree, err := s.Tree()
	if err != nil {
		return nil, err
	}
	rj, err := readRecordJSON(s)
	if err != nil {
		return nil, err
	}
	top, fieldsJSON := -1, rj.fields
	var plan nestedPlan
	node, typJSON := tree, any(nil)
	for depth, name := range t.path {
		k := fieldNamed(node, name)
		if k < 0 {
			return nil, fmt.Errorf("ExtractField: schema %d has no field %q (path %q)", s.ID, name, t.field)
		}
		typJSON = fieldsJSON[k]["type"]
		if depth == 0 {
			top = k
		} else {
			plan.steps[len(plan.steps)-1].index = k
		}
		if depth == len(t.path)-1 {
			return t.finishNested(s, top, &plan, node.Fields[k].Type, typJSON)
		}
		d, rec, recJSON, err := t.descend(s, name, node.Fields[k].Type, typJSON)
		if err != nil {
			return nil, err
		}
		plan.steps = append(plan.steps, d)
		node, fieldsJSON = rec, recJSON
	}
	return nil, fmt.Errorf("ExtractField: empty field path")
}

// descend checks that the field name on the path is a record (or a
// nullable one) and returns the step into it, with the record's node and
// its fields' JSON.
func (t *extractField) descend(s *schema.Schema, name string, typ *avsc.Node, typJSON any) (descent, *avsc.Node, []map[string]any, error) {
	d := descent{node: typ}
	if nn, rec, ok := nullableOf(typ); ok {
		d = descent{node: rec, nullable: true, nullAt: int64(nn)}
		typ = rec
		arr, _ := typJSON.([]any)
		if len(arr) == 2 {
			typJSON = arr[1-nn]
		}
	}
	if typ.Kind != avsc.Record {
		return d, nil, nil, fmt.Errorf("ExtractField: field %q of schema %d is an Avro %s, not a record: path %q cannot go through it", name, s.ID, typ.Kind, t.field)
	}
	m, ok := typJSON.(map[string]any)
	raw, _ := m["fields"].([]any)
	if !ok || len(raw) != len(typ.Fields) {
		return d, nil, nil, fmt.Errorf("ExtractField: field %q of schema %d names a record defined elsewhere: hdfs-sink follows paths through records written in place", name, s.ID)
	}
	fields := make([]map[string]any, len(raw))
	for i, f := range raw {
		fields[i], _ = f.(map[string]any)
	}
	return d, typ, fields, nil
}

// finishNested sets the leaf's schema and its null encoding.
func (t *extractField) finishNested(s *schema.Schema, top int, plan *nestedPlan, leaf *avsc.Node, leafJSON any) (*rewrite, error) {
	out, err := t.outSchema(s, leafJSON)
	if err != nil {
		return nil, err
	}
	for _, d := range plan.steps {
		if !d.nullable {
			continue
		}
		nn, _, ok := nullableOf(leaf)
		if !ok {
			return nil, fmt.Errorf("ExtractField: path %q of schema %d passes a nullable record but its field is not nullable: a record whose nested record is null has no value to write", t.field, s.ID)
		}
		plan.leafNull = binary.AppendVarint(nil, int64(nn))
		break
	}
	return &rewrite{out: out, ops: []fieldOp{{from: top, conv: plan.extract}}, whole: true}, nil
}

// extract appends the nested field's encoding found in span, the
// top-level field's encoding (already checked by the rewrite's scan).
func (p *nestedPlan) extract(dst, span []byte, _ *Record) ([]byte, error) {
	b := span
	for _, d := range p.steps {
		if d.nullable {
			branch, n := binary.Varint(b)
			if n <= 0 {
				return dst, fmt.Errorf("ExtractField: a union index does not decode")
			}
			if branch == d.nullAt {
				return append(dst, p.leafNull...), nil
			}
			b = b[n:]
		}
		rest, err := schema.ScanFields(d.node, 0, d.index, b)
		if err != nil {
			return dst, err
		}
		after, err := schema.ScanFields(d.node, d.index, d.index+1, rest)
		if err != nil {
			return dst, err
		}
		b = rest[:len(rest)-len(after)]
	}
	return append(dst, b...), nil
}

// nullableOf tells a [null, T] (or [T, null]) union: the null branch's
// index and T.
func nullableOf(n *avsc.Node) (int, *avsc.Node, bool) {
	if n.Kind != avsc.Union || len(n.Branches) != 2 {
		return 0, nil, false
	}
	for i, b := range n.Branches {
		if b.Kind == avsc.Null {
			return i, n.Branches[1-i], true
		}
	}
	return 0, nil, false
}

func fieldNamed(rec *avsc.Node, name string) int {
	for i, f := range rec.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}
