package json

import (
	"bytes"
	"errors"
	"testing"

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
