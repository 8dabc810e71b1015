package format

import (
	"bytes"
	"errors"
	"testing"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

func TestLookup(t *testing.T) {
	for _, name := range []string{"avro", "AVRO", " avro ", "io.confluent.connect.hdfs.avro.AvroFormat"} {
		f, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", name, err)
		}
		if f.Name() != "avro" || f.Extension() != ".avro" {
			t.Fatalf("Lookup(%q) = %s %s", name, f.Name(), f.Extension())
		}
	}
}

func TestLookupFailures(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"orc", Config{}, ErrUnknownFormat},
		{"io.confluent.connect.hdfs.orc.OrcFormat", Config{}, ErrUnknownFormat},
		{"", Config{}, ErrUnknownFormat},
		{"avro", Config{Avro: avro.Options{Codec: "bzip2"}}, avro.ErrUnsupportedCodec},
	}
	for _, tt := range tests {
		if _, err := New(tt.name, tt.cfg); !errors.Is(err, tt.want) {
			t.Errorf("New(%q) = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestAvroThroughInterface writes a file through Format/RecordWriter only.
func TestAvroThroughInterface(t *testing.T) {
	s, err := schema.New(5, `{"type":"record","name":"R","fields":[{"name":"n","type":"long"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New("avro", Config{Avro: avro.Options{Codec: "snappy", BlockRecords: 2}})
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
	f, _ := Lookup("avro")
	w, err := f.NewWriter(&bytes.Buffer{}, nil)
	if err == nil || w != nil {
		t.Fatalf("NewWriter(nil schema) = %v, %v", w, err)
	}
}

func TestLookupAllFormats(t *testing.T) {
	tests := []struct{ name, want, ext string }{
		{"parquet", "parquet", ".parquet"},
		{"io.confluent.connect.hdfs.parquet.ParquetFormat", "parquet", ".parquet"},
		{"JSON", "json", ".json"},
		{"io.confluent.connect.hdfs.json.JsonFormat", "json", ".json"},
		{"string", "string", ".txt"},
		{"io.confluent.connect.hdfs.string.StringFormat", "string", ".txt"},
	}
	for _, tt := range tests {
		f, err := Lookup(tt.name)
		if err != nil || f.Name() != tt.want || f.Extension() != tt.ext {
			t.Errorf("Lookup(%q) = %v, %v", tt.name, f, err)
		}
	}
	if _, err := New("parquet", Config{Parquet: parquet.Options{Codec: "lzo"}}); !errors.Is(err, parquet.ErrUnsupportedCodec) {
		t.Errorf("parquet lzo: %v", err)
	}
}

// TestStringFormat: Avro string values as lines; a nil schema passes raw
// values through; other schemas are refused like the connector does.
func TestStringFormat(t *testing.T) {
	f, _ := Lookup("string")
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
	if w, err := f.NewWriter(&buf, rec); !errors.Is(err, ErrNotStringSchema) || w != nil {
		t.Fatalf("record schema: %v, %v", w, err)
	}
}

func TestParquetAndJSONThroughInterface(t *testing.T) {
	s, _ := schema.New(5, `{"type":"record","name":"R","fields":[{"name":"n","type":"long"}]}`)
	datum, _ := s.Codec.BinaryFromNative(nil, map[string]any{"n": int64(7)})
	for _, name := range []string{"parquet", "json"} {
		f, _ := Lookup(name)
		var buf bytes.Buffer
		w, err := f.NewWriter(&buf, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteDatum(datum); err != nil || w.BytesBuffered() == 0 {
			t.Fatalf("%s: %v, buffered %d", name, err, w.BytesBuffered())
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		switch name {
		case "json":
			if buf.String() != "{\"n\":7}\n" {
				t.Errorf("json wrote %q", buf.String())
			}
		case "parquet":
			if !bytes.HasPrefix(buf.Bytes(), []byte("PAR1")) || !bytes.HasSuffix(buf.Bytes(), []byte("PAR1")) {
				t.Errorf("parquet file not framed by PAR1 (%d bytes)", buf.Len())
			}
		}
		if w, err := f.NewWriter(&buf, nil); err == nil || w != nil {
			t.Errorf("%s: nil schema gave %v, %v", name, w, err)
		}
	}
}
