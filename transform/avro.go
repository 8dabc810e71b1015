package transform

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// recordJSON is a record schema's JSON, for building an output schema:
// the top-level attributes and the fields in order. Numbers stay exact.
type recordJSON struct {
	top    map[string]any
	fields []map[string]any
}

func readRecordJSON(s *schema.Schema) (*recordJSON, error) {
	v, err := decodeJSON(s.Text)
	if err != nil {
		return nil, err
	}
	top, ok := v.(map[string]any)
	if !ok || top["type"] != "record" {
		return nil, errNotRecord(s)
	}
	raw, _ := top["fields"].([]any)
	r := &recordJSON{top: top}
	for _, f := range raw {
		m, ok := f.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("schema %d: a field is not a JSON object", s.ID)
		}
		r.fields = append(r.fields, m)
	}
	return r, nil
}

func decodeJSON(text string) (any, error) {
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func errNotRecord(s *schema.Schema) error {
	return fmt.Errorf("only records (Connect structs) are supported; schema %d is not one", s.ID)
}

// build is the schema the JSON describes, under id (the input's).
func (r *recordJSON) build(id int32) (*schema.Schema, error) {
	fields := make([]any, len(r.fields))
	for i, f := range r.fields {
		fields[i] = f
	}
	r.top["fields"] = fields
	text, err := json.Marshal(r.top)
	if err != nil {
		return nil, err
	}
	return schema.New(id, string(text))
}

// optional is t as Connect's AvroData writes an optional schema: a union
// with null first, null by default.
func optionalField(name string, t any, optional bool) map[string]any {
	if !optional {
		return map[string]any{"name": name, "type": t}
	}
	return map[string]any{"name": name, "type": []any{"null", t}, "default": nil}
}

// planCache holds one compiled plan per input schema.
type planCache[P any] struct {
	// last is the entry found last: nearly every record has the schema of
	// the record before it, and comparing a pointer costs less than the
	// map's hashing (a tenth of a chain's cost on 100 B records).
	last    atomic.Pointer[planEntry[P]]
	m       sync.Map // *schema.Schema → *planEntry[P]
	compile func(*schema.Schema) (P, error)
}

type planEntry[P any] struct {
	s    *schema.Schema
	plan P
	err  error
}

func (c *planCache[P]) get(s *schema.Schema) (P, error) {
	if e := c.last.Load(); e != nil && e.s == s {
		return e.plan, e.err
	}
	v, ok := c.m.Load(s)
	if !ok {
		p, err := c.compile(s)
		v, _ = c.m.LoadOrStore(s, &planEntry[P]{s: s, plan: p, err: err})
	}
	e := v.(*planEntry[P])
	c.last.Store(e)
	return e.plan, e.err
}

// fieldType is what a converting transform needs of a top-level field: its
// primitive type, and whether it is Connect-optional (a union of null and
// that type).
type fieldType struct {
	n        *avsc.Node // the non-null type
	optional bool
	nullIdx  int64 // union branch of null
	valIdx   int64 // union branch of the value
}

func fieldTypeOf(t *avsc.Node) (fieldType, bool) {
	if t.Kind != avsc.Union {
		return fieldType{n: t}, true
	}
	if len(t.Branches) != 2 {
		return fieldType{}, false
	}
	for i, b := range t.Branches {
		if b.Kind == avsc.Null {
			o := 1 - i
			return fieldType{n: t.Branches[o], optional: true, nullIdx: int64(i), valIdx: int64(o)}, true
		}
	}
	return fieldType{}, false
}

// readPrim decodes one primitive of ft from span: int64 for int and long
// (logical types included), float64, bool, string, []byte; nil for null.
func readPrim(ft fieldType, span []byte) (any, error) {
	if ft.optional {
		idx, n := binary.Varint(span)
		if n <= 0 {
			return nil, fmt.Errorf("bad union index")
		}
		if idx == ft.nullIdx {
			return nil, nil
		}
		span = span[n:]
	}
	switch ft.n.Kind {
	case avsc.Int, avsc.Long:
		v, n := binary.Varint(span)
		if n <= 0 {
			return nil, fmt.Errorf("bad varint")
		}
		return v, nil
	case avsc.Float:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(span))), nil
	case avsc.Double:
		return math.Float64frombits(binary.LittleEndian.Uint64(span)), nil
	case avsc.Boolean:
		return span[0] == 1, nil
	case avsc.String:
		_, n := binary.Varint(span)
		return string(span[n:]), nil
	case avsc.Bytes:
		_, n := binary.Varint(span)
		return span[n:], nil
	}
	return nil, fmt.Errorf("type %s is not a primitive", ft.n.Kind)
}

// appendPrim encodes v (a readPrim value, nil for null) as ft.
func appendPrim(dst []byte, ft fieldType, v any) ([]byte, error) {
	if ft.optional {
		if v == nil {
			return binary.AppendVarint(dst, ft.nullIdx), nil
		}
		dst = binary.AppendVarint(dst, ft.valIdx)
	} else if v == nil {
		return nil, fmt.Errorf("null for a required %s", ft.n.Kind)
	}
	switch ft.n.Kind {
	case avsc.Int, avsc.Long:
		return binary.AppendVarint(dst, v.(int64)), nil
	case avsc.Float:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v.(float64)))), nil
	case avsc.Double:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.(float64))), nil
	case avsc.Boolean:
		if v.(bool) {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case avsc.String:
		s := v.(string)
		return append(binary.AppendVarint(dst, int64(len(s))), s...), nil
	case avsc.Bytes:
		b := v.([]byte)
		return append(binary.AppendVarint(dst, int64(len(b))), b...), nil
	}
	return nil, fmt.Errorf("type %s is not a primitive", ft.n.Kind)
}

// isPrimitive: the types Cast, MaskField and TimestampConverter handle.
func isPrimitive(k avsc.Kind) bool {
	switch k {
	case avsc.Int, avsc.Long, avsc.Float, avsc.Double, avsc.Boolean, avsc.String, avsc.Bytes:
		return true
	}
	return false
}
