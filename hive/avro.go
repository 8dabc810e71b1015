package hive

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// maxDecimalPrecision is Hive's DECIMAL limit (HiveDecimal.MAX_PRECISION).
const maxDecimalPrecision = 38

// ColumnError says why an Avro schema cannot become Hive columns: either
// avsc refused the schema or Hive's own rules do (no empty struct, names
// unique regardless of case, decimal precision at most 38). It is avsc's
// SchemaError (same text, same fields), and it also matches this
// package's ErrInvalidSchema, the Kind a *Error reports for it, so callers
// match one type whichever step refused the schema.
type ColumnError struct{ avsc.SchemaError }

func columnError(path, msg string) *ColumnError {
	return &ColumnError{avsc.SchemaError{Path: path, Msg: msg}}
}

// Is makes errors.Is(err, ErrInvalidSchema) true, and avsc.ErrInvalidSchema too.
func (e *ColumnError) Is(target error) bool {
	return target == ErrInvalidSchema || target == avsc.ErrInvalidSchema
}

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
// timestamp-millis/-micros and local-timestamp-millis/-micros→timestamp,
// decimal (bytes or fixed)→decimal(p,s), uuid→string; time-* keep their
// int/bigint. As the Avro spec asks, a logical type on the wrong base type,
// an unknown one (timestamp-nanos too: the file formats write it as a plain
// long) or an invalid decimal is ignored; a valid decimal wider than Hive's
// 38 digits is an error. Field docs become column comments. Recursive
// records cannot be expressed in Hive and are rejected. The schema is read
// with avsc.ParseStrict, the model the file formats use, so table columns
// and file columns agree.
func HiveColumns(avroSchemaJSON string) ([]Column, error) {
	root, err := avsc.ParseStrict(avroSchemaJSON)
	if err != nil {
		return nil, fromAvsc(err)
	}
	fields, err := structFields(root, "")
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(fields))
	for i, f := range fields {
		cols[i] = Column{Name: f.name, Type: f.typ, Comment: f.doc}
	}
	return cols, nil
}

// fromAvsc restates a parse error as a *ColumnError, so callers match one
// error type whichever step refused the schema.
func fromAvsc(err error) error {
	var se *avsc.SchemaError
	if errors.As(err, &se) {
		return columnError(se.Path, se.Msg)
	}
	return columnError("", err.Error())
}

type field struct{ name, typ, doc string }

// hiveType maps one node of the parsed schema; path names the field for
// errors.
func hiveType(n *avsc.Node, path string) (string, error) {
	switch n.Kind {
	case avsc.Record:
		fields, err := structFields(n, path)
		if err != nil {
			return "", err
		}
		return structOf(fields), nil
	case avsc.Array:
		return container("array<", n.Items, path)
	case avsc.Map:
		return container("map<string,", n.Values, path)
	case avsc.Union:
		return unionType(n, path)
	}
	return scalarType(n, path)
}

func container(prefix string, elem *avsc.Node, path string) (string, error) {
	t, err := hiveType(elem, path)
	if err != nil {
		return "", err
	}
	return prefix + t + ">", nil
}

// kindTypes are the Hive types of the Avro types without a logical type.
var kindTypes = map[avsc.Kind]string{
	avsc.Null: "void", avsc.Boolean: "boolean", avsc.Int: "int", avsc.Long: "bigint",
	avsc.Float: "float", avsc.Double: "double", avsc.Bytes: "binary", avsc.String: "string",
	avsc.Enum: "string", avsc.Fixed: "binary",
}

// logicalTypes are the logical types with a Hive type of their own (decimal
// aside); the others (time-*, uuid) keep their base type's.
var logicalTypes = map[avsc.Logical]string{
	avsc.Date:                 "date",
	avsc.TimestampMillis:      "timestamp",
	avsc.TimestampMicros:      "timestamp",
	avsc.LocalTimestampMillis: "timestamp",
	avsc.LocalTimestampMicros: "timestamp",
}

// scalarType maps a primitive, enum or fixed. avsc has already dropped
// logical types that are misplaced or invalid (Avro spec), so only Hive's
// own limit, decimal precision, is checked here.
func scalarType(n *avsc.Node, path string) (string, error) {
	if n.Logical == avsc.Decimal {
		if n.Precision > maxDecimalPrecision {
			return "", columnError(path, fmt.Sprintf("decimal precision %d exceeds Hive's maximum %d", n.Precision, maxDecimalPrecision))
		}
		return fmt.Sprintf("decimal(%d,%d)", n.Precision, n.Scale), nil
	}
	if t, ok := logicalTypes[n.Logical]; ok {
		return t, nil
	}
	return kindTypes[n.Kind], nil
}

// unionType keeps the non-null branches: one becomes the type (nullable
// column), several a uniontype.
func unionType(n *avsc.Node, path string) (string, error) {
	var types []string
	for _, b := range n.Branches {
		if b.Kind == avsc.Null {
			continue
		}
		t, err := hiveType(b, path)
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

func structOf(fields []field) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.name + ":" + f.typ
	}
	return "struct<" + strings.Join(parts, ",") + ">"
}

// structFields maps the fields of a record, applying Hive's rules that
// Avro lacks: at least one field, names Hive accepts (after the same
// '.'/'-' replacement as table names), unique regardless of case.
func structFields(rec *avsc.Node, path string) ([]field, error) {
	if len(rec.Fields) == 0 {
		return nil, columnError(path, fmt.Sprintf("record %s has no fields (Hive has no empty struct)", rec.Name))
	}
	fields := make([]field, 0, len(rec.Fields))
	seen := map[string]bool{}
	for _, f := range rec.Fields {
		name := sanitize(f.Name)
		if !hiveName.MatchString(name) {
			return nil, columnError(join(path, f.Name), fmt.Sprintf("invalid field name %q", f.Name))
		}
		fpath := join(path, name)
		t, err := hiveType(f.Type, fpath)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(name)
		if seen[key] {
			return nil, columnError(fpath, "duplicate field name (Hive names ignore case)")
		}
		seen[key] = true
		fields = append(fields, field{name: name, typ: t, doc: f.Doc})
	}
	return fields, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
