package format

import (
	"bytes"
	"errors"
	"testing"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
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
		{"parquet", Config{}, ErrUnknownFormat},
		{"io.confluent.connect.hdfs.parquet.ParquetFormat", Config{}, ErrUnknownFormat},
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
