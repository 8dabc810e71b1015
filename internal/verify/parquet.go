package verify

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// readParquet counts a Parquet file's rows and, with seqField, reads that
// long column in file order, as readAvro does for Avro files.
func readParquet(ctx context.Context, fsys storage.FS, p string, r layout.FileRange, seqField string) (File, error) {
	f := File{Path: p, Range: r}
	rc, err := fsys.Open(ctx, p)
	if err != nil {
		return f, err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return f, fmt.Errorf("%s: %w", p, err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return f, fmt.Errorf("%s: not a Parquet file: %w", p, err)
	}
	defer pf.Close()
	f.Records = pf.NumRows()
	if seqField == "" {
		return f, nil
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return f, fmt.Errorf("%s: %w", p, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return f, fmt.Errorf("%s: %w", p, err)
	}
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices(seqField)
	if len(idx) != 1 {
		return f, fmt.Errorf("%s: no column %q", p, seqField)
	}
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		longs, ok := chunk.(*array.Int64)
		if !ok {
			return f, fmt.Errorf("%s: column %q is %s, want long", p, seqField, chunk.DataType())
		}
		for i := range longs.Len() {
			if err := f.addSeq(longs.Value(i)); err != nil {
				return f, fmt.Errorf("%s: record %d: %w", p, len(f.Seqs), err)
			}
		}
	}
	return f, nil
}
