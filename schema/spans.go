package schema

import "github.com/hdfs-sink/hdfs-sink/schema/avsc"

// Tree is the parsed model of s (whatever the formats can map), or the
// *SchemaError saying why our model cannot read it. Transforms compile
// their per-schema plans from it.
func (s *Schema) Tree() (*avsc.Node, error) {
	p, err := parse(s)
	if err != nil {
		return nil, err
	}
	return p.tree, nil
}

// FieldSpans splits datum, a record of s, into its top-level fields'
// encodings, appended to dst in field order. Avro writes a record as its
// fields' encodings one after another, so a transform that drops, renames,
// reorders or appends top-level fields copies these spans and never decodes
// them. The datum is checked as Validate checks it (*DatumError).
func FieldSpans(s *Schema, datum []byte, dst [][]byte) ([][]byte, error) {
	tree, err := s.Tree()
	if err != nil {
		return nil, err
	}
	if tree.Kind != avsc.Record {
		return nil, &SchemaError{ID: s.ID, Reason: "the top level is not a record"}
	}
	b := datum
	for i := range tree.Fields {
		rest, err := scan(tree.Fields[i].Type, b, 1)
		if err != nil {
			return nil, &DatumError{SchemaID: s.ID, Len: len(datum), Err: err}
		}
		dst = append(dst, b[:len(b)-len(rest)])
		b = rest
	}
	if len(b) != 0 {
		return nil, &DatumError{SchemaID: s.ID, Len: len(datum), Trailing: len(b)}
	}
	return dst, nil
}

// ScanFields checks that b starts with the values of fields [from, to) of
// record rec, one after the other, and returns the rest: the span of a run
// of top-level fields. The nesting counts from the fields' depth in the
// record, as Validate counts it, so scanning a record's fields run by run
// checks what Validate checks.
func ScanFields(rec *avsc.Node, from, to int, b []byte) ([]byte, error) {
	n := len(b)
	for i := from; i < to; i++ {
		rest, err := scan(rec.Fields[i].Type, b, 1)
		if err != nil {
			return nil, &DatumError{Len: n, Err: err}
		}
		b = rest
	}
	return b, nil
}
