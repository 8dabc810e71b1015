package transform

import (
	"errors"
	"sync"

	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
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
// whole: the one op makes the whole output datum, which is not a record of
// fields made op by op (ExtractField): a following rewrite's field indexes
// do not index these ops, so no rewrite is composed after it.
// pieces: the plan as stream runs it, set by prepare when the plan takes
// the input fields in their order.
type rewrite struct {
	out      *schema.Schema
	ops      []fieldOp
	identity bool
	whole    bool
	pieces   []piece
	inOrder  bool
}

// piece is a step of an in-order plan: the input fields from where the
// previous piece ended up to keepFrom are checked and dropped, those from
// keepFrom up to end are checked and kept, as one span; the span is copied
// as it is (conv nil) or converted. A piece that adds a field (from < 0)
// scans nothing: keepFrom = end = where the previous piece ended.
type piece struct {
	keepFrom, end int
	conv          func(dst, span []byte, r *Record) ([]byte, error)
}

// prepare compiles the ops of an in-order plan (each input field taken at
// most once, in order, as every plan but ValueToKey's and renamed
// reorders does) into pieces, joining fields copied one after the other
// into one piece: one scan call and one copy for a run of fields.
func (w *rewrite) prepare() *rewrite {
	w.inOrder, w.pieces = true, nil
	next := 0
	for _, op := range w.ops {
		switch {
		case op.from < 0:
			w.pieces = append(w.pieces, piece{keepFrom: next, end: next, conv: op.conv})
		case op.from < next:
			w.inOrder, w.pieces = false, nil
			return w
		case op.conv == nil && len(w.pieces) > 0 && w.pieces[len(w.pieces)-1].conv == nil && op.from == next:
			w.pieces[len(w.pieces)-1].end = op.from + 1 // the field after the last piece's: one span
			next = op.from + 1
		default:
			w.pieces = append(w.pieces, piece{keepFrom: op.from, end: op.from + 1, conv: op.conv})
			next = op.from + 1
		}
	}
	return w
}

// spanPool holds the field-span slices of rewrites: a slice per record
// was most of a chain's cost (allocation and clearing).
var spanPool = sync.Pool{New: func() any { return new([][]byte) }}

// apply rewrites a value of the plan's input schema.
func (w *rewrite) apply(v Value, r *Record) (Value, error) {
	if w.identity {
		// Every rewrite checks its input as Schema.Validate does (FieldSpans
		// below), so that the sink need not scan a datum twice (Validates).
		if err := v.Schema.Validate(v.Bytes); err != nil {
			return Value{}, err
		}
		return Value{Schema: w.out, Bytes: v.Bytes}, nil
	}
	if w.inOrder {
		return w.stream(v, r)
	}
	sp := spanPool.Get().(*[][]byte)
	defer spanPool.Put(sp)
	spans, err := schema.FieldSpans(v.Schema, v.Bytes, (*sp)[:0])
	*sp = spans[:0]
	if err != nil {
		return Value{}, err
	}
	out := r.buffer(len(v.Bytes) + 32)
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
	r.keep(out)
	return Value{Schema: w.out, Bytes: out}, nil
}

// stream is apply for an in-order plan: each field is scanned when the
// plan reaches it, so no spans are kept (their slice and its write
// barriers were most of a chain's cost). The fields after the last one
// taken are scanned too: the whole datum is checked, as Validate checks
// it (schema.ScanFields counts the depth as Validate does).
func (w *rewrite) stream(v Value, r *Record) (Value, error) {
	tree, err := v.Schema.Tree()
	if err != nil {
		return Value{}, err
	}
	if tree.Kind != avsc.Record {
		return Value{}, errNotRecord(v.Schema)
	}
	b, next := v.Bytes, 0
	out := r.buffer(len(v.Bytes) + 32)
	for _, p := range w.pieces {
		var span []byte
		if p.end > next {
			if b, err = schema.ScanFields(tree, next, p.keepFrom, b); err != nil {
				return Value{}, withID(err, v.Schema)
			}
			kept := b
			if b, err = schema.ScanFields(tree, p.keepFrom, p.end, b); err != nil {
				return Value{}, withID(err, v.Schema)
			}
			span, next = kept[:len(kept)-len(b)], p.end
		}
		if p.conv == nil {
			out = append(out, span...)
		} else if out, err = p.conv(out, span, r); err != nil {
			return Value{}, err
		}
	}
	if b, err = schema.ScanFields(tree, next, len(tree.Fields), b); err != nil {
		return Value{}, withID(err, v.Schema)
	}
	if len(b) != 0 {
		return Value{}, &schema.DatumError{SchemaID: v.Schema.ID, Len: len(v.Bytes), Trailing: len(b)}
	}
	r.keep(out)
	return Value{Schema: w.out, Bytes: out}, nil
}

func withID(err error, s *schema.Schema) error {
	var de *schema.DatumError
	if errors.As(err, &de) {
		de.SchemaID = s.ID
	}
	return err
}

// valueRewriter is a transform of the value (or key) made of one rewrite
// per input schema. Null values pass unchanged, as Connect's transforms
// leave tombstones alone.
type valueRewriter struct {
	key   bool // $Key: operate on the key
	plans planCache[*rewrite]
	// json is the transform's schemaless branch, for JSON values without
	// a schema (nil: they are refused); jsonRun is it as a run of one.
	json    jsonEdit
	jsonRun []jsonEdit
}

// withJSON gives t the schemaless branch e.
func (t *valueRewriter) withJSON(e jsonEdit) *valueRewriter {
	t.json, t.jsonRun = e, []jsonEdit{e}
	return t
}

// recordSide is the key or the value a $Key / $Value transform works on.
// ok is false when there is nothing to do: a null passes unchanged (err
// nil), a schemaless one is refused (errSchemaless) by the transforms that
// need an Avro record.
func recordSide(r *Record, key bool) (v *Value, ok bool, err error) {
	v = &r.Value
	if key {
		v = &r.Key
	}
	switch {
	case v.IsNull():
		return v, false, nil
	case v.Schema == nil:
		return v, false, errSchemaless
	}
	return v, true, nil
}

func newValueRewriter(key bool, compile func(*schema.Schema) (*rewrite, error)) *valueRewriter {
	return &valueRewriter{key: key, plans: planCache[*rewrite]{compile: func(s *schema.Schema) (*rewrite, error) {
		w, err := compile(s)
		if err != nil {
			return nil, err
		}
		return w.prepare(), nil
	}}}
}

func (t *valueRewriter) apply(r *Record) (bool, error) {
	v, ok, err := recordSide(r, t.key)
	if !ok {
		if errors.Is(err, errSchemaless) && t.json != nil {
			err = applyJSON(v, t.jsonRun, r)
		}
		return err == nil, err
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
