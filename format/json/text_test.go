package json

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// TestTextFormat: Avro string values as lines; a nil schema passes raw
// values through; other schemas are refused like the connector does.
func TestTextFormat(t *testing.T) {
	f := NewText()
	s, _ := schema.New(1, `"string"`)
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"héllo", ""} {
		datum, _ := s.Codec.BinaryFromNative(nil, v)
		if err := w.WriteDatum(datum); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil || buf.String() != "héllo\n\n" {
		t.Fatalf("wrote %q, %v", buf.String(), err)
	}
	buf.Reset()
	raw, _ := f.NewWriter(&buf, nil)
	if err := raw.WriteDatum([]byte("raw bytes")); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil || buf.String() != "raw bytes\n" {
		t.Fatalf("raw wrote %q, %v", buf.String(), err)
	}
	rec, _ := schema.New(2, `{"type":"record","name":"R","fields":[{"name":"n","type":"long"}]}`)
	w, err = f.NewWriter(&buf, rec)
	want := `format string: value schema is not an Avro string: schema 2 is {"name":"R","type":"record","fields":[{"name":"n","type":"long"}]}`
	if !errors.Is(err, ErrNotStringSchema) || w != nil || err.Error() != want {
		t.Fatalf("record schema: %v, %v", w, err)
	}
}

// TestTextFlushesAt64KiB: lines are held until 64 KiB are pending, then
// written with one Write.
func TestTextFlushesAt64KiB(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewText().NewWriter(&buf, nil)
	line := bytes.Repeat([]byte("x"), 1023) // 1 KiB with its "\n"
	for range 63 {
		if err := w.WriteDatum(line); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 || w.BytesBuffered() != 63<<10 {
		t.Fatalf("before 64 KiB: wrote %d, holding %d", buf.Len(), w.BytesBuffered())
	}
	if err := w.WriteDatum(line); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 64<<10 || w.BytesBuffered() != 0 {
		t.Fatalf("at 64 KiB: wrote %d, holding %d", buf.Len(), w.BytesBuffered())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestTextErrors: a write failure is sticky; after Close every call
// says the writer is closed.
func TestTextErrors(t *testing.T) {
	w, _ := NewText().NewWriter(failingWriter{}, nil)
	_ = w.WriteDatum([]byte("abc"))
	want := "format string: write 4 bytes: disk full"
	if err := w.Flush(); err == nil || err.Error() != want {
		t.Fatalf("Flush = %v, want %s", err, want)
	}
	if err := w.WriteDatum([]byte("d")); err == nil || err.Error() != want {
		t.Fatalf("WriteDatum after failure = %v", err)
	}
	if err := w.Close(); err == nil || err.Error() != want {
		t.Fatalf("Close after failure = %v", err)
	}
	ok, _ := NewText().NewWriter(io.Discard, nil)
	if err := ok.Close(); err != nil || ok.Close() != nil {
		t.Fatalf("Close: %v", err)
	}
	err := ok.WriteDatum([]byte("late"))
	if !errors.Is(err, format.ErrClosed) || err.Error() != "format string: writer closed" {
		t.Fatalf("after Close: %v", err)
	}
}
