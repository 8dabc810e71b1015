package transform

import (
	"fmt"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// timestampConverter is TimestampConverter on a field: string (with
// format, a SimpleDateFormat pattern), unix (with unix.precision), Date,
// Time or Timestamp, to any of them. Times are UTC, as in Connect.
type timestampConverter struct {
	field, target, layout, precision string
}

var timestampTargets = map[string]any{
	"string": "string", "unix": "long",
	"Date":      map[string]any{"type": "int", "logicalType": "date"},
	"Time":      map[string]any{"type": "int", "logicalType": "time-millis"},
	"Timestamp": map[string]any{"type": "long", "logicalType": "timestamp-millis"},
}

func newTimestampConverter(key bool, p props) (transformer, error) {
	t := &timestampConverter{field: p.get("field"), target: p.get("target.type"), precision: p.getDefault("unix.precision", "milliseconds")}
	if t.field == "" {
		p.fail("field", "converting the whole value is not supported: hdfs-sink writes records; name a field")
	}
	if _, ok := timestampTargets[t.target]; !ok {
		p.fail("target.type", fmt.Sprintf("%q is not one of string, unix, Date, Time, Timestamp", t.target))
	}
	if f := p.get("format"); f != "" {
		layout, err := javaLayout(f)
		if err != nil {
			p.fail("format", err.Error())
		}
		t.layout = layout
	} else if t.target == "string" {
		p.fail("format", "is required when target.type is string")
	}
	if _, ok := unixUnits[t.precision]; !ok {
		p.fail("unix.precision", fmt.Sprintf("%q is not one of seconds, milliseconds, microseconds, nanoseconds", t.precision))
	}
	return newValueRewriter(key, func(s *schema.Schema) (*rewrite, error) {
		return convertFields(s, []string{t.field}, t.plan)
	}).withJSON(t), p.err()
}

var unixUnits = map[string]time.Duration{"seconds": time.Second, "milliseconds": time.Millisecond, "microseconds": time.Microsecond, "nanoseconds": time.Nanosecond}

func (t *timestampConverter) plan(_ string, ft fieldType) (fieldConv, error) {
	read, err := t.reader(ft.n)
	if err != nil {
		return fieldConv{}, err
	}
	return fieldConv{out: timestampTargets[t.target], conv: func(v any) (any, error) {
		tm, err := read(v)
		if err != nil {
			return nil, err
		}
		return t.write(tm), nil
	}}, nil
}

// reader turns a field value into a time, by the field's type as Connect
// infers the input type from the schema.
func (t *timestampConverter) reader(n *avsc.Node) (func(any) (time.Time, error), error) {
	switch {
	case n.Logical == avsc.TimestampMillis:
		return func(v any) (time.Time, error) { return time.UnixMilli(v.(int64)).UTC(), nil }, nil
	case n.Logical == avsc.TimestampMicros:
		return func(v any) (time.Time, error) { return time.UnixMicro(v.(int64)).UTC(), nil }, nil
	case n.Logical == avsc.Date:
		return func(v any) (time.Time, error) { return time.Unix(v.(int64)*86400, 0).UTC(), nil }, nil
	case n.Logical == avsc.TimeMillis:
		return func(v any) (time.Time, error) { return time.UnixMilli(v.(int64)).UTC(), nil }, nil
	case n.Logical == avsc.None && n.Kind == avsc.Long:
		unit := unixUnits[t.precision]
		return func(v any) (time.Time, error) {
			return time.Unix(0, 0).Add(time.Duration(v.(int64)) * unit).UTC(), nil
		}, nil
	case n.Logical == avsc.None && n.Kind == avsc.String:
		if t.layout == "" {
			return nil, fmt.Errorf("a string field needs format")
		}
		return func(v any) (time.Time, error) {
			tm, err := time.ParseInLocation(t.layout, v.(string), time.UTC)
			if err != nil {
				return time.Time{}, fmt.Errorf("%q does not match format: %v", v, err)
			}
			return tm.UTC(), nil
		}, nil
	}
	return nil, fmt.Errorf("type %s is not a timestamp, date, time, unix long or string", n.Kind)
}

func (t *timestampConverter) write(tm time.Time) any {
	switch t.target {
	case "string":
		return tm.Format(t.layout)
	case "unix":
		return tm.UnixNano() / int64(unixUnits[t.precision])
	case "Date":
		return floorDiv(tm.UnixMilli(), 86400000)
	case "Time":
		ms := tm.UnixMilli() - floorDiv(tm.UnixMilli(), 86400000)*86400000
		return ms
	}
	return tm.UnixMilli()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// javaLayouts maps SimpleDateFormat letters (by run length) to Go's layout.
var javaLayouts = map[string]string{
	"yyyy": "2006", "yy": "06", "MMMM": "January", "MMM": "Jan", "MM": "01", "M": "1", "dd": "02", "d": "2",
	"HH": "15", "hh": "03", "h": "3", "mm": "04", "m": "4", "ss": "05", "s": "5", "a": "PM",
	"EEEE": "Monday", "EEE": "Mon", "z": "MST", "zzz": "MST", "Z": "-0700", "X": "Z07", "XX": "Z0700", "XXX": "Z07:00",
	"SSS": "000", "SS": "00", "S": "0", "SSSSSS": "000000", "SSSSSSSSS": "000000000",
}

// javaLayout converts a SimpleDateFormat pattern into a Go layout. Only
// the letters above are known; fractions must follow '.' or ',' (Go's rule).
func javaLayout(f string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(f); {
		c := f[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(f[i+1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("unterminated quote in %q", f)
			}
			if end == 0 {
				b.WriteByte('\'')
			} else {
				b.WriteString(f[i+1 : i+1+end])
			}
			i += end + 2
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			j := i
			for j < len(f) && f[j] == c {
				j++
			}
			run := f[i:j]
			g, ok := javaLayouts[run]
			if !ok {
				return "", fmt.Errorf("pattern letters %q are not supported", run)
			}
			if c == 'S' && (i == 0 || (f[i-1] != '.' && f[i-1] != ',')) {
				return "", fmt.Errorf("fractions of a second (%q) must follow '.' or ','", run)
			}
			b.WriteString(g)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}
