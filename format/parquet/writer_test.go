package parquet

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/internal/benchdata"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

func TestSchemaFailures(t *testing.T) {
	rec := func(fields string) string {
		return `{"type":"record","name":"R","fields":[` + fields + `]}`
	}
	tests := []struct {
		name, schema, wantPath string
	}{
		{"wide union", rec(`{"name":"u","type":["null","int","string"]}`), "u"},
		{"nested wide union", rec(`{"name":"n","type":{"type":"record","name":"N","fields":[{"name":"x","type":["int","long"]}]}}`), "n.x"},
		{"union in array", rec(`{"name":"a","type":{"type":"array","items":["int","string"]}}`), "a[]"},
		{"recursive", rec(`{"name":"next","type":["null","R"]}`), "next"},
		{"decimal too wide", rec(`{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":80,"scale":0}}`), "d"},
		{"empty record", rec(`{"name":"e","type":{"type":"record","name":"E","fields":[]}}`), "e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewWriter(&bytes.Buffer{}, mustSchema(t, tt.schema), Options{})
			var se *avsc.SchemaError
			if !errors.As(err, &se) || se.Path != tt.wantPath || !errors.Is(err, avsc.ErrInvalidSchema) {
				t.Fatalf("err = %v, want a SchemaError at %q", err, tt.wantPath)
			}
		})
	}
}

func TestOptionFailures(t *testing.T) {
	tests := []struct {
		opts Options
		want error
	}{
		{Options{Codec: "lzo"}, ErrUnsupportedCodec},
		{Options{Codec: "brotli"}, ErrUnsupportedCodec},
		{Options{RowGroupBytes: -1}, ErrInvalidOption},
		{Options{PageBytes: -1}, ErrInvalidOption},
		{Options{Timestamps: "int32"}, ErrInvalidOption},
	}
	for _, tt := range tests {
		if err := tt.opts.Validate(); !errors.Is(err, tt.want) {
			t.Errorf("Validate(%+v) = %v, want %v", tt.opts, err, tt.want)
		}
	}
}

const tsSchema = `{"type":"record","name":"R","fields":[{"name":"n","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}}]}`

// TestBadValueKeepsFileUsable: a timestamp INT96 cannot hold is rejected
// before anything is staged; later rows still land in a valid file.
func TestBadValueKeepsFileUsable(t *testing.T) {
	s := mustSchema(t, tsSchema)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": int64(1), "ts": leapDay})
	bad, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": int64(2), "ts": time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err := w.WriteDatum(good); err != nil {
		t.Fatal(err)
	}
	err = w.WriteDatum(bad)
	var ve *format.ValueError
	if !errors.As(err, &ve) || ve.Path != "ts" {
		t.Fatalf("bad timestamp: %v, want a ValueError at ts", err)
	}
	if err := w.WriteDatum([]byte{0xff}); err == nil {
		t.Fatal("truncated datum accepted")
	}
	if err := w.WriteDatum(good); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, rows := dump(t, buf.Bytes())
	if n := strings.Count(rows, "\n"); n != 2 || strings.Contains(rows, `"n":2`) {
		t.Fatalf("file rows:\n%s", rows)
	}
	// The same value is fine as INT64 micros.
	w, _ = NewWriter(&bytes.Buffer{}, s, Options{Timestamps: "INT64"})
	if err := w.WriteDatum(bad); err != nil {
		t.Fatalf("int64 timestamps: %v", err)
	}
}

func writeN(t testing.TB, opts Options, n int) (*Writer, *bytes.Buffer) {
	t.Helper()
	s := mustSchema(t, tsSchema)
	buf := &bytes.Buffer{}
	w, err := NewWriter(buf, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		datum, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": int64(i), "ts": leapDay.Add(time.Duration(i) * time.Second)})
		if err := w.WriteDatum(datum); err != nil {
			t.Fatal(err)
		}
	}
	return w, buf
}

func readMeta(t testing.TB, data []byte) *file.Reader {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCodecs(t *testing.T) {
	tests := map[string]compress.Compression{
		"": compress.Codecs.Snappy, "SNAPPY": compress.Codecs.Snappy, "gzip": compress.Codecs.Gzip,
		"zstd": compress.Codecs.Zstd, "none": compress.Codecs.Uncompressed, "uncompressed": compress.Codecs.Uncompressed,
	}
	for codec, want := range tests {
		w, buf := writeN(t, Options{Codec: codec}, 100)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r := readMeta(t, buf.Bytes())
		cc, err := r.MetaData().RowGroup(0).ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		if cc.Compression() != want || r.NumRows() != 100 {
			t.Errorf("codec %q: wrote %v with %d rows, want %v", codec, cc.Compression(), r.NumRows(), want)
		}
		r.Close()
	}
}

// TestRowGroupBytes: a small row-group size cuts several row groups and
// keeps the writer's memory near that size; all rows arrive in order.
func TestRowGroupBytes(t *testing.T) {
	const limit = 256 << 10
	w, buf := writeN(t, Options{RowGroupBytes: limit, Codec: "none"}, 200_000)
	if got := w.BytesBuffered(); got > 2*limit {
		t.Errorf("BytesBuffered = %d with a %d row-group limit", got, limit)
	}
	if buf.Len() == 0 {
		t.Error("no row group written before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := readMeta(t, buf.Bytes())
	defer r.Close()
	if r.NumRowGroups() < 3 || r.NumRows() != 200_000 {
		t.Fatalf("%d row groups, %d rows", r.NumRowGroups(), r.NumRows())
	}
	_, rows := dump(t, buf.Bytes())
	lines := strings.Split(strings.TrimSpace(rows), "\n")
	if !strings.HasPrefix(lines[199_999], `{"n":199999,`) {
		t.Fatalf("last row %s", lines[199_999])
	}
}

type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// TestFlushAndClose: Flush ends a row group, which reaches w when the
// next one starts or the file closes, and never leaves an empty one;
// Close finishes the file without closing w; a second Close is a no-op.
func TestFlushAndClose(t *testing.T) {
	s := mustSchema(t, tsSchema)
	var out closeRecorder
	w, err := NewWriter(&out, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	datum, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": int64(1), "ts": leapDay})
	writeRows := func(n int) {
		t.Helper()
		for range n {
			if err := w.WriteDatum(datum); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeRows(10)
	if w.BytesBuffered() <= writerOverhead {
		t.Fatalf("BytesBuffered = %d with 10 staged rows", w.BytesBuffered())
	}
	for range 2 { // a second Flush with nothing new is a no-op
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	written := out.Len()
	writeRows(5)
	if err := w.Flush(); err != nil { // starts the second row group: the first reaches w
		t.Fatal(err)
	}
	if out.Len() <= written {
		t.Fatal("the flushed row group was not written when the next one started")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil || w.Close() != nil {
		t.Fatalf("Close: %v", err)
	}
	if out.closed {
		t.Fatal("Close closed the underlying writer")
	}
	if err := w.WriteDatum(datum); !errors.Is(err, format.ErrClosed) || err.Error() != "parquet: writer closed" {
		t.Fatalf("write after close: %v", err)
	}
	r := readMeta(t, out.Bytes())
	defer r.Close()
	if r.NumRows() != 15 || r.NumRowGroups() != 2 {
		t.Fatalf("%d rows in %d row groups, want 15 in 2 (10 and 5, none empty)", r.NumRows(), r.NumRowGroups())
	}
	if n := r.MetaData().RowGroup(1).NumRows(); n != 5 {
		t.Fatalf("second row group has %d rows, want 5", n)
	}
	if got := r.MetaData().GetCreatedBy(); strings.Contains(got, "parquet-mr") {
		t.Fatalf("created_by %q claims parquet-mr (Hive would shift INT96 values)", got)
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after -= len(p); f.after < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriteErrorIsSticky: after the sink fails, every call fails with
// its error. Small row groups make WriteDatum write them as it goes.
func TestWriteErrorIsSticky(t *testing.T) {
	s := mustSchema(t, tsSchema)
	w, err := NewWriter(&failingWriter{after: 10}, s, Options{RowGroupBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	datum, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": int64(1), "ts": leapDay})
	var first error
	for i := 0; first == nil && i < 100_000; i++ {
		first = w.WriteDatum(datum)
	}
	if first == nil || !strings.Contains(first.Error(), "disk full") {
		t.Fatalf("WriteDatum = %v, want the write error", first)
	}
	for name, call := range map[string]func() error{
		"WriteDatum": func() error { return w.WriteDatum(datum) },
		"Flush":      w.Flush,
		"Close":      w.Close,
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s after failure = %v, want the write error", name, err)
		}
	}
}

// TestEncodingAllocationsPerRow guards the encoder's garbage on bench's
// 1 KB records, whole files counted. A file allocates about 4,000 times to
// set up its column writers, pages and footer, and a batch of staged rows
// (about 1,000 of these at 1 MiB, encodeBatch) about 850 times more as
// arrow-go sets up each column's write: 1.3 a row here (12,288 rows, about
// bench's 8-partition file). arrow-go v18.8.0 also boxed every string value
// its dictionary encoder looked up: 16 allocations more a row (D55).
func TestEncodingAllocationsPerRow(t *testing.T) {
	const passes = 3
	datums, text, err := benchdata.Pool("1KB")
	if err != nil {
		t.Fatal(err)
	}
	s := mustSchema(t, text)
	writeFile := func() {
		w, err := NewWriter(io.Discard, s, Options{Codec: "snappy"})
		if err != nil {
			t.Fatal(err)
		}
		for range passes {
			for _, d := range datums {
				if err := w.WriteDatum(d); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rows := passes * len(datums)
	if perRow := testing.AllocsPerRun(3, writeFile) / float64(rows); perRow >= 2 {
		t.Errorf("a file of %d rows allocates %.2f times a row; want less than 2", rows, perRow)
	}
}

// TestLeafColumns: the writer counts as many leaf columns as the file's
// Parquet schema has (BytesBuffered adds columnOverhead for each).
func TestLeafColumns(t *testing.T) {
	_, bench, err := benchdata.Pool("1KB")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"rich": richSchema, "bench": benchSchema, "benchdata": bench, "ts": tsSchema} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, mustSchema(t, text), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r := readMeta(t, buf.Bytes())
		if got, want := w.leaves, r.MetaData().Schema.NumColumns(); got != want {
			t.Errorf("%s: %d leaf columns counted, the file has %d", name, got, want)
		}
		r.Close()
	}
}

// smallBatchWriter is a writer of bench's 1 KB records that encodes a
// batch every 64 KiB, and those records.
func smallBatchWriter(t *testing.T) (*Writer, [][]byte) {
	t.Helper()
	datums, text, err := benchdata.Pool("1KB")
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(io.Discard, mustSchema(t, text), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.batchBytes = 64 << 10
	return w, datums
}

// TestBatchesStayBounded: a batch whose builders take the buffers the
// last one freed (kept, so already counted in held) is as large as the
// first, which took new ones: staging is measured without the kept
// buffers, so batches do not grow by what the allocator keeps.
func TestBatchesStayBounded(t *testing.T) {
	w, datums := smallBatchWriter(t)
	defer w.Close()
	var sizes []int // rows of each batch
	rows := 0
	for _, d := range datums[:3000] {
		if err := w.WriteDatum(d); err != nil {
			t.Fatal(err)
		}
		rows++
		if w.rows == 0 {
			sizes = append(sizes, rows)
			rows = 0
		}
	}
	if len(sizes) < 10 {
		t.Fatalf("%d batches: the test would not mean anything", len(sizes))
	}
	for i, n := range sizes[1:] {
		if n > sizes[0]*3/2 {
			t.Fatalf("batch %d has %d rows, the first %d: batches grew (all: %v)", i+1, n, sizes[0], sizes)
		}
	}
	if kept := w.mem.held() - w.mem.inUse(); kept == 0 {
		t.Error("no buffer kept for reuse after a batch")
	}
}

// TestBytesBufferedWhileWriting: the sink reads BytesBuffered while
// another goroutine writes or closes the file (a rotation beside the poll
// loop); under -race this finds any state it reads unguarded.
func TestBytesBufferedWhileWriting(t *testing.T) {
	w, datums := smallBatchWriter(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, d := range datums[:1000] {
			if err := w.WriteDatum(d); err != nil {
				t.Error(err)
				return
			}
		}
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	}()
	for peak := 0; ; {
		select {
		case <-done:
			if peak <= writerOverhead {
				t.Errorf("BytesBuffered peaked at %d while 1,000 rows were written", peak)
			}
			return
		default:
			peak = max(peak, w.BytesBuffered())
		}
	}
}
