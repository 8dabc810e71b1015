package partitioner

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Field writes "name=value/name=value" from fields of the record value, as
// the reference's FieldPartitioner does for partition.field.name. Values are
// escaped as Hive escapes partition directory names (see escapePathName).
type Field struct {
	names []string   // as configured, e.g. "customer.country"
	paths [][]string // names split at dots
}

// NewField builds a Field partitioner for the given field names, each a
// dot-separated path into nested records.
func NewField(names []string) (*Field, error) {
	if len(names) == 0 {
		return nil, &ConfigError{Key: "partition.field.name", Reason: "must name at least one field"}
	}
	f := &Field{names: append([]string(nil), names...)}
	seen := map[string]bool{}
	for _, n := range names {
		path := strings.Split(n, ".")
		for _, p := range path {
			if p == "" {
				return nil, &ConfigError{Key: "partition.field.name", Value: n, Reason: "has an empty path element"}
			}
		}
		if seen[n] {
			return nil, &ConfigError{Key: "partition.field.name", Value: n, Reason: "is listed twice"}
		}
		seen[n] = true
		f.paths = append(f.paths, path)
	}
	return f, nil
}

// Encode returns "name=value" for each configured field, joined by "/". A
// null value is written "null", as the reference does.
func (f *Field) Encode(r Record) (string, error) {
	l := lookup{r: r}
	parts := make([]string, len(f.names))
	for i := range f.paths {
		v, reason, err := l.at(f.paths[i])
		if err != nil {
			return "", &RecordError{What: fmt.Sprintf("field %q", f.names[i]), Reason: "decode value", Err: err}
		}
		s := ""
		if reason == "" {
			s, reason = f.format(v)
		}
		if reason != "" {
			return "", &RecordError{What: fmt.Sprintf("field %q", f.names[i]), Reason: reason}
		}
		parts[i] = escapePathName(f.names[i]) + "=" + escapePathName(s)
		if len(parts[i]) > maxDirName {
			return "", &RecordError{What: fmt.Sprintf("field %q", f.names[i]),
				Reason: fmt.Sprintf("its directory name would be %d bytes, over the %d a store allows in one name", len(parts[i]), maxDirName)}
		}
	}
	return strings.Join(parts, "/"), nil
}

// maxDirName is the longest name one path element may have (HDFS's
// dfs.namenode.fs-limits.max-component-length default, Linux's NAME_MAX): a
// value that would make a longer directory cannot be placed, ever.
const maxDirName = 255

// format formats a field value, or says why it cannot.
func (f *Field) format(v any) (string, string) {
	s, ok := fieldString(v)
	if !ok {
		return "", "value is " + typeName(v) + "; a partition field must be int, long, string, boolean or enum"
	}
	return s, ""
}

// Fields are the configured field names, dots included, as the reference
// names its Hive partition columns.
func (f *Field) Fields() []string { return append([]string(nil), f.names...) }

// Values returns the unescaped field values of an encoded path.
func (f *Field) Values(encoded string) ([]string, error) {
	return splitPath(encoded, f.names, true)
}

func decode(r Record) (any, error) {
	if r.Value == nil {
		return nil, nil
	}
	return r.Value()
}

// lookup finds field values of one record: through Record.Field when it
// can answer, else by decoding the whole value once.
type lookup struct {
	r       Record
	root    any
	decoded bool
}

// at returns the value at path with any union wrapper removed, or why it
// is not there (reason), or why the value does not decode (err).
func (l *lookup) at(path []string) (v any, reason string, err error) {
	if l.r.Field != nil {
		if v, ok := l.r.Field(path); ok {
			return unwrapUnion(v), "", nil
		}
	}
	if !l.decoded {
		if l.root, err = decode(l.r); err != nil {
			return nil, "", err
		}
		l.decoded = true
	}
	v, reason = nested(l.root, path)
	return v, reason, nil
}

// nested follows path through records (and unions of records) in goavro's
// native form. It returns the leaf with any union wrapper removed, or why it
// could not.
func nested(root any, path []string) (any, string) {
	v := root
	for i, name := range path {
		m, ok := asRecord(v, name)
		if !ok {
			return nil, fmt.Sprintf("%s is %s, not a record", describe(path[:i]), typeName(v))
		}
		if v, ok = m[name]; !ok {
			return nil, fmt.Sprintf("%s has no field %q", describe(path[:i]), name)
		}
	}
	return unwrapUnion(v), ""
}

func describe(prefix []string) string {
	if len(prefix) == 0 {
		return "the record value"
	}
	return strconv.Quote(strings.Join(prefix, "."))
}

// asRecord returns the fields of v, looking through a union wrapper
// {"ns.Name": {...}} unless v itself has the wanted field.
func asRecord(v any, field string) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if _, has := m[field]; has || len(m) != 1 {
		return m, true
	}
	for _, inner := range m {
		if rec, ok := inner.(map[string]any); ok {
			return rec, true
		}
	}
	return m, true
}

// unwrapUnion removes goavro's union wrapper {"type": v} from a leaf.
// Without the schema a record with one non-record field looks the same; it
// is read as a union, which only matters for fields that are records, and
// those are not partition values anyway.
func unwrapUnion(v any) any {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return v
	}
	for _, inner := range m {
		if _, isRec := inner.(map[string]any); !isRec {
			return inner
		}
	}
	return v
}

// fieldString formats the value types the reference accepts as partition
// keys (INT8..INT64, STRING, BOOLEAN; enums arrive as strings).
func fieldString(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "null", true
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	}
	return "", false
}

// typeName names a native goavro value's Avro type for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a record or map"
	case []any:
		return "an array"
	case []byte:
		return "bytes"
	case float32:
		return "a float"
	case float64:
		return "a double"
	case time.Time:
		return "a timestamp or date"
	case time.Duration:
		return "a time of day"
	case *big.Rat:
		return "a decimal"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int32, int64, int:
		return "an integer"
	}
	return fmt.Sprintf("%T", v)
}
