package json

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// TextName and TextExtension identify the string format: like the
// connector's StringFormat, each value as text followed by "\n", in
// ".txt" files. Newlines inside values are not escaped (as there).
const (
	TextName      = "string"
	TextExtension = ".txt"
)

// textFlushBytes bounds what a text writer holds before writing.
const textFlushBytes = 64 << 10

// ErrNotStringSchema: the string format takes only values whose Avro
// schema is "string" (the connector fails on non-String values too).
var ErrNotStringSchema = errors.New("format string: value schema is not an Avro string")

// NewText returns the string format. It writes Avro string values as
// text; a nil schema means a schemaless topic: each datum is the raw
// Kafka value, written as is.
func NewText() format.Format {
	f, _ := format.Define(TextName, TextExtension, noOptions{}, newTextWriter) // noOptions is always valid
	return f
}

// noOptions: the string format has no settings.
type noOptions struct{}

func (noOptions) Validate() error { return nil }

var _ format.RecordWriter = (*textWriter)(nil)

func newTextWriter(w io.Writer, s *schema.Schema, _ noOptions) (*textWriter, error) {
	if s != nil {
		if t := strings.TrimSpace(s.Codec.CanonicalSchema()); t != `"string"` {
			return nil, fmt.Errorf("%w: schema %d is %s", ErrNotStringSchema, s.ID, t)
		}
	}
	return &textWriter{lines: newLines(w, textFlushBytes, "format string", errTextClosed), s: s}, nil
}

type textWriter struct {
	lines
	s *schema.Schema // nil: raw values
}

var errTextClosed = fmt.Errorf("format string: %w", format.ErrClosed)

func (tw *textWriter) WriteDatum(datum []byte) error {
	if err := tw.usable(); err != nil {
		return err
	}
	if tw.s == nil {
		tw.buf = append(tw.buf, datum...)
	} else {
		v, err := tw.s.Native(datum)
		if err != nil {
			return fmt.Errorf("format string: %w", err)
		}
		str, _ := v.(string) // NewWriter checked the schema is "string"
		tw.buf = append(tw.buf, str...)
	}
	return tw.endLine()
}
