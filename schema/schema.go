// Package schema owns the Confluent side of the data: the wire format
// (magic byte + schema id + datum, wire.go), Avro writer schemas and the
// checks made on datums (schema.go, scan.go, field.go), and schema
// evolution: what a material schema change is, the connector's
// schema.compatibility decision (Compatibility.Decide: same, rotate or
// project, compat.go) and Avro schema resolution of datums (Project,
// project.go, resolve.go, defaults.go), which goavro lacks. Every part
// walks the one Avro model of package avsc, parsed once per Schema
// (model.go). Fetching schemas by id is package registry's; this package
// declares the Registry it is consumed through.
package schema

import (
	"context"
	"fmt"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// Registry resolves schema ids. Implementations retry transient failures
// themselves: an error means the id is unknown (ErrUnknownSchema), the schema
// is unusable (ErrUnsupportedSchema), the registry refuses us for good
// (*registry.Error), or ctx ended. Package registry has the implementations.
type Registry interface {
	SchemaByID(ctx context.Context, id int32) (*Schema, error)
}

// Schema is an Avro writer schema as the registry stores it. It is immutable
// and safe for concurrent use. Build it with New, which parses the text once
// for every use; a Schema built by hand is parsed again each time.
type Schema struct {
	ID    int32
	Text  string // schema JSON exactly as the registry returned it
	Codec *goavro.Codec

	parsed *parsed // what New derived from Text; nil if built by hand
}

// New parses text as an Avro schema registered under id.
func New(id int32, text string) (*Schema, error) {
	codec, err := goavro.NewCodec(text)
	if err != nil {
		return nil, &SchemaError{ID: id, Reason: "invalid Avro schema", Err: err}
	}
	s := &Schema{ID: id, Text: text, Codec: codec}
	s.parsed = newParsed(s)
	return s, nil
}

// Columnar returns the parsed schema as the output formats and Hive map
// it, or the *avsc.SchemaError that says why they cannot (avsc.Read's
// mapErr for Text: the top level is not a record, a record contains
// itself, ...). It is parsed once, in New, not once per file.
func (s *Schema) Columnar() (*avsc.Node, error) {
	p, _ := parse(s)
	switch {
	case p.mapErr != nil:
		return nil, p.mapErr
	case p.readErr != nil:
		return nil, p.readErr
	}
	return p.tree, nil
}

// Validate checks datum against s and fails with a *DatumError
// (ErrCorruptDatum) if it is truncated, malformed or followed by extra bytes.
// Pass-through formats rely on it so that a corrupt record never reaches a
// committed file. It walks the bytes without building values (a full goavro
// decode cost more than half the sink's CPU, docs/benchmarks.md); a schema
// our model cannot read is checked by a full decode instead.
func (s *Schema) Validate(datum []byte) error {
	checked, err := scanDatum(s, datum)
	if checked || err != nil {
		return err
	}
	_, err = s.Native(datum)
	return err
}

// Native decodes datum into goavro's native form (map[string]any for
// records, map{"type": v} for non-null union values).
func (s *Schema) Native(datum []byte) (v any, err error) {
	// goavro has panicked on hostile input in the past; a bad record must be
	// an error the sink can route, never a crash.
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, &DatumError{SchemaID: s.ID, Len: len(datum), Err: fmt.Errorf("decoder panic: %v", r)}
		}
	}()
	// An out-of-memory crash cannot be recovered: check sizes first.
	if err := precheck(s, datum); err != nil {
		return nil, err
	}
	v, rest, err := s.Codec.NativeFromBinary(datum)
	if err != nil {
		return nil, &DatumError{SchemaID: s.ID, Len: len(datum), Err: err}
	}
	if len(rest) != 0 {
		return nil, &DatumError{SchemaID: s.ID, Len: len(datum), Trailing: len(rest)}
	}
	return v, nil
}
