package parquet

import (
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/internal/sticky"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// createdBy names the writer in the file footer. Hive 3.1 applies its
// INT96 time-zone conversion only to files written by parquet-mr, so
// this must not claim to be parquet-mr.
const createdBy = "hdfs-sink (arrow-go v18)"

// Writer writes one Parquet file. It is not safe for concurrent use.
// After an error from the encoder or the underlying writer every method
// returns that error: the file is incomplete and must be discarded. A
// datum that does not fit the schema is rejected before anything of it
// is buffered, and the writer stays usable.
type Writer struct {
	s    *schema.Schema
	opts Options
	mem  *countingAllocator
	cols []decoder // one per top-level field, in order
	st   state     // scratch of WriteDatum's two passes
	rb   *array.RecordBuilder
	fw   *pqarrow.FileWriter
	rows int // rows staged in rb
	// batchBytes stages at most this much in rb before encoding it into
	// the open row group (see encodeBatch).
	batchBytes int
	// encoded is what arrow-go held right after the last batch was
	// encoded, less the buffers kept for reuse: the open row group's pages
	// and the encoder's state. mem.inUse() above it is the staged batch,
	// whether its builders took kept buffers or new ones.
	encoded int
	rgRows  int  // rows encoded into fw's open row group
	rgFull  bool // the open row group is complete: the next batch starts another
	leaves  int  // Parquet leaf columns: each has a column writer while a row group is open
	// columns is what mem counts for the open row group's column writers
	// (columnOverhead a leaf) from its first batch to the file's close.
	columns int
	status  sticky.State
}

var _ format.RecordWriter = (*Writer)(nil)

// sinkOnly hides w's Close: arrow-go closes an io.Closer sink when the
// file is finished, and the caller owns w.
type sinkOnly struct{ w io.Writer }

func (s sinkOnly) Write(p []byte) (int, error) { return s.w.Write(p) }

// NewWriter returns a Writer of datums encoded with s. The schema is
// mapped first, so an unmappable schema fails here with a
// *avsc.SchemaError naming the field. The magic bytes are written to w.
func NewWriter(w io.Writer, s *schema.Schema, opts Options) (*Writer, error) {
	opts, err := opts.forWriter(s)
	if err != nil {
		return nil, err
	}
	root, err := s.Columnar()
	if err != nil {
		return nil, fmt.Errorf("parquet: schema %d: %w", s.ID, err)
	}
	as, cols, err := arrowSchema(root, opts.Timestamps)
	if err != nil {
		return nil, fmt.Errorf("parquet: schema %d: %w", s.ID, err)
	}
	batch := batchSize(opts.RowGroupBytes)
	mem := newCountingAllocator(2 * batch)
	fw, err := pqarrow.NewFileWriter(as, sinkOnly{w}, writerProps(opts, mem),
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem),
			pqarrow.WithDeprecatedInt96Timestamps(opts.Timestamps == TimestampsInt96)))
	if err != nil {
		return nil, fmt.Errorf("parquet: schema %d: start file: %w", s.ID, err)
	}
	return &Writer{s: s, opts: opts, mem: mem, cols: cols, fw: fw,
		rb: array.NewRecordBuilder(mem, as), batchBytes: batch, leaves: leafColumns(as.Fields())}, nil
}

// maxBatchBytes bounds the rows staged in Arrow builders before they are
// encoded. The builders grow by doubling, zeroing and copying as they go;
// kept small they stay in the processor's cache, and the staged rows are
// held as encoded, compressed pages instead of raw values.
const maxBatchBytes = 1 << 20

// batchSize is the staging bound for a writer whose row groups close at
// rowGroupBytes: at most a quarter of a row group, so a row group
// overshoots its size by little.
func batchSize(rowGroupBytes int) int {
	return min(maxBatchBytes, rowGroupBytes/4)
}

// forWriter checks what a Writer is made with and fills in the defaults.
func (o Options) forWriter(s *schema.Schema) (Options, error) {
	if s == nil {
		return o, fmt.Errorf("parquet: new writer: nil schema")
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	o.Codec = strings.ToLower(o.Codec)
	o.Timestamps = strings.ToLower(o.Timestamps)
	if o.Timestamps == "" {
		o.Timestamps = TimestampsInt96
	}
	if o.RowGroupBytes == 0 {
		o.RowGroupBytes = DefaultRowGroupBytes
	}
	if o.PageBytes == 0 {
		o.PageBytes = DefaultPageBytes
	}
	return o, nil
}

func writerProps(o Options, mem *countingAllocator) *pq.WriterProperties {
	return pq.NewWriterProperties(
		pq.WithAllocator(mem),
		pq.WithCompression(codecs[o.Codec]),
		pq.WithDataPageSize(int64(o.PageBytes)),
		pq.WithDictionaryPageSizeLimit(int64(o.PageBytes)),
		// Row groups are cut by bytes (RowGroupBytes), not by rows.
		pq.WithMaxRowGroupLength(1<<62),
		// V1 data pages and format 2.4 annotations: what Hive 3.1's
		// parquet-mr 1.10 reads.
		pq.WithDataPageVersion(pq.DataPageV1),
		pq.WithVersion(pq.V2_4),
		pq.WithCreatedBy(createdBy),
	)
}

// WriteDatum decodes datum with the file's schema straight into the
// column builders and stages the row. A datum that does not decode
// fails with a *schema.DatumError (schema.ErrCorruptDatum), one holding
// a value a column cannot take with a *format.ValueError; either way nothing
// of it is kept and the writer stays usable.
func (w *Writer) WriteDatum(datum []byte) error {
	if err := w.status.Usable(errClosed); err != nil {
		return err
	}
	defer w.st.reset(nil) // keep no reference to the caller's buffer
	if err := w.check(datum); err != nil {
		return err
	}
	if err := w.put(datum); err != nil {
		return err
	}
	w.rows++
	if w.mem.inUse()-w.encoded >= w.batchBytes {
		return w.encodeBatch()
	}
	return nil
}

// check reads the whole datum, appending nothing. Malformed bytes come
// first, as they did when goavro decoded the datum before any column
// saw it; then the first value a column cannot take.
func (w *Writer) check(datum []byte) (err error) {
	w.st.reset(datum)
	// A bad record must be an error the sink can route, never a crash.
	defer func() {
		if r := recover(); r != nil {
			err = w.corrupt(datum, fmt.Errorf("decoder panic: %v", r))
		}
	}()
	b := datum
	for _, c := range w.cols {
		if b, err = c.check(&w.st, b); err != nil {
			return w.corrupt(datum, err)
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("parquet: %w", &schema.DatumError{SchemaID: w.s.ID, Len: len(datum), Trailing: len(b)})
	}
	if w.st.verr != nil {
		return fmt.Errorf("parquet: schema %d: %w", w.s.ID, w.st.verr)
	}
	return nil
}

func (w *Writer) corrupt(datum []byte, err error) error {
	return fmt.Errorf("parquet: %w", &schema.DatumError{SchemaID: w.s.ID, Len: len(datum), Err: err})
}

// put appends the datum check accepted. It cannot fail on such a datum;
// if it panicked anyway (a bug) the builders are uneven and the file
// is lost, so the writer fails for good rather than the process.
func (w *Writer) put(datum []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = w.status.Fail(fmt.Errorf("parquet: schema %d: append checked datum: %v", w.s.ID, r))
		}
	}()
	b := datum
	for i, c := range w.cols {
		b = c.put(&w.st, w.rb.Field(i), b)
	}
	return nil
}

// encodeBatch encodes the staged rows into the open row group's column
// writers, which hold them as compressed pages, and frees the builders.
// A row group is written to w when it is complete: when the batch after
// the one that filled it starts another (arrow-go cannot close a row
// group without opening the next, and an empty one would stay in the
// footer), or when the file closes.
func (w *Writer) encodeBatch() error {
	if w.rows == 0 {
		return nil
	}
	if w.rgFull {
		if err := w.fw.NewBufferedRowGroupChecked(); err != nil {
			return w.status.Fail(fmt.Errorf("parquet: write row group of %d rows: %w", w.rgRows, err))
		}
		w.rgRows, w.rgFull = 0, false
	}
	if w.columns == 0 {
		w.columns = w.leaves * columnOverhead
		w.mem.count(w.columns)
	}
	rec := w.rb.NewRecordBatch()
	n := w.rows
	w.rows = 0
	err := w.fw.WriteBuffered(rec)
	rec.Release() // frees the builders' buffers before mem is read below
	if err != nil {
		return w.status.Fail(fmt.Errorf("parquet: encode %d rows: %w", n, err))
	}
	w.rgRows += n
	w.encoded = w.mem.inUse()
	w.rgFull = w.encoded >= w.opts.RowGroupBytes
	return nil
}

// Flush encodes the staged rows and ends the row group: the next row
// starts another. The row group reaches w then, or when the file closes
// (see encodeBatch), so frequent calls make small row groups.
func (w *Writer) Flush() error {
	if err := w.status.Usable(errClosed); err != nil {
		return err
	}
	if err := w.encodeBatch(); err != nil {
		return err
	}
	w.rgFull = w.rgRows > 0
	return nil
}

// writerOverhead is the Go heap an open writer holds outside arrow-go's
// allocator (builders, metadata): about 16 KiB, measured with
// BenchmarkOpenWriters500 (500 writers of 1 record each: 9.6 MiB of heap,
// 1.6 MiB allocated through the allocator).
const writerOverhead = 16 << 10

// columnOverhead is the Go heap each leaf column's writer holds outside
// the counting allocator while a row group is open: arrow-go's pooled
// encoder buffers, hash tables and statistics. Measured with
// BenchmarkOpenWriters500/encoding: 500 writers of 7 leaf columns each
// held about 86 KiB more heap with a row group open than without.
const columnOverhead = 12 << 10

// BytesBuffered is the memory this writer holds: what arrow-go allocated
// for the staged rows, the open row group's encoded pages and the
// encoder's buffers (every allocation goes through a counting allocator,
// which also keeps freed buffers for the next batch), plus the fixed
// writerOverhead and, while a row group is open, columnOverhead a leaf.
func (w *Writer) BytesBuffered() int { return w.mem.held() + writerOverhead }

// leafColumns counts the Parquet leaf columns of fields.
func leafColumns(fields []arrow.Field) int {
	n := 0
	for _, f := range fields {
		switch t := f.Type.(type) {
		case *arrow.StructType:
			n += leafColumns(t.Fields())
		case *arrow.MapType:
			n += leafColumns([]arrow.Field{t.KeyField(), t.ItemField()})
		case arrow.ListLikeType:
			n += leafColumns([]arrow.Field{t.ElemField()})
		default:
			n++
		}
	}
	return n
}

// Close writes the remaining rows and the footer. It does not close the
// underlying writer. A second Close returns the first one's result.
func (w *Writer) Close() error { return w.status.Close(w.finish) }

// finish writes the remaining rows and the footer, and releases the
// builders and arrow-go's buffers.
func (w *Writer) finish() error {
	defer func() {
		w.mem.drop()
		w.mem.count(-w.columns)
	}()
	defer w.rb.Release()
	if err := w.status.Err(); err != nil {
		_ = w.fw.Close() // release arrow buffers; the file is discarded anyway
		return err
	}
	if err := w.encodeBatch(); err != nil {
		return err
	}
	if err := w.fw.Close(); err != nil {
		return w.status.Fail(fmt.Errorf("parquet: finish file: %w", err))
	}
	return nil
}
