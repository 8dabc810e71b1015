package parquet

// The writer as it was before WriteDatum decoded binary directly: goavro
// native values converted by column. It is the oracle of
// TestDifferential; do not change it to make a test pass.

import (
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// column (the writer before it decoded binary directly; kept as the
// oracle of the differential tests) converts goavro native values of one Avro type into an Arrow
// builder. check validates a whole value first, so that put never fails
// half-way through a row and leaves the builders of a record uneven: a
// bad record is rejected and the file stays usable.
type column interface {
	check(v any, path string) error
	put(b array.Builder, v any)
}

func wrongType(path string, v any, want string) error {
	return &format.ValueError{Path: path, Msg: fmt.Sprintf("%T is not %s", v, want)}
}

// unionValue returns the value inside goavro's map{branch: value}.
func unionValue(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, false
	}
	for _, inner := range m {
		return inner, true
	}
	return nil, false
}

type optional struct{ inner column }

func (c optional) check(v any, path string) error {
	if v == nil {
		return nil
	}
	inner, ok := unionValue(v)
	if !ok {
		return wrongType(path, v, "a nullable union value")
	}
	return c.inner.check(inner, path)
}

func (c optional) put(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	inner, _ := unionValue(v)
	c.inner.put(b, inner)
}

type unwrap struct{ inner column }

func (c unwrap) check(v any, path string) error {
	if v == nil {
		return c.inner.check(nil, path)
	}
	inner, ok := unionValue(v)
	if !ok {
		return wrongType(path, v, "a union value")
	}
	return c.inner.check(inner, path)
}

func (c unwrap) put(b array.Builder, v any) {
	if v != nil {
		v, _ = unionValue(v)
	}
	c.inner.put(b, v)
}

type nullColumn struct{}

func (nullColumn) check(v any, path string) error {
	if v != nil {
		return wrongType(path, v, "null")
	}
	return nil
}
func (nullColumn) put(b array.Builder, _ any) { b.AppendNull() }

// is checks the Go type of a primitive value.
func is[T any](v any, path, want string) error {
	if _, ok := v.(T); !ok {
		return wrongType(path, v, want)
	}
	return nil
}

type boolColumn struct{}

func (boolColumn) check(v any, path string) error { return is[bool](v, path, "boolean") }
func (boolColumn) put(b array.Builder, v any)     { b.(*array.BooleanBuilder).Append(v.(bool)) }

type int32Column struct{}

func (int32Column) check(v any, path string) error { return is[int32](v, path, "int") }
func (int32Column) put(b array.Builder, v any)     { b.(*array.Int32Builder).Append(v.(int32)) }

// int64Column also takes local-timestamp-*, which goavro leaves as longs.
type int64Column struct{}

func (int64Column) check(v any, path string) error { return is[int64](v, path, "long") }
func (int64Column) put(b array.Builder, v any) {
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	}
}

type float32Column struct{}

func (float32Column) check(v any, path string) error { return is[float32](v, path, "float") }
func (float32Column) put(b array.Builder, v any)     { b.(*array.Float32Builder).Append(v.(float32)) }

type float64Column struct{}

func (float64Column) check(v any, path string) error { return is[float64](v, path, "double") }
func (float64Column) put(b array.Builder, v any)     { b.(*array.Float64Builder).Append(v.(float64)) }

type bytesColumn struct{}

func (bytesColumn) check(v any, path string) error { return is[[]byte](v, path, "bytes") }
func (bytesColumn) put(b array.Builder, v any)     { b.(*array.BinaryBuilder).Append(v.([]byte)) }

type stringColumn struct{}

func (stringColumn) check(v any, path string) error { return is[string](v, path, "string") }
func (stringColumn) put(b array.Builder, v any)     { b.(*array.StringBuilder).Append(v.(string)) }

type fixedColumn struct{ size int }

func (c fixedColumn) check(v any, path string) error {
	x, ok := v.([]byte)
	if !ok || len(x) != c.size {
		return wrongType(path, v, fmt.Sprintf("fixed(%d)", c.size))
	}
	return nil
}
func (fixedColumn) put(b array.Builder, v any) { b.(*array.FixedSizeBinaryBuilder).Append(v.([]byte)) }

type dateColumn struct{}

func (dateColumn) check(v any, path string) error { return is[time.Time](v, path, "a date") }
func (dateColumn) put(b array.Builder, v any) {
	b.(*array.Date32Builder).Append(arrow.Date32(floorDiv(v.(time.Time).Unix(), 86400)))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

type timeColumn struct{ unit arrow.TimeUnit }

func (timeColumn) check(v any, path string) error { return is[time.Duration](v, path, "a time of day") }
func (c timeColumn) put(b array.Builder, v any) {
	d := v.(time.Duration)
	if c.unit == arrow.Millisecond {
		b.(*array.Int32Builder).Append(int32(d.Milliseconds()))
		return
	}
	b.(*array.Int64Builder).Append(d.Microseconds())
}

type timestampColumn struct{ unit arrow.TimeUnit }

func (c timestampColumn) check(v any, path string) error {
	t, ok := v.(time.Time)
	if !ok {
		return wrongType(path, v, "a timestamp")
	}
	if c.unit == arrow.Nanosecond && (t.Before(minNanos) || t.After(maxNanos)) {
		return &format.ValueError{Path: path, Msg: fmt.Sprintf("timestamp %s outside the INT96 range %s..%s (use int64 timestamps)",
			t.Format(time.RFC3339Nano), minNanos.Format(time.RFC3339), maxNanos.Format(time.RFC3339))}
	}
	return nil
}

func (c timestampColumn) put(b array.Builder, v any) {
	t := v.(time.Time)
	var ts int64
	switch c.unit {
	case arrow.Millisecond:
		ts = t.UnixMilli()
	case arrow.Microsecond:
		ts = t.UnixMicro()
	default:
		ts = t.UnixNano()
	}
	b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
}

type decimalColumn struct {
	precision, scale int
	wide             bool // decimal256
}

func (c decimalColumn) unscaled(v any, path string) (*big.Int, error) {
	r, ok := v.(*big.Rat)
	if !ok {
		return nil, wrongType(path, v, "a decimal")
	}
	u, err := avsc.Unscaled(r, c.scale)
	if err != nil {
		return nil, &format.ValueError{Path: path, Msg: err.Error()}
	}
	if digits(u) > c.precision {
		return nil, &format.ValueError{Path: path, Msg: fmt.Sprintf("decimal %s has more than %d digits",
			avsc.DecimalString(u, c.scale), c.precision)}
	}
	return u, nil
}

func (c decimalColumn) check(v any, path string) error {
	_, err := c.unscaled(v, path)
	return err
}

func (c decimalColumn) put(b array.Builder, v any) {
	u, _ := c.unscaled(v, "")
	if c.wide {
		b.(*array.Decimal256Builder).Append(decimal256.FromBigInt(u))
		return
	}
	b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(u))
}

type structColumn struct {
	names  []string
	fields []column
}

func (c structColumn) check(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, v, "a record")
	}
	for i, f := range c.fields {
		if err := f.check(m[c.names[i]], path+"."+c.names[i]); err != nil {
			return err
		}
	}
	return nil
}

func (c structColumn) put(b array.Builder, v any) {
	sb := b.(*array.StructBuilder)
	sb.Append(true)
	c.putFields(func(i int) array.Builder { return sb.FieldBuilder(i) }, v.(map[string]any))
}

func (c structColumn) putFields(builder func(int) array.Builder, m map[string]any) {
	for i, f := range c.fields {
		f.put(builder(i), m[c.names[i]])
	}
}

type listColumn struct{ elem column }

func (c listColumn) check(v any, path string) error {
	items, ok := v.([]any)
	if !ok {
		return wrongType(path, v, "an array")
	}
	for _, item := range items {
		if err := c.elem.check(item, path+"[]"); err != nil {
			return err
		}
	}
	return nil
}

func (c listColumn) put(b array.Builder, v any) {
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder()
	for _, item := range v.([]any) {
		c.elem.put(vb, item)
	}
}

type mapColumn struct{ value column }

func (c mapColumn) check(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, v, "a map")
	}
	for _, item := range m {
		if err := c.value.check(item, path+"{}"); err != nil {
			return err
		}
	}
	return nil
}

func (c mapColumn) put(b array.Builder, v any) {
	mb := b.(*array.MapBuilder)
	mb.Append(true)
	m := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic files
	kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder()
	for _, k := range keys {
		kb.Append(k)
		c.value.put(ib, m[k])
	}
}

// nativeArrowSchema maps the top-level record to an Arrow schema (see the
// package doc for the mapping) and compiles the column converters.
func nativeArrowSchema(root *avsc.Node, timestamps string) (*arrow.Schema, []column, error) {
	m := nativeMapper{int96: timestamps == TimestampsInt96}
	fields := make([]arrow.Field, len(root.Fields))
	cols := make([]column, len(root.Fields))
	for i, f := range root.Fields {
		af, col, err := m.field(f.Name, f.Type, f.Name)
		if err != nil {
			return nil, nil, err
		}
		fields[i], cols[i] = af, col
	}
	return arrow.NewSchema(fields, nil), cols, nil
}

type nativeMapper struct{ int96 bool }

// field maps a named value (record field, list element, map value):
// ["null", T] makes it nullable.
func (m nativeMapper) field(name string, n *avsc.Node, path string) (arrow.Field, column, error) {
	nullable, single := false, false
	switch inner, ok := n.Nullable(); {
	case ok:
		n, nullable = inner, true
	case n.Kind == avsc.Union && len(n.Branches) == 1:
		n, single = n.Branches[0], true
	case n.Kind == avsc.Union:
		return arrow.Field{}, nil, &avsc.SchemaError{Path: path,
			Msg: fmt.Sprintf("union of %d types cannot be a Parquet column (only [\"null\", T] maps)", len(n.Branches))}
	}
	t, col, err := m.typ(n, path)
	if err != nil {
		return arrow.Field{}, nil, err
	}
	switch {
	case nullable:
		col = optional{col}
	case n.Kind == avsc.Null:
		nullable = true // arrow's null type is always nullable
	}
	if single {
		col = unwrap{col} // goavro gives map{branch: value}
	}
	return arrow.Field{Name: name, Type: t, Nullable: nullable}, col, nil
}

func (m nativeMapper) typ(n *avsc.Node, path string) (arrow.DataType, column, error) {
	if n.Logical != avsc.None {
		return m.logical(n, path)
	}
	switch n.Kind {
	case avsc.Null:
		return arrow.Null, nullColumn{}, nil
	case avsc.Boolean:
		return arrow.FixedWidthTypes.Boolean, boolColumn{}, nil
	case avsc.Int:
		return arrow.PrimitiveTypes.Int32, int32Column{}, nil
	case avsc.Long:
		return arrow.PrimitiveTypes.Int64, int64Column{}, nil
	case avsc.Float:
		return arrow.PrimitiveTypes.Float32, float32Column{}, nil
	case avsc.Double:
		return arrow.PrimitiveTypes.Float64, float64Column{}, nil
	case avsc.Bytes:
		return arrow.BinaryTypes.Binary, bytesColumn{}, nil
	case avsc.String, avsc.Enum:
		return arrow.BinaryTypes.String, stringColumn{}, nil
	case avsc.Fixed:
		if n.Size < 1 {
			return nil, nil, &avsc.SchemaError{Path: path, Msg: "fixed of size 0 cannot be a Parquet column"}
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: n.Size}, fixedColumn{size: n.Size}, nil
	case avsc.Record:
		return m.record(n, path)
	case avsc.Array:
		ef, col, err := m.field("element", n.Items, path+"[]")
		if err != nil {
			return nil, nil, err
		}
		return arrow.ListOfField(ef), listColumn{elem: col}, nil
	case avsc.Map:
		vf, col, err := m.field("value", n.Values, path+"{}")
		if err != nil {
			return nil, nil, err
		}
		kf := arrow.Field{Name: "key", Type: arrow.BinaryTypes.String}
		return arrow.MapOfFields(kf, vf), mapColumn{value: col}, nil
	}
	return nil, nil, &avsc.SchemaError{Path: path, Msg: "a union inside a union cannot be a Parquet column"}
}

func (m nativeMapper) record(n *avsc.Node, path string) (arrow.DataType, column, error) {
	if len(n.Fields) == 0 {
		return nil, nil, &avsc.SchemaError{Path: path, Msg: fmt.Sprintf("record %s has no fields; Parquet groups need one", n.Name)}
	}
	fields := make([]arrow.Field, len(n.Fields))
	cols := make([]column, len(n.Fields))
	names := make([]string, len(n.Fields))
	for i, f := range n.Fields {
		af, col, err := m.field(f.Name, f.Type, path+"."+f.Name)
		if err != nil {
			return nil, nil, err
		}
		fields[i], cols[i], names[i] = af, col, f.Name
	}
	return arrow.StructOf(fields...), structColumn{names: names, fields: cols}, nil
}

func (m nativeMapper) logical(n *avsc.Node, path string) (arrow.DataType, column, error) {
	switch n.Logical {
	case avsc.Date:
		return arrow.FixedWidthTypes.Date32, dateColumn{}, nil
	case avsc.TimeMillis:
		// Plain ints: Spark 4.2 rejects INT32 TIME(MILLIS) ("Illegal
		// Parquet type"), and hive.HiveColumns declares int/bigint.
		return arrow.PrimitiveTypes.Int32, timeColumn{unit: arrow.Millisecond}, nil
	case avsc.TimeMicros:
		return arrow.PrimitiveTypes.Int64, timeColumn{unit: arrow.Microsecond}, nil
	case avsc.TimestampMillis, avsc.TimestampMicros:
		unit := arrow.Millisecond
		if n.Logical == avsc.TimestampMicros {
			unit = arrow.Microsecond
		}
		if m.int96 {
			unit = arrow.Nanosecond // pqarrow writes INT96 for ns only
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}, timestampColumn{unit: unit}, nil
	case avsc.LocalTimestampMillis:
		return &arrow.TimestampType{Unit: arrow.Millisecond}, int64Column{}, nil
	case avsc.LocalTimestampMicros:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, int64Column{}, nil
	case avsc.UUID:
		return arrow.BinaryTypes.String, stringColumn{}, nil
	case avsc.Decimal:
		return nativeDecimalType(n, path)
	}
	return nil, nil, &avsc.SchemaError{Path: path, Msg: fmt.Sprintf("unmapped logical type %d", n.Logical)}
}

func nativeDecimalType(n *avsc.Node, path string) (arrow.DataType, column, error) {
	p, s := int32(n.Precision), int32(n.Scale)
	col := decimalColumn{precision: n.Precision, scale: n.Scale}
	switch {
	case n.Precision <= maxDecimal128:
		return &arrow.Decimal128Type{Precision: p, Scale: s}, col, nil
	case n.Precision <= maxDecimal256:
		col.wide = true
		return &arrow.Decimal256Type{Precision: p, Scale: s}, col, nil
	}
	return nil, nil, &avsc.SchemaError{Path: path, Msg: fmt.Sprintf("decimal precision %d exceeds %d", n.Precision, maxDecimal256)}
}

// digits is the number of decimal digits of |v| (0 has one digit).
func digits(v *big.Int) int {
	if v.Sign() == 0 {
		return 1
	}
	return len(new(big.Int).Abs(v).String())
}
