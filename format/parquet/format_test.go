package parquet

import (
	"bytes"
	"errors"
	"testing"
)

func TestNew(t *testing.T) {
	f, err := New(Options{})
	if err != nil || f.Name() != "parquet" || f.Extension() != ".parquet" {
		t.Fatalf("New = %v, %v", f, err)
	}
	if _, err := New(Options{Codec: "lzo"}); !errors.Is(err, ErrUnsupportedCodec) {
		t.Errorf("lzo: %v", err)
	}
	if _, err := New(Options{Timestamps: "int32"}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("int32 timestamps: %v", err)
	}
}

// TestThroughInterface writes a file through Format/RecordWriter only.
func TestThroughInterface(t *testing.T) {
	s := mustSchema(t, `{"type":"record","name":"R","fields":[{"name":"n","type":"long"}]}`)
	datum, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": int64(7)})
	f, _ := New(Options{})
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteDatum(datum); err != nil || w.BytesBuffered() == 0 {
		t.Fatalf("%v, buffered %d", err, w.BytesBuffered())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("PAR1")) || !bytes.HasSuffix(buf.Bytes(), []byte("PAR1")) {
		t.Errorf("parquet file not framed by PAR1 (%d bytes)", buf.Len())
	}
	if w, err := f.NewWriter(&buf, nil); err == nil || w != nil {
		t.Errorf("nil schema gave %v, %v", w, err)
	}
}
