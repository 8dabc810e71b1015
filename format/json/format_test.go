package json

import (
	"bytes"
	"testing"
)

func TestNew(t *testing.T) {
	f, err := New(Options{})
	if err != nil || f.Name() != "json" || f.Extension() != ".json" {
		t.Fatalf("New = %v, %v", f, err)
	}
	if _, err := New(Options{BufferBytes: -1}); err == nil {
		t.Error("negative buffer accepted")
	}
	if f := NewText(); f.Name() != "string" || f.Extension() != ".txt" {
		t.Errorf("NewText = %s %s", f.Name(), f.Extension())
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
	if buf.String() != "{\"n\":7}\n" {
		t.Errorf("json wrote %q", buf.String())
	}
}
