package parquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// Decimal precision limits of Arrow's decimal types.
const (
	maxDecimal128 = 38
	maxDecimal256 = 76
)

// arrowSchema maps the top-level record to an Arrow schema (see the
// package doc for the mapping) and compiles a decoder per column.
func arrowSchema(root *avsc.Node, timestamps string) (*arrow.Schema, []decoder, error) {
	m := mapper{int96: timestamps == TimestampsInt96}
	fields := make([]arrow.Field, len(root.Fields))
	cols := make([]decoder, len(root.Fields))
	for i, f := range root.Fields {
		af, col, err := m.field(f.Name, f.Type, f.Name)
		if err != nil {
			return nil, nil, err
		}
		fields[i], cols[i] = af, col
	}
	return arrow.NewSchema(fields, nil), cols, nil
}

type mapper struct{ int96 bool }

// field maps a named value (record field, list element, map value):
// ["null", T] makes it nullable.
func (m mapper) field(name string, n *avsc.Node, path string) (arrow.Field, decoder, error) {
	nullable, single, nullIndex := false, false, 0
	switch inner, ok := n.Nullable(); {
	case ok:
		if n.Branches[0].Kind != avsc.Null {
			nullIndex = 1
		}
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
		col = optionalDec{path: path, nullIndex: nullIndex, inner: col}
	case n.Kind == avsc.Null:
		nullable = true // arrow's null type is always nullable
	}
	if single {
		col = unwrapDec{path: path, inner: col}
	}
	return arrow.Field{Name: name, Type: t, Nullable: nullable}, col, nil
}

func (m mapper) typ(n *avsc.Node, path string) (arrow.DataType, decoder, error) {
	if n.Logical != avsc.None {
		return m.logical(n, path)
	}
	switch n.Kind {
	case avsc.Null:
		return arrow.Null, nullDec{}, nil
	case avsc.Boolean:
		return arrow.FixedWidthTypes.Boolean, boolDec{path}, nil
	case avsc.Int:
		return arrow.PrimitiveTypes.Int32, intDec{path}, nil
	case avsc.Long:
		return arrow.PrimitiveTypes.Int64, longDec{path}, nil
	case avsc.Float:
		return arrow.PrimitiveTypes.Float32, floatDec{path}, nil
	case avsc.Double:
		return arrow.PrimitiveTypes.Float64, doubleDec{path}, nil
	case avsc.Bytes:
		return arrow.BinaryTypes.Binary, bytesDec{path: path}, nil
	case avsc.String:
		return arrow.BinaryTypes.String, bytesDec{path: path, str: true}, nil
	case avsc.Enum:
		return arrow.BinaryTypes.String, newEnumDec(path, n.Symbols), nil
	case avsc.Fixed:
		if n.Size < 1 {
			return nil, nil, &avsc.SchemaError{Path: path, Msg: "fixed of size 0 cannot be a Parquet column"}
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: n.Size}, fixedDec{path: path, size: n.Size}, nil
	case avsc.Record:
		return m.record(n, path)
	case avsc.Array:
		ef, col, err := m.field("element", n.Items, path+"[]")
		if err != nil {
			return nil, nil, err
		}
		return arrow.ListOfField(ef), listDec{path: path, elem: col, zeroWidth: n.Items.MinWidth() == 0}, nil
	case avsc.Map:
		vf, col, err := m.field("value", n.Values, path+"{}")
		if err != nil {
			return nil, nil, err
		}
		kf := arrow.Field{Name: "key", Type: arrow.BinaryTypes.String}
		return arrow.MapOfFields(kf, vf), mapDec{path: path, value: col}, nil
	}
	return nil, nil, &avsc.SchemaError{Path: path, Msg: "a union inside a union cannot be a Parquet column"}
}

func (m mapper) record(n *avsc.Node, path string) (arrow.DataType, decoder, error) {
	if len(n.Fields) == 0 {
		return nil, nil, &avsc.SchemaError{Path: path, Msg: fmt.Sprintf("record %s has no fields; Parquet groups need one", n.Name)}
	}
	fields := make([]arrow.Field, len(n.Fields))
	cols := make([]decoder, len(n.Fields))
	for i, f := range n.Fields {
		af, col, err := m.field(f.Name, f.Type, path+"."+f.Name)
		if err != nil {
			return nil, nil, err
		}
		fields[i], cols[i] = af, col
	}
	return arrow.StructOf(fields...), structDec{fields: cols}, nil
}

func (m mapper) logical(n *avsc.Node, path string) (arrow.DataType, decoder, error) {
	switch n.Logical {
	case avsc.Date:
		return arrow.FixedWidthTypes.Date32, dateDec{intDec{path}}, nil
	case avsc.TimeMillis:
		// Plain ints: Spark 4.2 rejects INT32 TIME(MILLIS) ("Illegal
		// Parquet type"), and hive.HiveColumns declares int/bigint.
		return arrow.PrimitiveTypes.Int32, intDec{path}, nil
	case avsc.TimeMicros:
		return arrow.PrimitiveTypes.Int64, timeMicrosDec{longDec{path}}, nil
	case avsc.TimestampMillis, avsc.TimestampMicros:
		unit := arrow.Millisecond
		if n.Logical == avsc.TimestampMicros {
			unit = arrow.Microsecond
		}
		if m.int96 {
			unit = arrow.Nanosecond // pqarrow writes INT96 for ns only
		}
		dec := timestampDec{longDec: longDec{path}, micros: n.Logical == avsc.TimestampMicros, unit: unit}
		return &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}, dec, nil
	case avsc.LocalTimestampMillis:
		return &arrow.TimestampType{Unit: arrow.Millisecond}, localTimestampDec{longDec{path}}, nil
	case avsc.LocalTimestampMicros:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, localTimestampDec{longDec{path}}, nil
	case avsc.UUID:
		return arrow.BinaryTypes.String, bytesDec{path: path, str: true}, nil
	case avsc.Decimal:
		return decimalType(n, path)
	}
	return nil, nil, &avsc.SchemaError{Path: path, Msg: fmt.Sprintf("unmapped logical type %d", n.Logical)}
}

func decimalType(n *avsc.Node, path string) (arrow.DataType, decoder, error) {
	p, s := int32(n.Precision), int32(n.Scale)
	switch {
	case n.Precision <= maxDecimal128:
		return &arrow.Decimal128Type{Precision: p, Scale: s}, newDecimalDec(path, n, false), nil
	case n.Precision <= maxDecimal256:
		return &arrow.Decimal256Type{Precision: p, Scale: s}, newDecimalDec(path, n, true), nil
	}
	return nil, nil, &avsc.SchemaError{Path: path, Msg: fmt.Sprintf("decimal precision %d exceeds %d", n.Precision, maxDecimal256)}
}
