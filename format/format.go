// Package format owns the output file formats: the Format and RecordWriter
// contracts the writer uses, the lookup of a format by the name used in
// configuration, and the small "string" format. Encoders live in
// subpackages (format/avro, format/parquet, format/json).
package format

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	jsonfmt "github.com/hdfs-sink/hdfs-sink/format/json"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
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

// ErrUnknownFormat: no format has that name.
var ErrUnknownFormat = errors.New("format: unknown format")

// Config holds the per-format settings from the connector configuration.
// The zero value means each format's defaults.
type Config struct {
	Avro    avro.Options    // avro.codec and block sizing
	Parquet parquet.Options // parquet.codec, row-group size, timestamps
	JSON    jsonfmt.Options // write buffering
}

// confluentClasses maps the connector's format.class values to our names,
// so an existing connector JSON works unchanged.
var confluentClasses = map[string]string{
	"io.confluent.connect.hdfs.avro.AvroFormat":       avro.Name,
	"io.confluent.connect.hdfs.parquet.ParquetFormat": parquet.Name,
	"io.confluent.connect.hdfs.json.JsonFormat":       jsonfmt.Name,
	"io.confluent.connect.hdfs.string.StringFormat":   StringName,
}

// Lookup returns the named format with default settings. name is a short
// name (avro, parquet, json, string) or the connector's format.class.
func Lookup(name string) (Format, error) { return New(name, Config{}) }

// New returns the named format configured by cfg.
func New(name string, cfg Config) (Format, error) {
	key := strings.TrimSpace(name)
	if alias, ok := confluentClasses[key]; ok {
		key = alias
	}
	var (
		f   Format
		err error
	)
	switch strings.ToLower(key) {
	case avro.Name:
		f, err = avroFormat{opts: cfg.Avro}, cfg.Avro.Validate()
	case parquet.Name:
		f, err = parquetFormat{opts: cfg.Parquet}, cfg.Parquet.Validate()
	case jsonfmt.Name:
		f, err = jsonFormat{opts: cfg.JSON}, cfg.JSON.Validate()
	case StringName:
		f = stringFormat{}
	default:
		return nil, fmt.Errorf("%w %q (supported: avro, parquet, json, string)", ErrUnknownFormat, name)
	}
	if err != nil {
		return nil, fmt.Errorf("format %q: %w", name, err)
	}
	return f, nil
}

// The adapters below keep the subpackages free of this package, so that
// Lookup can live here without an import cycle. Each returns a nil
// interface, not a typed nil, on error.

type avroFormat struct{ opts avro.Options }

var (
	_ RecordWriter = (*avro.Writer)(nil)
	_ RecordWriter = (*parquet.Writer)(nil)
	_ RecordWriter = (*jsonfmt.Writer)(nil)
)

func (avroFormat) Name() string      { return avro.Name }
func (avroFormat) Extension() string { return avro.Extension }

func (f avroFormat) NewWriter(w io.Writer, s *schema.Schema) (RecordWriter, error) {
	aw, err := avro.NewWriter(w, s, f.opts)
	if err != nil {
		return nil, err
	}
	return aw, nil
}

type parquetFormat struct{ opts parquet.Options }

func (parquetFormat) Name() string      { return parquet.Name }
func (parquetFormat) Extension() string { return parquet.Extension }

func (f parquetFormat) NewWriter(w io.Writer, s *schema.Schema) (RecordWriter, error) {
	pw, err := parquet.NewWriter(w, s, f.opts)
	if err != nil {
		return nil, err
	}
	return pw, nil
}

type jsonFormat struct{ opts jsonfmt.Options }

func (jsonFormat) Name() string      { return jsonfmt.Name }
func (jsonFormat) Extension() string { return jsonfmt.Extension }

func (f jsonFormat) NewWriter(w io.Writer, s *schema.Schema) (RecordWriter, error) {
	jw, err := jsonfmt.NewWriter(w, s, f.opts)
	if err != nil {
		return nil, err
	}
	return jw, nil
}

// StringName and StringExtension identify the string format: like the
// connector's StringFormat, each value as text followed by "\n", in
// ".txt" files. Newlines inside values are not escaped (as there).
const (
	StringName      = "string"
	StringExtension = ".txt"
)

// stringFlushBytes bounds what a string writer holds before writing.
const stringFlushBytes = 64 << 10

// ErrNotStringSchema: the string format takes only values whose Avro
// schema is "string" (the connector fails on non-String values too).
var ErrNotStringSchema = errors.New("format string: value schema is not an Avro string")

// stringFormat writes Avro string values as text. A nil schema means a
// schemaless topic: each datum is the raw Kafka value, written as is.
type stringFormat struct{}

func (stringFormat) Name() string      { return StringName }
func (stringFormat) Extension() string { return StringExtension }

func (stringFormat) NewWriter(w io.Writer, s *schema.Schema) (RecordWriter, error) {
	if s != nil {
		if t := strings.TrimSpace(s.Codec.CanonicalSchema()); t != `"string"` {
			return nil, fmt.Errorf("%w: schema %d is %s", ErrNotStringSchema, s.ID, t)
		}
	}
	return &stringWriter{w: w, s: s}, nil
}

type stringWriter struct {
	w      io.Writer
	s      *schema.Schema // nil: raw values
	buf    []byte
	err    error
	closed bool
}

func (sw *stringWriter) WriteDatum(datum []byte) error {
	if err := sw.usable(); err != nil {
		return err
	}
	if sw.s == nil {
		sw.buf = append(sw.buf, datum...)
	} else {
		v, err := sw.s.Native(datum)
		if err != nil {
			return fmt.Errorf("format string: %w", err)
		}
		str, _ := v.(string) // NewWriter checked the schema is "string"
		sw.buf = append(sw.buf, str...)
	}
	sw.buf = append(sw.buf, '\n')
	if len(sw.buf) >= stringFlushBytes {
		return sw.Flush()
	}
	return nil
}

func (sw *stringWriter) Flush() error {
	if err := sw.usable(); err != nil {
		return err
	}
	if len(sw.buf) == 0 {
		return nil
	}
	if _, err := sw.w.Write(sw.buf); err != nil {
		sw.err = fmt.Errorf("format string: write %d bytes: %w", len(sw.buf), err)
		return sw.err
	}
	sw.buf = sw.buf[:0]
	return nil
}

func (sw *stringWriter) BytesBuffered() int { return len(sw.buf) }

func (sw *stringWriter) Close() error {
	if sw.closed {
		return sw.err
	}
	err := sw.Flush()
	sw.closed, sw.buf = true, nil
	return err
}

var errStringClosed = errors.New("format string: writer closed")

func (sw *stringWriter) usable() error {
	if sw.err != nil {
		return sw.err
	}
	if sw.closed {
		return errStringClosed
	}
	return nil
}
