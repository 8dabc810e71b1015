package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// defaultValue converts a field default (JSON decoded with UseNumber) into
// the goavro native value of n's raw form, following the spec's default
// encoding: bytes and fixed are strings of code points 0-255, a union's
// default belongs to its first branch. goavro's own default handling is not
// used: it takes the UTF-8 bytes of a bytes default and does not convert
// defaults of records, arrays, maps or fixed.
func defaultValue(n *node, v any) (any, error) {
	switch n.kind {
	case kNull:
		if v != nil {
			return nil, fmt.Errorf("null default must be null")
		}
		return nil, nil
	case kBoolean:
		return typed[bool](v, "boolean")
	case kInt:
		i, err := integer(v, 32)
		return int32(i), err
	case kLong:
		return integer(v, 64)
	case kFloat:
		f, err := number(v)
		return float32(f), err
	case kDouble:
		return number(v)
	case kString:
		return typed[string](v, "string")
	case kBytes, kFixed:
		return latin1(n, v)
	case kEnum:
		s, err := typed[string](v, "enum symbol")
		if err == nil && !slices.Contains(n.symbols, s) {
			err = fmt.Errorf("%q is not a symbol of enum %s", s, n.name)
		}
		return s, err
	case kArray:
		return arrayDefault(n, v)
	case kMap:
		return mapDefault(n, v)
	case kRecord:
		return recordDefault(n, v)
	}
	return unionDefault(n, v)
}

func typed[T any](v any, what string) (T, error) {
	t, ok := v.(T)
	if !ok {
		return t, fmt.Errorf("default %v is not a %s", v, what)
	}
	return t, nil
}

func integer(v any, bits int) (int64, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("default %v is not a number", v)
	}
	i, err := strconv.ParseInt(num.String(), 10, bits)
	if err == nil {
		return i, nil
	}
	// 1.0 or 1e3 are integral numbers too.
	f, ferr := num.Float64()
	if ferr != nil || f != math.Trunc(f) || f < -math.Pow(2, float64(bits-1)) || f >= math.Pow(2, float64(bits-1)) {
		return 0, fmt.Errorf("default %v is not a %d-bit integer", v, bits)
	}
	return int64(f), nil
}

func number(v any) (float64, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("default %v is not a number", v)
	}
	return num.Float64()
}

func latin1(n *node, v any) ([]byte, error) {
	s, err := typed[string](v, "string")
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("default %q has code point U+%04X above U+00FF", s, r)
		}
		b = append(b, byte(r))
	}
	if n.kind == kFixed && len(b) != n.size {
		return nil, fmt.Errorf("default has %d bytes, fixed %s has %d", len(b), n.name, n.size)
	}
	return b, nil
}

func arrayDefault(n *node, v any) (any, error) {
	in, err := typed[[]any](v, "array")
	if err != nil {
		return nil, err
	}
	out := make([]any, len(in))
	for i, x := range in {
		if out[i], err = defaultValue(n.items, x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func mapDefault(n *node, v any) (any, error) {
	in, err := typed[map[string]any](v, "map")
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(in))
	for k, x := range in {
		if out[k], err = defaultValue(n.items, x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func recordDefault(n *node, v any) (any, error) {
	in, err := typed[map[string]any](v, "record")
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(n.fields))
	for _, f := range n.fields {
		x, ok := in[f.name]
		if !ok && !f.hasDef {
			return nil, fmt.Errorf("record default lacks field %q, which has no default", f.name)
		}
		if !ok {
			x = f.def
		}
		if out[f.name], err = defaultValue(f.typ, x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// unionDefault follows the spec (first branch) but, rather than fail a
// projection over a schema the registry accepted, also takes a value that
// fits a later branch.
func unionDefault(n *node, v any) (any, error) {
	var firstErr error
	for _, b := range n.branches {
		x, err := defaultValue(b, v)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if b.kind == kNull {
			return nil, nil
		}
		return map[string]any{b.unionKey(): x}, nil
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("empty union")
	}
	return nil, firstErr
}
