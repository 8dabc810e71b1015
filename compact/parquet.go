package compact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetBatchRows is how many rows are decoded at a time from an input.
const parquetBatchRows = 8192

// DefaultRowGroupBytes is the output row group size the merge aims at.
const DefaultRowGroupBytes = 64 << 20

// parquetInput is one input file, read whole: Parquet's footer is at the
// end, and the inputs are small files. It is released once merged; the
// next one is read meanwhile (Compactor.readAhead).
type parquetInput struct {
	pf     *file.Reader
	schema *arrow.Schema
	codec  compress.Compression
	int96  bool
}

func openParquet(data []byte, name string) (*parquetInput, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a Parquet file: %w", name, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	as, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	in := &parquetInput{pf: pf, schema: as, codec: compress.Codecs.Snappy}
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

// parquetMerger writes one Parquet file from the rows of its inputs, in
// order, batch by batch: it holds one input's bytes, one batch and the
// output's open row group.
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
func (m *parquetMerger) sameSchema(in *parquetInput) bool {
	return m.schema == nil || m.schema.Equal(in.schema)
}

func (m *parquetMerger) start(in *parquetInput) error {
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

// add copies every row of in to the output, starting a new row group
// whenever the open one reaches the target size.
func (m *parquetMerger) add(ctx context.Context, in *parquetInput, name string) error {
	if m.fw == nil {
		if err := m.start(in); err != nil {
			return err
		}
	}
	fr, err := pqarrow.NewFileReader(in.pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		if err := m.fw.WriteBuffered(rec); err != nil {
			return fmt.Errorf("write rows of %s: %w", name, err)
		}
		m.records += rec.NumRows()
		if m.fw.RowGroupTotalBytesWritten() >= m.rowGroupBytes {
			if err := m.fw.NewBufferedRowGroupChecked(); err != nil {
				return fmt.Errorf("write row group: %w", err)
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", name, err)
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
