// Package parquet owns the Parquet output format: it decodes each binary
// Avro datum straight into Arrow column builders (no goavro values) and
// writes them, through Apache arrow-go's pqarrow, into Parquet files
// that Hive 3.1 and Spark read with real SQL types.
//
// Type mapping (Avro → Parquet physical type / annotation):
//
//   - record → group, fields in Avro order (also the top level); array →
//     LIST (3-level, element "element"); map → MAP with UTF8 keys.
//   - ["null", T] (either order) → optional T; fields of other types are
//     required. A union with more than one non-null branch cannot be a
//     column: NewWriter fails with a *avsc.SchemaError naming the field.
//   - boolean, int, long, float, double → BOOLEAN, INT32, INT64, FLOAT,
//     DOUBLE; string, enum, uuid → BYTE_ARRAY UTF8; bytes → BYTE_ARRAY;
//     fixed → FIXED_LEN_BYTE_ARRAY(size).
//   - date → INT32 DATE. time-millis → INT32 and time-micros → INT64
//     without a TIME annotation (milliseconds/microseconds after
//     midnight): Spark 4.2 fails on the whole file for INT32 TIME(MILLIS)
//     ("Illegal Parquet type"), and Hive has no TIME type
//     (hive.HiveColumns declares these columns int and bigint).
//   - timestamp-millis/-micros are UTC instants. By default (Timestamps
//     "int96") they are written as INT96, the only timestamp encoding
//     Hive 3.1 reads as TIMESTAMP; Spark reads it as TIMESTAMP too. The
//     value is the UTC wall clock: Hive 3.1 skips its time-zone
//     conversion for files not written by parquet-mr and shows UTC; Spark
//     treats INT96 as a UTC instant shown in the session time zone. INT96
//     holds nanoseconds, so values must lie within 1677-09-21 and
//     2262-04-11 (others fail WriteDatum). Timestamps "int64" writes INT64
//     TIMESTAMP(isAdjustedToUTC=true, MILLIS|MICROS) instead (Spark, Hive
//     4, Trino; not Hive ≤ 3).
//   - local-timestamp-millis/-micros → INT64 TIMESTAMP(isAdjustedToUTC=
//     false, MILLIS|MICROS) (Spark: TIMESTAMP_NTZ).
//   - decimal(p,s) on bytes or fixed → FIXED_LEN_BYTE_ARRAY DECIMAL(p,s)
//     with the minimal width for p, which Hive 3 and Spark both read
//     (p ≤ 38; up to 76 for readers with 256-bit decimals). A value with
//     more than p digits fails WriteDatum.
//   - Invalid logical types are ignored per the Avro specification
//     (avsc), as hive.HiveColumns does, so file and table types agree.
//
// Memory: rows are staged, decoded, in Arrow builders, a batch of at most
// 1 MiB at a time; each batch is encoded into the open row group's column
// writers, which hold it as compressed pages, and its builders' buffers
// are kept for the next batch. Once the writer holds RowGroupBytes (and on
// Flush and Close) the row group is complete and written to w, column by
// column, when the next one starts or the file closes. So RowGroupBytes
// bounds the writer's memory (plus one batch), and a row group's memory is
// what it takes on disk, not its decoded values. Every byte arrow-go
// allocates goes through a counting allocator, so BytesBuffered reports
// what the writer holds, with measured constants for the Go heap its
// column writers hold outside it.
package parquet

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/hdfs-sink/hdfs-sink/format"
)

// Name and Extension identify the format.
const (
	Name      = "parquet"
	Extension = ".parquet"
)

// Defaults for Options.
const (
	DefaultRowGroupBytes = 128 << 20 // parquet-mr's default block size
	DefaultPageBytes     = 64 << 10  // the reference connector's page size
)

// Timestamp encodings for timestamp-millis/-micros.
const (
	TimestampsInt96 = "int96" // default: Hive 3.1 and Spark
	TimestampsInt64 = "int64" // INT64 TIMESTAMP(isAdjustedToUTC=true)
)

// errClosed: the writer was closed.
var errClosed = fmt.Errorf("parquet: %w", format.ErrClosed)

var (
	// ErrUnsupportedCodec: parquet.codec names a codec this writer lacks.
	ErrUnsupportedCodec = errors.New("parquet: unsupported codec")
	// ErrInvalidOption: an option value is out of range.
	ErrInvalidOption = errors.New("parquet: invalid option")
)

// Options configure a Writer. The zero value is valid.
type Options struct {
	// Codec is parquet.codec: "snappy" (default, also ""), "gzip", "zstd",
	// "none" or "uncompressed".
	Codec string
	// RowGroupBytes closes the row group once the writer holds this much
	// memory for it; default DefaultRowGroupBytes.
	RowGroupBytes int
	// PageBytes is the target data page size; default DefaultPageBytes.
	PageBytes int
	// Timestamps is TimestampsInt96 (default, also "") or TimestampsInt64.
	Timestamps string
}

var codecs = map[string]compress.Compression{
	"":             compress.Codecs.Snappy,
	"snappy":       compress.Codecs.Snappy,
	"gzip":         compress.Codecs.Gzip,
	"zstd":         compress.Codecs.Zstd,
	"none":         compress.Codecs.Uncompressed,
	"uncompressed": compress.Codecs.Uncompressed,
}

// Validate checks opts without creating a writer.
func (o Options) Validate() error {
	if _, ok := codecs[strings.ToLower(o.Codec)]; !ok {
		return fmt.Errorf("%w %q (supported: snappy, gzip, zstd, none)", ErrUnsupportedCodec, o.Codec)
	}
	if o.RowGroupBytes < 0 || o.PageBytes < 0 {
		return fmt.Errorf("%w: sizes must not be negative (row group %d, page %d)",
			ErrInvalidOption, o.RowGroupBytes, o.PageBytes)
	}
	switch strings.ToLower(o.Timestamps) {
	case "", TimestampsInt96, TimestampsInt64:
	default:
		return fmt.Errorf("%w: timestamps %q (supported: int96, int64)", ErrInvalidOption, o.Timestamps)
	}
	return nil
}

// New returns the Parquet format configured by opts, which it validates.
func New(opts Options) (format.Format, error) {
	return format.Define(Name, Extension, opts, NewWriter)
}
