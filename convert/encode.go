package convert

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
)

// encode appends the Avro binary of v (decoded with UseNumber) under n,
// as JsonConverter.convertToConnect reads it: a null takes the default,
// else is only valid when optional; extra struct fields are ignored.
func encode(dst []byte, n *node, v any, at string) ([]byte, error) {
	if v == nil && n.def != nil {
		var err error
		if v, err = decodeJSON(n.def); err != nil {
			return nil, fmt.Errorf("%s: default: %w", at, err)
		}
	}
	if n.optional {
		if v == nil {
			return append(dst, 0), nil // union branch 0: null
		}
		dst = append(dst, 2) // union branch 1, zigzag
	} else if v == nil {
		return nil, fmt.Errorf("%s: null for a required field", at)
	}
	return encodeBare(dst, n, v, at)
}

func encodeBare(dst []byte, n *node, v any, at string) ([]byte, error) {
	switch n.kind {
	case kindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, mismatch(at, "a boolean", v)
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case kindInt8, kindInt16, kindInt32, kindInt64, kindDate, kindTime, kindTimestamp:
		i, err := integer(n.kind, v, at)
		return binary.AppendVarint(dst, i), err
	case kindFloat32, kindFloat64:
		return encodeFloat(dst, n.kind, v, at)
	case kindString:
		s, ok := v.(string)
		if !ok {
			return nil, mismatch(at, "a string", v)
		}
		return append(binary.AppendVarint(dst, int64(len(s))), s...), nil
	case kindBytes:
		b, err := base64Bytes(v, at)
		return append(binary.AppendVarint(dst, int64(len(b))), b...), err
	case kindDecimal:
		b, err := decimalBytes(v, n.scale, at)
		return append(binary.AppendVarint(dst, int64(len(b))), b...), err
	case kindArray:
		return encodeArray(dst, n, v, at)
	case kindMap:
		return encodeMap(dst, n, v, at)
	case kindEntryMap:
		return encodeEntries(dst, n, v, at)
	case kindStruct:
		return encodeStruct(dst, n, v, at)
	}
	return nil, fmt.Errorf("%s: unknown kind %d", at, n.kind)
}

var intRange = map[kind][2]int64{
	kindInt8: {math.MinInt8, math.MaxInt8}, kindInt16: {math.MinInt16, math.MaxInt16},
	kindInt32: {math.MinInt32, math.MaxInt32}, kindDate: {math.MinInt32, math.MaxInt32}, kindTime: {0, 86_399_999},
	kindInt64: {math.MinInt64, math.MaxInt64}, kindTimestamp: {math.MinInt64, math.MaxInt64},
}

func integer(k kind, v any, at string) (int64, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, mismatch(at, "an integer", v)
	}
	i, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s is not a 64-bit integer", at, num)
	}
	if r := intRange[k]; i < r[0] || i > r[1] {
		return 0, fmt.Errorf("%s: %d is outside [%d, %d]", at, i, r[0], r[1])
	}
	return i, nil
}

func encodeFloat(dst []byte, k kind, v any, at string) ([]byte, error) {
	num, ok := v.(json.Number)
	if !ok {
		return nil, mismatch(at, "a number", v)
	}
	bits := 64
	if k == kindFloat32 {
		bits = 32
	}
	f, err := strconv.ParseFloat(string(num), bits)
	if err != nil {
		return nil, fmt.Errorf("%s: %s is not a float%d", at, num, bits)
	}
	if k == kindFloat32 {
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
	}
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
}

func base64Bytes(v any, at string) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, mismatch(at, "base64 bytes", v)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: not base64: %w", at, err)
	}
	return b, nil
}

// decimalBytes reads a Decimal as Connect's JsonConverter does whatever
// decimal.format says (which only chooses how it writes): a base64 string
// holds the unscaled two's complement bytes, a number the value itself,
// which must fit the scale.
func decimalBytes(v any, scale int, at string) ([]byte, error) {
	if _, ok := v.(string); ok {
		return base64Bytes(v, at)
	}
	num, ok := v.(json.Number)
	if !ok {
		return nil, mismatch(at, "a decimal (base64 or a number)", v)
	}
	r, ok := new(big.Rat).SetString(string(num))
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a decimal", at, num)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !r.IsInt() {
		return nil, fmt.Errorf("%s: %s has more than %d fractional digits (the schema's scale)", at, num, scale)
	}
	return twosComplement(r.Num()), nil
}

// twosComplement is i's minimal big-endian two's complement, as Java's
// BigInteger.toByteArray writes it.
func twosComplement(i *big.Int) []byte {
	if i.Sign() >= 0 {
		b := i.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -i - 1, inverted, is i in two's complement.
	m := new(big.Int).Sub(new(big.Int).Neg(i), big.NewInt(1))
	b := m.Bytes()
	for j := range b {
		b[j] = ^b[j]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

func encodeArray(dst []byte, n *node, v any, at string) ([]byte, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, mismatch(at, "an array", v)
	}
	if len(items) > 0 {
		dst = binary.AppendVarint(dst, int64(len(items)))
		var err error
		for i, item := range items {
			if dst, err = encode(dst, n.elem, item, at+"["+strconv.Itoa(i)+"]"); err != nil {
				return nil, err
			}
		}
	}
	return append(dst, 0), nil
}

func encodeMap(dst []byte, n *node, v any, at string) ([]byte, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, mismatch(at, "an object", v)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same JSON gives the same bytes
	if len(keys) > 0 {
		dst = binary.AppendVarint(dst, int64(len(keys)))
		var err error
		for _, k := range keys {
			dst = append(binary.AppendVarint(dst, int64(len(k))), k...)
			if dst, err = encode(dst, n.elem, obj[k], at+"{"+k+"}"); err != nil {
				return nil, err
			}
		}
	}
	return append(dst, 0), nil
}

// encodeEntries reads a map with other than string keys as Connect's
// JsonConverter writes one, an array of [key, value] pairs, or as
// JsonSchemaData does, an array of {"key": …, "value": …} objects.
func encodeEntries(dst []byte, n *node, v any, at string) ([]byte, error) {
	pairs, ok := v.([]any)
	if !ok {
		return nil, mismatch(at, "an array of map entries", v)
	}
	if len(pairs) > 0 {
		dst = binary.AppendVarint(dst, int64(len(pairs)))
	}
	for i, p := range pairs {
		k, val, err := entry(n, p, at+"["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		if dst, err = encode(dst, n.key, k, at+"["+strconv.Itoa(i)+"].key"); err != nil {
			return nil, err
		}
		if dst, err = encode(dst, n.elem, val, at+"["+strconv.Itoa(i)+"].value"); err != nil {
			return nil, err
		}
	}
	return append(dst, 0), nil
}

func entry(n *node, p any, at string) (k, v any, err error) {
	if n.entryObjects {
		obj, ok := p.(map[string]any)
		if !ok || len(obj) != 2 {
			return nil, nil, mismatch(at, `a {"key", "value"} object`, p)
		}
		k, hasKey := obj["key"]
		v, hasValue := obj["value"]
		if !hasKey || !hasValue {
			return nil, nil, fmt.Errorf(`%s: a map entry needs exactly the fields "key" and "value"`, at)
		}
		return k, v, nil
	}
	kv, ok := p.([]any)
	if !ok || len(kv) != 2 {
		return nil, nil, mismatch(at, "a [key, value] pair", p)
	}
	return kv[0], kv[1], nil
}

func encodeStruct(dst []byte, n *node, v any, at string) ([]byte, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, mismatch(at, "an object", v)
	}
	var err error
	for _, f := range n.fields {
		if dst, err = encode(dst, f.n, obj[f.name], at+"."+f.name); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

func mismatch(at, want string, got any) error {
	return fmt.Errorf("%s: want %s, got %s", at, want, jsonKind(got))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// decodeJSON decodes one JSON value, numbers as json.Number, and refuses
// anything after it.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}
