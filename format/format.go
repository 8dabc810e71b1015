// Package format is the contract between the writer and the output file
// formats: a Format creates files of one kind, a RecordWriter writes the
// records of one file. It imports none of the encoders: each of them
// (format/avro, format/parquet, format/json) returns a Format itself, and
// cmd/hdfs-sink chooses one by the name in the connector configuration.
package format

import (
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
