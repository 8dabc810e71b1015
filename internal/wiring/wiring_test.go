package wiring

import (
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// TestOutputFormatForEveryFormatClass: every format.class configs accepts
// (short names and the Confluent classes) reaches an encoder here.
func TestOutputFormatForEveryFormatClass(t *testing.T) {
	tests := []struct{ class, name, ext string }{
		{"avro", "avro", ".avro"},
		{"io.confluent.connect.hdfs.avro.AvroFormat", "avro", ".avro"},
		{"io.confluent.connect.hdfs3.avro.AvroFormat", "avro", ".avro"},
		{"parquet", "parquet", ".parquet"},
		{"io.confluent.connect.hdfs.parquet.ParquetFormat", "parquet", ".parquet"},
		{"io.confluent.connect.hdfs3.parquet.ParquetFormat", "parquet", ".parquet"},
		{"JSON", "json", ".json"},
		{"io.confluent.connect.hdfs.json.JsonFormat", "json", ".json"},
		{"io.confluent.connect.hdfs3.json.JsonFormat", "json", ".json"},
		{"string", "string", ".txt"},
		{"io.confluent.connect.hdfs.string.StringFormat", "string", ".txt"},
		{"io.confluent.connect.hdfs3.string.StringFormat", "string", ".txt"},
	}
	for _, tt := range tests {
		c, _, err := configs.Parse("test.json", []byte(`{"name":"t","config":{"topics":"t","hdfs.url":"hdfs://nn:8020",
			"flush.size":"10","bootstrap.servers":"k:9092","value.converter.schema.registry.url":"http://sr:8081",
			"format.class":"`+tt.class+`"}}`))
		if err != nil {
			t.Fatalf("%s: %v", tt.class, err)
		}
		f, err := OutputFormat(c)
		if err != nil || f.Name() != tt.name || f.Extension() != tt.ext {
			t.Errorf("%s: outputFormat = %v, %v", tt.class, f, err)
		}
	}
}

// TestOutputFormatErrors: configs refuses these first; if one got through,
// the message would name the format.
func TestOutputFormatErrors(t *testing.T) {
	for _, tt := range []struct {
		c    configs.Connector
		want string
	}{
		{configs.Connector{Format: "orc"}, `format: unknown format "orc" (supported: avro, parquet, json, string)`},
		{configs.Connector{Format: configs.FormatAvro, AvroCodec: "bzip2"},
			`format "avro": avro: unsupported codec "bzip2" (supported: null, deflate, snappy)`},
	} {
		if _, err := OutputFormat(&tt.c); err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %s", tt.c.Format, err, tt.want)
		}
	}
}
