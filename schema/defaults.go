package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// defaultValue converts a field default (JSON decoded with UseNumber) into
// the goavro native value of n's raw form, following the spec's default
// encoding: bytes and fixed are strings of code points 0-255, a union's
// default belongs to its first branch. goavro's own default handling is not
// used: it takes the UTF-8 bytes of a bytes default and does not convert
// defaults of records, arrays, maps or fixed.
func defaultValue(n *avsc.Node, v any) (any, error) {
	switch n.Kind {
	case avsc.Null:
		if v != nil {
			return nil, fmt.Errorf("null default must be null")
		}
		return nil, nil
	case avsc.Boolean:
		return typed[bool](v, "boolean")
	case avsc.Int:
		i, err := integer(v, 32)
		return int32(i), err
	case avsc.Long:
		return integer(v, 64)
	case avsc.Float:
		f, err := number(v)
		return float32(f), err
	case avsc.Double:
		return number(v)
	case avsc.String:
		return typed[string](v, "string")
	case avsc.Bytes, avsc.Fixed:
		return latin1(n, v)
	case avsc.Enum:
		s, err := typed[string](v, "enum symbol")
		if err == nil && !slices.Contains(n.Symbols, s) {
			err = fmt.Errorf("%q is not a symbol of enum %s", s, n.Name)
		}
		return s, err
	case avsc.Array:
		return arrayDefault(n, v)
	case avsc.Map:
		return mapDefault(n, v)
	case avsc.Record:
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

func latin1(n *avsc.Node, v any) ([]byte, error) {
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
	if n.Kind == avsc.Fixed && len(b) != n.Size {
		return nil, fmt.Errorf("default has %d bytes, fixed %s has %d", len(b), n.Name, n.Size)
	}
	return b, nil
}

func arrayDefault(n *avsc.Node, v any) (any, error) {
	in, err := typed[[]any](v, "array")
	if err != nil {
		return nil, err
	}
	return eachItem(in, func(x any) (any, error) { return defaultValue(n.Items, x) })
}

func mapDefault(n *avsc.Node, v any) (any, error) {
	in, err := typed[map[string]any](v, "map")
	if err != nil {
		return nil, err
	}
	return eachValue(in, func(x any) (any, error) { return defaultValue(n.Values, x) })
}

func recordDefault(n *avsc.Node, v any) (any, error) {
	in, err := typed[map[string]any](v, "record")
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(n.Fields))
	for i := range n.Fields {
		f := &n.Fields[i]
		x, ok := in[f.Name]
		if !ok && !f.HasDefault {
			return nil, fmt.Errorf("record default lacks field %q, which has no default", f.Name)
		}
		if !ok {
			x = f.Default
		}
		if out[f.Name], err = defaultValue(f.Type, x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// unionDefault follows the spec (first branch) but, rather than fail a
// projection over a schema the registry accepted, also takes a value that
// fits a later branch.
func unionDefault(n *avsc.Node, v any) (any, error) {
	var firstErr error
	for _, b := range n.Branches {
		x, err := defaultValue(b, v)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if b.Kind == avsc.Null {
			return nil, nil
		}
		return map[string]any{rawKey(b): x}, nil
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("empty union")
	}
	return nil, firstErr
}
