package writer

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// sizeHint is hintFormat's hint: the bytes its file held.
type sizeHint int

func (h sizeHint) Bytes() int { return int(h) }

// hintFormat's writers note the hint they were started with and hint
// their own size (100 bytes a record) for the next file.
type hintFormat struct{ started []format.SizeHint }

func (f *hintFormat) Name() string      { return "hint" }
func (f *hintFormat) Extension() string { return ".hint" }
func (f *hintFormat) NewWriter(io.Writer, *schema.Schema) (format.RecordWriter, error) {
	return &hintWriter{f: f}, nil
}

type hintWriter struct {
	f       *hintFormat
	records int
}

func (w *hintWriter) WriteDatum([]byte) error { w.records++; return nil }
func (w *hintWriter) Flush() error            { return nil }
func (w *hintWriter) BytesBuffered() int      { return 0 }
func (w *hintWriter) Close() error            { return nil }
func (w *hintWriter) UseHint(h format.SizeHint) {
	w.f.started = append(w.f.started, h)
}
func (w *hintWriter) Hint() format.SizeHint { return sizeHint(100 * w.records) }

// TestHintCarriedToTheNextFile: a partition's next file starts from the
// hint of the largest file of its last rotation; the first file, with
// nothing before it, from none; a discarded rotation leaves it as it was.
func TestHintCarriedToTheNextFile(t *testing.T) {
	hf := &hintFormat{}
	w := New(Options{FS: storagetest.NewMemFS(), Format: hf,
		Layout:    layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "orders"},
		Partition: 3, Pad: 10, TempDir: "/topics/+tmp/orders/3/1", Prefix: "e1"})
	ctx, off := context.Background(), int64(0)
	write := func(dirs ...string) {
		t.Helper()
		for _, d := range dirs {
			if err := w.Append(ctx, d, nil, off, []byte("x"), time.Now()); err != nil {
				t.Fatal(err)
			}
			off++
		}
	}
	write("d=a", "d=b", "d=b", "d=b") // first rotation: d=b holds 3 records, d=a 1
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	write("d=c") // from the largest file: 300
	if err := w.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	write("d=d") // the discarded file taught nothing: 300 still
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	write("d=e") // from the last closed file: 100
	want := []format.SizeHint{sizeHint(300), sizeHint(300), sizeHint(100)}
	if len(hf.started) != len(want) {
		t.Fatalf("hints used %v, want %v (the first two files none)", hf.started, want)
	}
	for i := range want {
		if hf.started[i] != want[i] {
			t.Errorf("hints used %v, want %v", hf.started, want)
			break
		}
	}
}
