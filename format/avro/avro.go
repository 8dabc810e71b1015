// Package avro owns the Avro Object Container File writer. It appends the
// binary datums from Kafka as they are, without decoding and re-encoding
// them: a file is the header (magic, metadata with avro.schema and
// avro.codec, sync marker) followed by blocks of (record count, byte size,
// the concatenated datums after the codec, sync marker), per the Avro 1.11
// specification. Every datum in one file must be written with the file's
// schema; the caller starts a new file when the schema changes.
package avro

import (
	"errors"
	"fmt"
	"math"

	"github.com/hdfs-sink/hdfs-sink/format"
)

// Name and Extension identify the format.
const (
	Name      = "avro"
	Extension = ".avro"
)

// DefaultBlockBytes is the default uncompressed size at which a block is
// emitted; Java's DataFileWriter uses a similar 64000-byte sync interval.
const DefaultBlockBytes = 64 << 10

// maxBlockRecords keeps the count within what readers accept (goavro and
// Java read it into an int32-sized value).
const maxBlockRecords = math.MaxInt32

// ErrUnsupportedCodec: avro.codec names a codec this writer lacks.
var ErrUnsupportedCodec = errors.New("avro: unsupported codec")

// errClosed: the writer was closed.
var errClosed = fmt.Errorf("avro: %w", format.ErrClosed)

// Options configure a Writer. The zero value is valid.
type Options struct {
	// Codec is the connector's avro.codec: "null" (default, also ""),
	// "deflate" or "snappy".
	Codec string
	// BlockBytes emits a block once its uncompressed datums reach this
	// size; default DefaultBlockBytes.
	BlockBytes int
	// BlockRecords emits a block once it holds this many records; 0 means
	// no count limit.
	BlockRecords int
	// SyncMarker is the file's 16-byte sync marker; zero means random,
	// which the spec requires for real files. Tests fix it.
	SyncMarker [16]byte
}

// Validate checks opts without creating a writer.
func (o Options) Validate() error {
	if _, err := newCompressor(o.Codec); err != nil {
		return err
	}
	if o.BlockBytes < 0 || o.BlockRecords < 0 {
		return fmt.Errorf("avro: block limits must not be negative (bytes %d, records %d)", o.BlockBytes, o.BlockRecords)
	}
	return nil
}

// New returns the Avro format configured by opts, which it validates.
func New(opts Options) (format.Format, error) {
	return format.Define(Name, Extension, opts, NewWriter)
}
