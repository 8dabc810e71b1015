package avro

import (
	"bytes"
	"errors"
	"testing"

	"github.com/linkedin/goavro/v2"
)

func TestNew(t *testing.T) {
	f, err := New(Options{})
	if err != nil || f.Name() != "avro" || f.Extension() != ".avro" {
		t.Fatalf("New = %v, %v", f, err)
	}
	if _, err := New(Options{Codec: "bzip2"}); !errors.Is(err, ErrUnsupportedCodec) {
		t.Errorf("bzip2: %v", err)
	}
	if _, err := New(Options{BlockBytes: -1}); err == nil {
		t.Error("negative block size accepted")
	}
}

// TestThroughInterface writes a file through Format/RecordWriter only.
func TestThroughInterface(t *testing.T) {
	s := mustSchema(t, `{"type":"record","name":"R","fields":[{"name":"n","type":"long"}]}`)
	f, err := New(Options{Codec: "snappy", BlockRecords: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	for n := range int64(5) {
		datum, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": n})
		if err := w.WriteDatum(datum); err != nil {
			t.Fatal(err)
		}
	}
	if w.BytesBuffered() == 0 {
		t.Fatal("fifth record not buffered")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := goavro.NewOCFReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for r.Scan() {
		v, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.(map[string]any)["n"].(int64))
	}
	if len(got) != 5 || got[4] != 4 || r.CompressionName() != "snappy" {
		t.Fatalf("read %v (%s)", got, r.CompressionName())
	}
}

func TestNewWriterNilSchemaReturnsNilInterface(t *testing.T) {
	f, _ := New(Options{})
	w, err := f.NewWriter(&bytes.Buffer{}, nil)
	if err == nil || w != nil {
		t.Fatalf("NewWriter(nil schema) = %v, %v", w, err)
	}
}
