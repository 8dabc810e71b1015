package hive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// maxDecimalPrecision is Hive's DECIMAL limit (HiveDecimal.MAX_PRECISION).
const maxDecimalPrecision = 38

// SchemaError says why an Avro schema cannot become Hive columns. It
// matches ErrInvalidSchema.
type SchemaError struct {
	Path string // dotted field path, empty for the schema itself
	Msg  string
}

func (e *SchemaError) Error() string {
	if e.Path == "" {
		return "avro schema: " + e.Msg
	}
	return "avro schema: " + e.Path + ": " + e.Msg
}

// Is makes errors.Is(err, ErrInvalidSchema) true.
func (e *SchemaError) Is(target error) bool { return target == ErrInvalidSchema }

// TableName expands the hive.table.name pattern ("${topic}" when empty)
// and replaces the characters Hive refuses in names, '.' and '-', with '_'
// as the reference connector does. Case is left alone: Hive lower-cases.
func TableName(pattern, topic string) string {
	if pattern == "" {
		pattern = "${topic}"
	}
	return sanitize(strings.ReplaceAll(pattern, "${topic}", topic))
}

func sanitize(name string) string {
	return strings.NewReplacer(".", "_", "-", "_").Replace(name)
}

var hiveName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// HiveColumns maps the fields of a top-level Avro record to Hive columns.
//
// Types: boolean, int, long→bigint, float, double, string, bytes and
// fixed→binary, enum→string, null→void, record→struct<...>, array→array<>,
// map→map<string,...>; a union with one non-null branch becomes that type,
// a wider one uniontype<...>. Logical types map to real Hive types: date,
// timestamp-*/local-timestamp-*→timestamp, decimal (bytes or fixed)→
// decimal(p,s), uuid→string; time-* keep their int/bigint. As the Avro spec
// asks, a logical type on the wrong base type, or an invalid decimal, is
// ignored; a valid decimal wider than Hive's 38 digits is an error. Field
// docs become column comments. Recursive records cannot be expressed in
// Hive and are rejected.
func HiveColumns(avroSchemaJSON string) ([]Column, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(avroSchemaJSON)))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, &SchemaError{Msg: "not JSON: " + err.Error()}
	}
	obj, ok := root.(map[string]any)
	if !ok || (obj["type"] != "record" && obj["type"] != "error") {
		return nil, &SchemaError{Msg: "top level must be a record"}
	}
	cv := &converter{named: map[string]string{}}
	fields, err := cv.record(obj, "", "")
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(fields))
	for i, f := range fields {
		cols[i] = Column{Name: f.name, Type: f.typ, Comment: f.doc}
	}
	return cols, nil
}

// converter walks one schema, remembering named types for references.
type converter struct {
	// named maps full names to Hive types; "" marks a record still being
	// converted, so a reference to it is recursion.
	named map[string]string
}

type field struct{ name, typ, doc string }

// hiveType converts any schema node; ns is the enclosing namespace, path
// the field path for errors.
func (cv *converter) hiveType(node any, ns, path string) (string, error) {
	switch n := node.(type) {
	case string:
		if t, ok := primitives[n]; ok {
			return t, nil
		}
		return cv.reference(n, ns, path)
	case []any:
		return cv.union(n, ns, path)
	case map[string]any:
		return cv.complex(n, ns, path)
	}
	return "", &SchemaError{Path: path, Msg: fmt.Sprintf("unexpected JSON %T as a type", node)}
}

var primitives = map[string]string{
	"null": "void", "boolean": "boolean", "int": "int", "long": "bigint",
	"float": "float", "double": "double", "bytes": "binary", "string": "string",
}

func (cv *converter) complex(n map[string]any, ns, path string) (string, error) {
	typ, ok := n["type"].(string)
	if !ok {
		return "", &SchemaError{Path: path, Msg: `"type" must be a string in a schema object`}
	}
	switch typ {
	case "record", "error":
		return cv.structType(n, ns, path)
	case "enum":
		return "string", cv.define(n, ns, path, "string")
	case "fixed":
		t := logical("bytes", n)
		if t == "" {
			return "", decimalError(n, path)
		}
		return t, cv.define(n, ns, path, t)
	case "array":
		return cv.container(n, "items", "array<%s>", ns, path)
	case "map":
		return cv.container(n, "values", "map<string,%s>", ns, path)
	}
	if _, ok := primitives[typ]; ok {
		if t := logical(typ, n); t != "" {
			return t, nil
		}
		return "", decimalError(n, path)
	}
	return cv.reference(typ, ns, path)
}

func (cv *converter) container(n map[string]any, key, format, ns, path string) (string, error) {
	inner, ok := n[key]
	if !ok {
		return "", &SchemaError{Path: path, Msg: fmt.Sprintf("%s without %q", n["type"], key)}
	}
	t, err := cv.hiveType(inner, ns, path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(format, t), nil
}

// union keeps the non-null branches: one becomes the type (nullable
// column), several a uniontype.
func (cv *converter) union(branches []any, ns, path string) (string, error) {
	var types []string
	for _, b := range branches {
		if b == "null" {
			continue
		}
		if _, nested := b.([]any); nested {
			return "", &SchemaError{Path: path, Msg: "union directly inside a union"}
		}
		t, err := cv.hiveType(b, ns, path)
		if err != nil {
			return "", err
		}
		types = append(types, t)
	}
	switch len(types) {
	case 0:
		return "void", nil
	case 1:
		return types[0], nil
	}
	return "uniontype<" + strings.Join(types, ",") + ">", nil
}

// logical maps a primitive (or fixed, passed as "bytes") with its
// logicalType; "" means a decimal too wide for Hive.
func logical(prim string, n map[string]any) string {
	lt, _ := n["logicalType"].(string)
	switch {
	case lt == "date" && prim == "int":
		return "date"
	case strings.HasPrefix(lt, "timestamp-") || strings.HasPrefix(lt, "local-timestamp-"):
		if prim == "long" {
			return "timestamp"
		}
	case lt == "decimal" && prim == "bytes":
		p, s, valid := decimalParams(n)
		switch {
		case !valid:
			// invalid decimal: ignored per the Avro spec
		case p > maxDecimalPrecision:
			return ""
		default:
			return fmt.Sprintf("decimal(%d,%d)", p, s)
		}
	}
	return primitives[prim]
}

// decimalParams reads precision and scale; valid follows the Avro spec
// (precision > 0, 0 <= scale <= precision).
func decimalParams(n map[string]any) (precision, scale int64, valid bool) {
	var ok bool
	if precision, ok = jsonInt(n["precision"]); !ok || precision < 1 {
		return 0, 0, false
	}
	if raw, present := n["scale"]; present {
		if scale, ok = jsonInt(raw); !ok {
			return 0, 0, false
		}
	}
	return precision, scale, scale >= 0 && scale <= precision
}

func jsonInt(v any) (int64, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := num.Int64()
	return i, err == nil
}

func decimalError(n map[string]any, path string) error {
	p, _, _ := decimalParams(n)
	return &SchemaError{Path: path, Msg: fmt.Sprintf("decimal precision %d exceeds Hive's maximum %d", p, maxDecimalPrecision)}
}

// structType converts a nested record into struct<...>.
func (cv *converter) structType(n map[string]any, ns, path string) (string, error) {
	fields, err := cv.record(n, ns, path)
	if err != nil {
		return "", err
	}
	return structOf(fields), nil
}

func structOf(fields []field) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.name + ":" + f.typ
	}
	return "struct<" + strings.Join(parts, ",") + ">"
}

// record defines a record type and converts its fields. While its fields
// are converted the name maps to "", so self-references are caught.
func (cv *converter) record(n map[string]any, ns, path string) ([]field, error) {
	full, inner, err := fullName(n, ns, path)
	if err != nil {
		return nil, err
	}
	if err := cv.claim(full, path); err != nil {
		return nil, err
	}
	raw, ok := n["fields"].([]any)
	if !ok || len(raw) == 0 {
		return nil, &SchemaError{Path: path, Msg: fmt.Sprintf("record %s has no fields (Hive has no empty struct)", full)}
	}
	fields := make([]field, 0, len(raw))
	seen := map[string]bool{}
	for _, r := range raw {
		f, err := cv.field(r, inner, path)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(f.name)
		if seen[key] {
			return nil, &SchemaError{Path: join(path, f.name), Msg: "duplicate field name (Hive names ignore case)"}
		}
		seen[key] = true
		fields = append(fields, f)
	}
	cv.named[full] = structOf(fields)
	return fields, nil
}

func (cv *converter) field(r any, ns, path string) (field, error) {
	obj, ok := r.(map[string]any)
	if !ok {
		return field{}, &SchemaError{Path: path, Msg: "field is not an object"}
	}
	rawName, _ := obj["name"].(string)
	name := sanitize(rawName)
	if !hiveName.MatchString(name) {
		return field{}, &SchemaError{Path: join(path, rawName), Msg: fmt.Sprintf("invalid field name %q", rawName)}
	}
	fpath := join(path, name)
	typ, ok := obj["type"]
	if !ok {
		return field{}, &SchemaError{Path: fpath, Msg: "field without type"}
	}
	t, err := cv.hiveType(typ, ns, fpath)
	if err != nil {
		return field{}, err
	}
	doc, _ := obj["doc"].(string)
	return field{name: name, typ: t, doc: doc}, nil
}

// define registers an enum or fixed under its full name.
func (cv *converter) define(n map[string]any, ns, path, hiveType string) error {
	full, _, err := fullName(n, ns, path)
	if err != nil {
		return err
	}
	if err := cv.claim(full, path); err != nil {
		return err
	}
	cv.named[full] = hiveType
	return nil
}

func (cv *converter) claim(full, path string) error {
	if _, dup := cv.named[full]; dup {
		return &SchemaError{Path: path, Msg: fmt.Sprintf("type %s defined twice", full)}
	}
	cv.named[full] = ""
	return nil
}

// reference resolves a named type: first in the enclosing namespace, then
// as a full name.
func (cv *converter) reference(name, ns, path string) (string, error) {
	candidates := []string{name}
	if ns != "" && !strings.Contains(name, ".") {
		candidates = []string{ns + "." + name, name}
	}
	for _, c := range candidates {
		t, ok := cv.named[c]
		if !ok {
			continue
		}
		if t == "" {
			return "", &SchemaError{Path: path, Msg: fmt.Sprintf("recursive type %s cannot be a Hive column", c)}
		}
		return t, nil
	}
	return "", &SchemaError{Path: path, Msg: fmt.Sprintf("unknown type %q", name)}
}

// fullName applies the Avro namespace rules; inner is the namespace for
// names used inside the type.
func fullName(n map[string]any, ns, path string) (full, inner string, err error) {
	name, _ := n["name"].(string)
	if name == "" {
		return "", "", &SchemaError{Path: path, Msg: fmt.Sprintf("%v without name", n["type"])}
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name, name[:i], nil
	}
	if explicit, ok := n["namespace"].(string); ok {
		ns = explicit
	}
	if ns == "" {
		return name, "", nil
	}
	return ns + "." + name, ns, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
