package transform

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// insertHeader is InsertHeader: a header with a literal value, added.
// The value is written as the literal's UTF-8 bytes (what Connect's
// SimpleHeaderConverter writes for a string).
type insertHeader struct {
	name  string
	value []byte
}

func newInsertHeader(_ bool, p props) (transformer, error) {
	t := &insertHeader{name: p.get("header"), value: []byte(p.get("value.literal"))}
	if t.name == "" {
		p.fail("header", "is required")
	}
	if _, ok := p.m["value.literal"]; !ok {
		p.fail("value.literal", "is required")
	}
	return t, p.err()
}

func (t *insertHeader) apply(r *Record) (bool, error) {
	r.Headers = append(slices.Clip(r.Headers), kgo.RecordHeader{Key: t.name, Value: t.value})
	return true, nil
}

// dropHeaders is DropHeaders: every header with one of the names, removed.
type dropHeaders struct{ names []string }

func newDropHeaders(_ bool, p props) (transformer, error) {
	return &dropHeaders{names: p.required("headers")}, p.err()
}

func (t *dropHeaders) apply(r *Record) (bool, error) {
	if !slices.ContainsFunc(r.Headers, func(h kgo.RecordHeader) bool { return slices.Contains(t.names, h.Key) }) {
		return true, nil
	}
	kept := make([]kgo.RecordHeader, 0, len(r.Headers))
	for _, h := range r.Headers {
		if !slices.Contains(t.names, h.Key) {
			kept = append(kept, h)
		}
	}
	r.Headers = kept
	return true, nil
}

// headerFrom is HeaderFrom: value fields copied (or moved) into headers,
// their values written as SimpleHeaderConverter writes a primitive (its
// string form; bytes as they are).
type headerFrom struct {
	fields, headers []string
	move            bool
	plans           planCache[*headerPlan]
	key             bool
}

type headerPlan struct {
	idx   []int
	types []fieldType
	value *rewrite // the value without the moved fields; nil: unchanged
}

func newHeaderFrom(key bool, p props) (transformer, error) {
	t := &headerFrom{fields: p.required("fields"), headers: p.required("headers"), key: key}
	switch op := p.get("operation"); op {
	case "move":
		t.move = true
	case "copy":
	default:
		p.fail("operation", fmt.Sprintf("%q is not move or copy", op))
	}
	if len(t.fields) != len(t.headers) {
		p.fail("headers", "must name as many headers as fields")
	}
	t.plans.compile = t.compile
	return t, p.err()
}

func (t *headerFrom) compile(s *schema.Schema) (*headerPlan, error) {
	hp := &headerPlan{}
	for _, f := range t.fields {
		i, ft, err := fieldIndex(s, f)
		if err != nil {
			return nil, err
		}
		if !isPrimitive(ft.n.Kind) {
			return nil, fmt.Errorf("field %q is a %s: hdfs-sink writes only primitives into headers", f, ft.n.Kind)
		}
		hp.idx, hp.types = append(hp.idx, i), append(hp.types, ft)
	}
	if t.move {
		rf := &replaceField{exclude: t.fields}
		w, err := rf.compile(s)
		if err != nil {
			return nil, err
		}
		hp.value = w
	}
	return hp, nil
}

func (t *headerFrom) apply(r *Record) (bool, error) {
	v, ok, err := recordSide(r, t.key)
	if !ok {
		if errors.Is(err, errSchemaless) {
			err = t.applyJSON(r, v)
		}
		return err == nil, err
	}
	hp, err := t.plans.get(v.Schema)
	if err != nil {
		return false, err
	}
	spans, err := schema.FieldSpans(v.Schema, v.Bytes, nil)
	if err != nil {
		return false, err
	}
	headers := slices.Clip(r.Headers)
	for j, i := range hp.idx {
		x, err := readPrim(hp.types[j], spans[i])
		if err != nil {
			return false, err
		}
		var b []byte
		if x != nil {
			b = []byte(javaString(x, hp.types[j].n.Kind))
		}
		headers = append(headers, kgo.RecordHeader{Key: t.headers[j], Value: b})
	}
	r.Headers = headers
	if hp.value != nil {
		if *v, err = hp.value.apply(*v, r); err != nil {
			return false, err
		}
	}
	return true, nil
}

func (t *headerFrom) outSchema(s *schema.Schema) (*schema.Schema, error) {
	hp, err := t.plans.get(s)
	if err != nil || hp.value == nil {
		return s, err
	}
	return hp.value.out, nil
}

func (t *headerFrom) onKey() bool { return t.key }
