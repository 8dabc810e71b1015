package compact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetBatchRows is how many rows are decoded at a time from an input.
// The merge holds two such batches (one encoded, one decoded ahead), so
// this is half the 8,192 rows it held when it decoded and encoded in turn.
const parquetBatchRows = 4096

// DefaultRowGroupBytes is the output row group size the merge aims at.
const DefaultRowGroupBytes = 64 << 20

var readPool = &poolAlloc{}

// parquetShape is what the output needs to know of an input: its rows'
// schema and the writer settings that keep the sink's file shape.
type parquetShape struct {
	schema *arrow.Schema
	codec  compress.Compression
	int96  bool
}

// parquetInput is one input file, read whole: Parquet's footer is at the
// end, and the inputs are small files. It is released once decoded; the
// next one is read meanwhile (Compactor.readAhead).
type parquetInput struct {
	pf *file.Reader
	fr *pqarrow.FileReader
	parquetShape
}

func openParquet(data []byte, name string) (*parquetInput, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data), file.WithReadProps(pq.NewReaderProperties(readPool)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a Parquet file: %w", name, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, readPool)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	as, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	in := &parquetInput{pf: pf, fr: fr, parquetShape: parquetShape{schema: as, codec: compress.Codecs.Snappy}}
	if pf.NumRowGroups() > 0 && pf.MetaData().Schema.NumColumns() > 0 {
		cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
		if err == nil {
			in.codec = cc.Compression()
		}
	}
	for i := range pf.MetaData().Schema.NumColumns() {
		if pf.MetaData().Schema.Column(i).PhysicalType() == pq.Types.Int96 {
			in.int96 = true
		}
	}
	return in, nil
}

// decodedPart is the next step of the decoded inputs, in run order: an
// input starts (shape), one batch of its rows (rec, the receiver's to
// release), every input was decoded (complete), or why decoding stopped
// (err).
type decodedPart struct {
	shape    *parquetShape
	rec      arrow.RecordBatch
	complete bool
	err      error
}

// decodeAhead decodes the inputs readAhead reads into Arrow batches, in
// order, one batch ahead of the merge's encoding: decoding is a fifth of
// the merge's CPU and encoding most of the rest, and on two cores they
// overlap (measured: docs/benchmarks.md, "Compaction"). It holds the
// input it decodes and one decoded batch waiting to be taken; it stops at
// the first failure (sent as the next part) or when ctx ends, releasing
// what it holds, and closes parts; wait returns once it has stopped.
func decodeAhead(ctx context.Context, inputs []Input, read <-chan readInput) (parts <-chan decodedPart, wait func()) {
	ch := make(chan decodedPart) // unbuffered: one batch decoded ahead, no more
	done := make(chan struct{})
	send := func(p decodedPart) bool {
		select {
		case ch <- p:
			return true
		case <-ctx.Done():
			if p.rec != nil {
				p.rec.Release()
			}
			return false
		}
	}
	go func() {
		defer close(done)
		defer close(ch)
		for _, in := range inputs {
			got, ok := <-read
			if !ok { // the context ended
				return
			}
			if got.err != nil {
				send(decodedPart{err: got.err})
				return
			}
			if sent, err := decodeInput(ctx, got.data, in.Path, send); err != nil || !sent {
				if err != nil {
					send(decodedPart{err: err})
				}
				return
			}
		}
		send(decodedPart{complete: true})
	}()
	return ch, func() { <-done }
}

// decodeInput sends one input's shape, then its rows batch by batch. It
// returns sent=false if a send failed (the context ended).
func decodeInput(ctx context.Context, data []byte, name string, send func(decodedPart) bool) (sent bool, err error) {
	in, err := openParquet(data, name)
	if err != nil {
		return true, err
	}
	defer in.pf.Close()
	if !send(decodedPart{shape: &in.parquetShape}) {
		return false, nil
	}
	rr, err := in.fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return true, fmt.Errorf("%s: %w", name, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain() // the reader releases its batch at the next Next
		if !send(decodedPart{rec: rec}) {
			return false, nil
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return true, fmt.Errorf("%s: %w", name, err)
	}
	return true, nil
}

// parquetMerger writes one Parquet file from the rows of its inputs, in
// order, batch by batch: it holds the batch it encodes and the output's
// open row group.
type parquetMerger struct {
	w             io.Writer
	rowGroupBytes int64
	fw            *pqarrow.FileWriter
	schema        *arrow.Schema
	records       int64
}

func newParquetMerger(w io.Writer, rowGroupBytes int64) *parquetMerger {
	if rowGroupBytes <= 0 {
		rowGroupBytes = DefaultRowGroupBytes
	}
	return &parquetMerger{w: w, rowGroupBytes: rowGroupBytes}
}

// sameSchema reports whether an input's rows may follow the output's.
func (m *parquetMerger) sameSchema(in *parquetShape) bool {
	return m.schema == nil || m.schema.Equal(in.schema)
}

// begin starts the output at its first input; later inputs (of the same
// schema) need nothing.
func (m *parquetMerger) begin(in *parquetShape) error {
	if m.fw != nil {
		return nil
	}
	props := pq.NewWriterProperties(
		pq.WithCompression(in.codec),
		pq.WithMaxRowGroupLength(1<<62),
		pq.WithDataPageVersion(pq.DataPageV1),
		pq.WithVersion(pq.V2_4),
		pq.WithCreatedBy("hdfs-sink compact"),
	)
	fw, err := pqarrow.NewFileWriter(in.schema, sinkOnly{m.w}, props,
		pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(in.int96)))
	if err != nil {
		return fmt.Errorf("start Parquet file: %w", err)
	}
	m.fw, m.schema = fw, in.schema
	return nil
}

// write copies one batch of rows of the input name to the output,
// starting a new row group whenever the open one reaches the target size.
func (m *parquetMerger) write(rec arrow.RecordBatch, name string) error {
	if err := m.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("write rows of %s: %w", name, err)
	}
	m.records += rec.NumRows()
	if m.fw.RowGroupTotalBytesWritten() >= m.rowGroupBytes {
		if err := m.fw.NewBufferedRowGroupChecked(); err != nil {
			return fmt.Errorf("write row group: %w", err)
		}
	}
	return nil
}

func (m *parquetMerger) close() error {
	if m.fw == nil {
		return nil
	}
	if err := m.fw.Close(); err != nil {
		return fmt.Errorf("finish Parquet file: %w", err)
	}
	return nil
}

// sinkOnly hides a Close: arrow-go closes an io.Closer sink when the file
// is finished, and the caller owns the store's file.
type sinkOnly struct{ w io.Writer }

func (s sinkOnly) Write(p []byte) (int, error) { return s.w.Write(p) }
