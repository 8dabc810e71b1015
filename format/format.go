// Package format owns the output file formats: the Format and RecordWriter
// contracts the writer uses, and the lookup of a format by the name used in
// configuration. Encoders live in subpackages (format/avro).
package format

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
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
	Avro avro.Options // avro.codec and block sizing
}

// confluentClasses maps the connector's format.class values to our names,
// so an existing connector JSON works unchanged.
var confluentClasses = map[string]string{
	"io.confluent.connect.hdfs.avro.AvroFormat": avro.Name,
}

// Lookup returns the named format with default settings. name is "avro" or
// the connector's format.class.
func Lookup(name string) (Format, error) { return New(name, Config{}) }

// New returns the named format configured by cfg.
func New(name string, cfg Config) (Format, error) {
	key := strings.TrimSpace(name)
	if alias, ok := confluentClasses[key]; ok {
		key = alias
	}
	switch strings.ToLower(key) {
	case avro.Name:
		if err := cfg.Avro.Validate(); err != nil {
			return nil, fmt.Errorf("format %q: %w", name, err)
		}
		return avroFormat{opts: cfg.Avro}, nil
	default:
		return nil, fmt.Errorf("%w %q (supported: avro)", ErrUnknownFormat, name)
	}
}

// avroFormat adapts format/avro, which does not import this package so
// that Lookup can live here without an import cycle.
type avroFormat struct{ opts avro.Options }

var _ RecordWriter = (*avro.Writer)(nil)

func (avroFormat) Name() string      { return avro.Name }
func (avroFormat) Extension() string { return avro.Extension }

func (f avroFormat) NewWriter(w io.Writer, s *schema.Schema) (RecordWriter, error) {
	aw, err := avro.NewWriter(w, s, f.opts)
	if err != nil {
		return nil, err
	}
	return aw, nil
}
