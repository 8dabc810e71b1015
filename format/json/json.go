// Package json owns the JSON Lines output format: one JSON object per
// record and line, in files ending ".json". Records are decoded from
// binary Avro and written as plain JSON, not Avro's JSON encoding:
//
//   - record → object with the fields in schema order; map → object with
//     keys sorted; array → array; enum → its symbol as a string.
//   - union → the bare value of the branch (null, or the value), never
//     Avro-JSON's {"type": value} tagging.
//   - int, long → numbers; float, double → numbers, except NaN and ±Inf,
//     which JSON lacks, written as the strings "NaN", "Infinity",
//     "-Infinity".
//   - string and uuid → strings; invalid UTF-8 becomes U+FFFD.
//   - bytes and fixed → standard base64 with padding.
//   - date → "2024-02-29".
//   - timestamp-millis → "1969-12-31T23:59:59.999Z" and timestamp-micros →
//     "1969-12-31T23:59:59.999999Z": UTC instants, with as many fractional
//     digits as the type has.
//   - local-timestamp-millis/-micros → the same without the zone
//     ("2024-02-29T12:00:00.000"): wall-clock values, no instant.
//   - time-millis → "23:59:59.999", time-micros → "23:59:59.999999".
//   - decimal (bytes or fixed) → an exact string keeping the scale:
//     "-12.30", "0.005", "42" for scale 0.
//
// Years outside 0000–9999 are written as Go's time package formats them.
//
// Schemaless values (JsonConverter with schemas.enable=false) are JSON
// already: each is written as its text, compacted onto one line.
//
// The package also owns the string format (NewText): values as plain
// text, one per line, in files ending ".txt".
package json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// Name and Extension identify the format.
const (
	Name      = "json"
	Extension = ".json"
)

// DefaultBufferBytes is how many encoded bytes a Writer holds before it
// writes them to the underlying writer.
const DefaultBufferBytes = 64 << 10

// Options configure a Writer. The zero value is valid.
type Options struct {
	// BufferBytes: encoded lines are written once this many are pending;
	// default DefaultBufferBytes.
	BufferBytes int
}

// Validate checks opts.
func (o Options) Validate() error {
	if o.BufferBytes < 0 {
		return fmt.Errorf("json: buffer size must not be negative (%d)", o.BufferBytes)
	}
	return nil
}

// New returns the JSON Lines format configured by opts, which it
// validates.
func New(opts Options) (format.Format, error) {
	return format.Define(Name, Extension, opts, NewWriter)
}

var _ format.RecordWriter = (*Writer)(nil)

// Writer writes one JSON Lines file. It is not safe for concurrent use.
// After an error from the underlying writer every method returns it.
type Writer struct {
	lines
	s    *schema.Schema // nil: schemaless JSON values
	root *avsc.Node
	// compact is where a schemaless value is compacted (reused).
	compact bytes.Buffer
}

// NewWriter returns a Writer of datums encoded with s; a nil s means
// schemaless values (JsonConverter with schemas.enable=false), each datum
// the JSON text of a value.
func NewWriter(w io.Writer, s *schema.Schema, opts Options) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.BufferBytes == 0 {
		opts.BufferBytes = DefaultBufferBytes
	}
	if s == nil {
		return &Writer{lines: newLines(w, opts.BufferBytes, "json", errClosed)}, nil
	}
	root, err := s.Columnar()
	if err != nil {
		return nil, fmt.Errorf("json: schema %d: %w", s.ID, err)
	}
	return &Writer{lines: newLines(w, opts.BufferBytes, "json", errClosed), s: s, root: root}, nil
}

// errClosed: the writer was closed.
var errClosed = fmt.Errorf("json: %w", format.ErrClosed)

// WriteDatum decodes datum with the file's schema and appends one line.
// A datum that does not decode, or a value that does not fit its schema,
// is an error and nothing is appended.
func (w *Writer) WriteDatum(datum []byte) error {
	if err := w.usable(); err != nil {
		return err
	}
	if w.s == nil {
		return w.writeJSON(datum)
	}
	native, err := w.s.Native(datum)
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	start := len(w.buf)
	w.buf, err = Append(w.buf, w.root, native)
	if err != nil {
		w.buf = w.buf[:start]
		return fmt.Errorf("json: schema %d: %w", w.s.ID, err)
	}
	return w.endLine()
}

// writeJSON appends a schemaless value's JSON text as one line, as the
// producer wrote it: keys keep their order and numbers their text
// (Connect parses and writes them again, in a HashMap's order and as
// doubles). The converter checked the text is JSON (convert.JSON), so a
// text without a line break is appended as it is: scanning it again cost
// more than the converter's check (3.3 µs of 5.5 per 1 KB value). A value
// a producer pretty-printed over several lines is compacted, since it
// must not become several lines; a line break outside a string is
// whitespace, and inside one JSON allows it only escaped.
func (w *Writer) writeJSON(text []byte) error {
	if bytes.IndexByte(text, '\n') < 0 && bytes.IndexByte(text, '\r') < 0 {
		w.buf = append(w.buf, text...)
		return w.endLine()
	}
	w.compact.Reset()
	if err := json.Compact(&w.compact, text); err != nil {
		return fmt.Errorf("json: a schemaless value is not JSON: %w", err)
	}
	w.buf = append(w.buf, w.compact.Bytes()...)
	return w.endLine()
}
