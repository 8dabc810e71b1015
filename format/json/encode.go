package json

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/jsonstr"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// Append appends the JSON encoding of v, a goavro native value of type
// n, to dst. A value whose native form is not what n implies is a
// *format.ValueError naming its field.
func Append(dst []byte, n *avsc.Node, v any) ([]byte, error) {
	return appendValue(dst, n, v, "")
}

func appendValue(dst []byte, n *avsc.Node, v any, path string) ([]byte, error) {
	if n.Kind == avsc.Union {
		return appendUnion(dst, n, v, path)
	}
	if v == nil {
		if n.Kind == avsc.Null {
			return append(dst, "null"...), nil
		}
		return dst, mismatch(path, n, v)
	}
	if n.Logical != avsc.None {
		return appendLogical(dst, n, v, path)
	}
	switch n.Kind {
	case avsc.Record:
		return appendRecord(dst, n, v, path)
	case avsc.Array:
		return appendArray(dst, n, v, path)
	case avsc.Map:
		return appendMap(dst, n, v, path)
	}
	return appendPrimitive(dst, n, v, path)
}

func mismatch(path string, n *avsc.Node, v any) error {
	return &format.ValueError{Path: path, Msg: fmt.Sprintf("%T is not a %s value", v, n.Kind)}
}

func appendPrimitive(dst []byte, n *avsc.Node, v any, path string) ([]byte, error) {
	switch x := v.(type) {
	case bool:
		if n.Kind == avsc.Boolean {
			return strconv.AppendBool(dst, x), nil
		}
	case int32:
		if n.Kind == avsc.Int {
			return strconv.AppendInt(dst, int64(x), 10), nil
		}
	case int64:
		if n.Kind == avsc.Long {
			return strconv.AppendInt(dst, x, 10), nil
		}
	case float32:
		if n.Kind == avsc.Float {
			return appendFloat(dst, float64(x), 32), nil
		}
	case float64:
		if n.Kind == avsc.Double {
			return appendFloat(dst, x, 64), nil
		}
	case string:
		if n.Kind == avsc.String || n.Kind == avsc.Enum {
			return jsonstr.Append(dst, x), nil
		}
	case []byte:
		if n.Kind == avsc.Bytes || n.Kind == avsc.Fixed {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, x)
			return append(dst, '"'), nil
		}
	}
	return dst, mismatch(path, n, v)
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

func appendUnion(dst []byte, n *avsc.Node, v any, path string) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return dst, &format.ValueError{Path: path, Msg: fmt.Sprintf("union value %T is not a one-entry map", v)}
	}
	for key, inner := range m {
		branch, ok := n.Branch(key)
		if !ok {
			return dst, &format.ValueError{Path: path, Msg: fmt.Sprintf("union has no branch %q", key)}
		}
		return appendValue(dst, branch, inner, path)
	}
	panic("unreachable")
}

func appendRecord(dst []byte, n *avsc.Node, v any, path string) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return dst, mismatch(path, n, v)
	}
	dst = append(dst, '{')
	for i, f := range n.Fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstr.Append(dst, f.Name)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, f.Type, m[f.Name], join(path, f.Name)); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendArray(dst []byte, n *avsc.Node, v any, path string) ([]byte, error) {
	items, ok := v.([]any)
	if !ok {
		return dst, mismatch(path, n, v)
	}
	dst = append(dst, '[')
	for i, item := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendValue(dst, n.Items, item, path+"[]"); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

func appendMap(dst []byte, n *avsc.Node, v any, path string) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return dst, mismatch(path, n, v)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic output
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstr.Append(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, n.Values, m[k], path+"{}"); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// Layouts for the logical types; goavro gives time.Time in UTC.
const (
	dateLayout   = "2006-01-02"
	millisLayout = "2006-01-02T15:04:05.000"
	microsLayout = "2006-01-02T15:04:05.000000"
)

func appendLogical(dst []byte, n *avsc.Node, v any, path string) ([]byte, error) {
	switch x := v.(type) {
	case time.Time:
		return appendTime(dst, n, x.UTC(), path)
	case time.Duration:
		return appendTimeOfDay(dst, n, x, path)
	case *big.Rat:
		return appendDecimal(dst, n, x, path)
	case int64:
		return appendLocal(dst, n, x, path)
	case string: // uuid
		if n.Logical == avsc.UUID {
			return jsonstr.Append(dst, x), nil
		}
	}
	return dst, &format.ValueError{Path: path, Msg: fmt.Sprintf("%T is not a %s with logical type %d", v, n.Kind, n.Logical)}
}

func appendTime(dst []byte, n *avsc.Node, t time.Time, path string) ([]byte, error) {
	var layout string
	switch n.Logical {
	case avsc.Date:
		layout = dateLayout
	case avsc.TimestampMillis:
		layout = millisLayout + "Z"
	case avsc.TimestampMicros:
		layout = microsLayout + "Z"
	default:
		return dst, &format.ValueError{Path: path, Msg: "time.Time for a non-date/timestamp type"}
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, layout)
	return append(dst, '"'), nil
}

// appendLocal formats local-timestamp-* values, which goavro leaves as
// the raw long (it does not know these logical types).
func appendLocal(dst []byte, n *avsc.Node, x int64, path string) ([]byte, error) {
	var t time.Time
	layout := millisLayout
	switch n.Logical {
	case avsc.LocalTimestampMillis:
		t = time.UnixMilli(x).UTC()
	case avsc.LocalTimestampMicros:
		t, layout = time.UnixMicro(x).UTC(), microsLayout
	default:
		return dst, &format.ValueError{Path: path, Msg: "long for a non-local-timestamp logical type"}
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, layout)
	return append(dst, '"'), nil
}

func appendTimeOfDay(dst []byte, n *avsc.Node, d time.Duration, path string) ([]byte, error) {
	layout := "15:04:05.000"
	switch n.Logical {
	case avsc.TimeMillis:
	case avsc.TimeMicros:
		layout = "15:04:05.000000"
	default:
		return dst, &format.ValueError{Path: path, Msg: "duration for a non-time type"}
	}
	if d < 0 || d >= 24*time.Hour {
		return dst, &format.ValueError{Path: path, Msg: fmt.Sprintf("time of day %v outside [0, 24h)", d)}
	}
	dst = append(dst, '"')
	dst = time.Unix(0, 0).UTC().Add(d).AppendFormat(dst, layout)
	return append(dst, '"'), nil
}

func appendDecimal(dst []byte, n *avsc.Node, r *big.Rat, path string) ([]byte, error) {
	if n.Logical != avsc.Decimal {
		return dst, &format.ValueError{Path: path, Msg: "decimal value for a type without a valid decimal logical type"}
	}
	u, err := avsc.Unscaled(r, n.Scale)
	if err != nil {
		return dst, &format.ValueError{Path: path, Msg: err.Error()}
	}
	dst = append(dst, '"')
	dst = append(dst, avsc.DecimalString(u, n.Scale)...)
	return append(dst, '"'), nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
