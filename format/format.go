// Package format is the contract between the writer and the output file
// formats: a Format creates files of one kind, a RecordWriter writes the
// records of one file. It imports none of the encoders: each of them
// (format/avro, format/parquet, format/json) returns a Format itself, and
// cmd/hdfs-sink chooses one by the name in the connector configuration.
package format

import (
	"errors"
	"io"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// Format creates files of one kind.
type Format interface {
	Name() string
	Extension() string // ".avro"
	NewWriter(w io.Writer, s *schema.Schema) (RecordWriter, error)
}

// RecordWriter writes the records of one file.
type RecordWriter interface {
	WriteDatum(datum []byte) error // binary Avro datum written with s (already validated)
	Flush() error                  // push buffered blocks to w
	BytesBuffered() int            // memory held, for the memory ceiling
	Close() error                  // flush + finish the file; does NOT close w
}

// ValueError says which field held a value the format cannot hold: one
// that does not match its schema type, or lies outside what the file's
// column type stores (an INT96 timestamp past 2262, too many decimal
// digits). Such a record fails the same way every time, so the sink
// treats it as a bad record rather than retrying it.
type ValueError struct {
	Path string // dotted field path
	Msg  string
}

func (e *ValueError) Error() string { return "field " + e.Path + ": " + e.Msg }

// ErrClosed: a RecordWriter was used after Close. Each encoder wraps it
// with its name ("avro: writer closed").
var ErrClosed = errors.New("writer closed")

// Options are an encoder's settings, checked before a Format is made.
type Options interface{ Validate() error }

// Define is the Format named name, with files ending ext, whose writers
// newWriter creates with opts, after checking opts. Encoders return it
// from their constructor, so none repeats the adapter.
func Define[W RecordWriter, O Options](name, ext string, opts O, newWriter func(io.Writer, *schema.Schema, O) (W, error)) (Format, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return defined[W, O]{name: name, ext: ext, opts: opts, newWriter: newWriter}, nil
}

type defined[W RecordWriter, O Options] struct {
	name, ext string
	opts      O
	newWriter func(io.Writer, *schema.Schema, O) (W, error)
}

func (d defined[W, O]) Name() string      { return d.name }
func (d defined[W, O]) Extension() string { return d.ext }

// NewWriter returns a nil interface, not a typed nil, on error.
func (d defined[W, O]) NewWriter(w io.Writer, s *schema.Schema) (RecordWriter, error) {
	rw, err := d.newWriter(w, s, d.opts)
	if err != nil {
		return nil, err
	}
	return rw, nil
}
