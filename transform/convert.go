package transform

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// fieldConv converts the value of one top-level field: out is the new
// field type (nil: unchanged), conv maps a readPrim value (never nil:
// nulls stay null) to the output's.
type fieldConv struct {
	out  any // Avro type JSON of the non-null output type; nil: unchanged
	conv func(v any) (any, error)
	// constant, when set, is the output for every non-null value: the
	// value is then never decoded (MaskField).
	constant any
}

// convertFields compiles a rewrite that converts the named fields with
// what plan returns for each; the other fields are copied.
func convertFields(s *schema.Schema, names []string, plan func(name string, ft fieldType) (fieldConv, error)) (*rewrite, error) {
	rj, err := readRecordJSON(s)
	if err != nil {
		return nil, err
	}
	w := &rewrite{}
	for i := range rj.fields {
		w.ops = append(w.ops, fieldOp{from: i})
	}
	for _, name := range names {
		i, in, err := fieldIndex(s, name)
		if err != nil {
			return nil, err
		}
		if !isPrimitive(in.n.Kind) {
			return nil, fmt.Errorf("field %q of schema %d is a %s, not a primitive", name, s.ID, in.n.Kind)
		}
		fc, err := plan(name, in)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		out := in
		if fc.out != nil {
			rj.fields[i] = optionalField(name, fc.out, in.optional)
			n, err := nodeOf(fc.out)
			if err != nil {
				return nil, err
			}
			out = fieldType{n: n, optional: in.optional}
			if in.optional {
				out.nullIdx, out.valIdx = 0, 1
			}
		}
		if fc.constant != nil {
			w.ops[i].conv, err = constantConv(in, out, fc.constant)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", name, err)
			}
			continue
		}
		w.ops[i].conv = func(dst, span []byte, _ *Record) ([]byte, error) {
			v, err := readPrim(in, span)
			if err != nil {
				return nil, err
			}
			if v != nil {
				if v, err = fc.conv(v); err != nil {
					return nil, fmt.Errorf("field %q: %w", name, err)
				}
			}
			return appendPrim(dst, out, v)
		}
	}
	if w.out, err = rj.build(s.ID); err != nil {
		return nil, err
	}
	return w, nil
}

// constantConv writes the encoding of v (precomputed) for every non-null
// value of in, and copies nulls.
func constantConv(in, out fieldType, v any) (func(dst, span []byte, _ *Record) ([]byte, error), error) {
	enc, err := appendPrim(nil, out, v)
	if err != nil {
		return nil, err
	}
	return func(dst, span []byte, _ *Record) ([]byte, error) {
		if in.optional && len(span) > 0 && int64(span[0]>>1)^-int64(span[0]&1) == in.nullIdx {
			return append(dst, span...), nil // null (a one-byte union index): stays null
		}
		return append(dst, enc...), nil
	}, nil
}

// nodeOf is the model of a primitive Avro type given as JSON.
func nodeOf(t any) (*avsc.Node, error) {
	text, err := jsonText(t)
	if err != nil {
		return nil, err
	}
	n, _, err := avsc.Read(text)
	return n, err
}

// maskField is MaskField: the fields' values replaced by the type's empty
// value (0, false, "", empty bytes), or by replacement; nulls stay null.
type maskField struct {
	fields      []string
	replacement string
	hasRepl     bool
	// For schemaless values (prepareJSON): the fields' names as JSON
	// strings, and the replacement's text as each type it can mask (nil:
	// it cannot).
	keys                           [][]byte
	replText, replLong, replDouble []byte
}

func newMaskField(key bool, p props) (transformer, error) {
	t := &maskField{fields: p.required("fields"), replacement: p.get("replacement")}
	_, t.hasRepl = p.m["replacement"]
	t.prepareJSON()
	return newValueRewriter(key, func(s *schema.Schema) (*rewrite, error) {
		return convertFields(s, t.fields, t.plan)
	}).withJSON(t), p.err()
}

func (t *maskField) plan(_ string, ft fieldType) (fieldConv, error) {
	var masked any
	switch ft.n.Kind {
	case avsc.Int, avsc.Long:
		masked = int64(0)
		if t.hasRepl {
			v, err := strconv.ParseInt(t.replacement, 10, 64)
			if err != nil {
				return fieldConv{}, fmt.Errorf("replacement %q is not a valid %s", t.replacement, ft.n.Kind)
			}
			masked = v
		}
	case avsc.Float, avsc.Double:
		masked = float64(0)
		if t.hasRepl {
			v, err := strconv.ParseFloat(t.replacement, 64)
			if err != nil {
				return fieldConv{}, fmt.Errorf("replacement %q is not a valid %s", t.replacement, ft.n.Kind)
			}
			masked = v
		}
	case avsc.Boolean:
		if t.hasRepl {
			return fieldConv{}, fmt.Errorf("a replacement cannot mask a boolean")
		}
		masked = false
	case avsc.String:
		masked = t.replacement
	case avsc.Bytes:
		if t.hasRepl {
			return fieldConv{}, fmt.Errorf("a replacement cannot mask bytes")
		}
		masked = []byte{}
	}
	return fieldConv{constant: masked}, nil
}

// cast is Cast over fields ("name:type" pairs). Connect's types map to
// Avro as its AvroData does (int8 and int16 are ints marked connect.type).
type cast struct {
	targets map[string]string
	order   []string
}

var castTypes = map[string]any{
	"int8": map[string]any{"type": "int", "connect.type": "int8"}, "int16": map[string]any{"type": "int", "connect.type": "int16"},
	"int32": "int", "int64": "long", "float32": "float", "float64": "double", "boolean": "boolean", "string": "string",
}

func newCast(key bool, p props) (transformer, error) {
	t := &cast{targets: map[string]string{}}
	for _, spec := range p.required("spec") {
		name, typ, ok := strings.Cut(spec, ":")
		if !ok {
			p.fail("spec", "casting the whole value ("+spec+") is not supported: hdfs-sink writes records; use field:type pairs")
			continue
		}
		if _, known := castTypes[typ]; !known {
			p.fail("spec", fmt.Sprintf("type %q of field %q is not one of int8, int16, int32, int64, float32, float64, boolean, string", typ, name))
			continue
		}
		t.targets[name] = typ
		t.order = append(t.order, name)
	}
	return newValueRewriter(key, func(s *schema.Schema) (*rewrite, error) {
		return convertFields(s, t.order, t.plan)
	}).withJSON(t), p.err()
}

func (t *cast) plan(name string, ft fieldType) (fieldConv, error) {
	if ft.n.Logical != avsc.None {
		return fieldConv{}, fmt.Errorf("a %s field cannot be cast by hdfs-sink (use TimestampConverter)", ft.n.Declared.LogicalType)
	}
	target := t.targets[name]
	return fieldConv{out: castTypes[target], conv: func(v any) (any, error) { return castValue(v, ft.n.Kind, target) }}, nil
}

// castValue follows Cast.castValueToType: numbers narrow as Java's casts
// do, booleans are 1/0, strings are parsed; to string is String.valueOf.
func castValue(v any, from avsc.Kind, to string) (any, error) {
	switch to {
	case "string":
		return javaString(v, from), nil
	case "boolean":
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case float64:
			return int64(x) != 0, nil
		case bool:
			return x, nil
		case string:
			return strings.EqualFold(x, "true"), nil
		}
	case "float32", "float64":
		f, err := toFloat(v)
		if to == "float32" {
			f = float64(float32(f))
		}
		return f, err
	default:
		n, err := toInt(v)
		switch to {
		case "int8":
			n = int64(int8(n))
		case "int16":
			n = int64(int16(n))
		case "int32":
			n = int64(int32(n))
		}
		return n, err
	}
	return nil, fmt.Errorf("cannot cast %T to %s", v, to)
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	}
	return 0, fmt.Errorf("cannot cast %T to an integer", v)
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return 0, fmt.Errorf("cannot cast %T to a float", v)
}

// javaString is String.valueOf for a primitive of kind from.
func javaString(v any, from avsc.Kind) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		bits := 64
		if from == avsc.Float {
			bits = 32
		}
		return javaFloat(x, bits)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// javaFloat is Double.toString (Float.toString for bits 32): shortest
// digits, at least one after the point, and computerized scientific
// notation (1.0E7) outside [10^-3, 10^7).
func javaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1E+07, 1.5E-05
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
