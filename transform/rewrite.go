package transform

import (
	"sync"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// fieldOp makes one output field: a copy of input field from's encoding,
// or (conv set) an encoding computed from it (from < 0: from nothing).
type fieldOp struct {
	from int
	conv func(dst, span []byte, r *Record) ([]byte, error)
}

// rewrite is a compiled plan for one input schema: the output schema and
// how each output field is made from the input's top-level fields.
// identity: the datum is unchanged (only the schema differs, or nothing).
type rewrite struct {
	out      *schema.Schema
	ops      []fieldOp
	identity bool
}

// spanPool holds the field-span slices of rewrites: a slice per record
// was most of a chain's cost (allocation and clearing).
var spanPool = sync.Pool{New: func() any { return new([][]byte) }}

// apply rewrites a value of the plan's input schema.
func (w *rewrite) apply(v Value, r *Record) (Value, error) {
	if w.identity {
		return Value{Schema: w.out, Bytes: v.Bytes}, nil
	}
	sp := spanPool.Get().(*[][]byte)
	defer spanPool.Put(sp)
	spans, err := schema.FieldSpans(v.Schema, v.Bytes, (*sp)[:0])
	*sp = spans[:0]
	if err != nil {
		return Value{}, err
	}
	out := make([]byte, 0, len(v.Bytes)+32)
	for _, op := range w.ops {
		var span []byte
		if op.from >= 0 {
			span = spans[op.from]
		}
		if op.conv == nil {
			out = append(out, span...)
			continue
		}
		if out, err = op.conv(out, span, r); err != nil {
			return Value{}, err
		}
	}
	return Value{Schema: w.out, Bytes: out}, nil
}

// valueRewriter is a transform of the value (or key) made of one rewrite
// per input schema. Null values pass unchanged, as Connect's transforms
// leave tombstones alone.
type valueRewriter struct {
	key   bool // $Key: operate on the key
	plans planCache[*rewrite]
}

func newValueRewriter(key bool, compile func(*schema.Schema) (*rewrite, error)) *valueRewriter {
	return &valueRewriter{key: key, plans: planCache[*rewrite]{compile: compile}}
}

func (t *valueRewriter) apply(r *Record) (bool, error) {
	v := &r.Value
	if t.key {
		v = &r.Key
	}
	if v.IsNull() {
		return true, nil
	}
	if v.Schema == nil {
		return false, errSchemaless
	}
	w, err := t.plans.get(v.Schema)
	if err != nil {
		return false, err
	}
	nv, err := w.apply(*v, r)
	if err != nil {
		return false, err
	}
	*v = nv
	return true, nil
}

// outSchema is the schema a value of s has after the transform.
func (t *valueRewriter) outSchema(s *schema.Schema) (*schema.Schema, error) {
	w, err := t.plans.get(s)
	if err != nil {
		return nil, err
	}
	return w.out, nil
}

func (t *valueRewriter) onKey() bool { return t.key }
