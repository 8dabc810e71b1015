package configs

import (
	"strings"
	"testing"
)

// TestJSONConverterSettings: JsonConverter with embedded schemas needs no
// registry and writes every format; its keys take Connect's defaults
// (schemas.enable true, schemas.cache.size 1000, decimal.format BASE64).
func TestJSONConverterSettings(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092")
	c, _ := connectorWith(t, w, `,"format.class":"io.confluent.connect.hdfs.parquet.ParquetFormat",`+
		`"value.converter":"org.apache.kafka.connect.json.JsonConverter","value.converter.schemas.cache.size":"5",`+
		`"key.converter":"org.apache.kafka.connect.json.JsonConverter","key.converter.schemas.enable":"false","key.converter.decimal.format":"NUMERIC"`)
	want := Converter{Class: "org.apache.kafka.connect.json.JsonConverter", Kind: ConverterJSON, SchemasEnable: true, CacheSize: 5, DecimalFormat: DecimalBase64}
	if c.ValueConverter != want || c.Schemaless || c.NeedsRegistry() {
		t.Fatalf("value converter %+v (schemaless %v, registry %v); want %+v", c.ValueConverter, c.Schemaless, c.NeedsRegistry(), want)
	}
	if k := c.KeyConverter; k.Kind != ConverterJSON || k.SchemasEnable || k.DecimalFormat != DecimalNumeric || k.CacheSize != 1000 {
		t.Fatalf("key converter %+v", k)
	}
}

// TestWorkerKeyConverterApplies: as for values, a connector without
// key.converter uses the worker's, with the worker's settings.
func TestWorkerKeyConverterApplies(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081\n"+
		"key.converter=org.apache.kafka.connect.converters.LongConverter\n"+
		"header.converter=org.apache.kafka.connect.storage.SimpleHeaderConverter")
	c, _ := connectorWith(t, w, ``)
	if c.KeyConverter.Kind != ConverterLong || c.ValueConverter.Kind != ConverterAvro || !c.NeedsRegistry() {
		t.Fatalf("key %+v, value %+v", c.KeyConverter, c.ValueConverter)
	}
	bad := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081\n"+
		"header.converter=org.apache.kafka.connect.json.JsonConverter")
	if _, _, err := ParseFile("c.json", []byte(`{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"}}`), bad); err == nil ||
		!strings.Contains(err.Error(), "header.converter") {
		t.Fatalf("the worker's header.converter JsonConverter: %v; want an error", err)
	}
	own, _ := connectorWith(t, w, `,"key.converter":"org.apache.kafka.connect.storage.StringConverter"`)
	if own.KeyConverter.Kind != ConverterString {
		t.Fatalf("the connector's key.converter lost to the worker's: %+v", own.KeyConverter)
	}
}

// TestAvroKeyWithItsOwnRegistryKeepsBytes: published worker files name a
// key registry other than the value's; keys stay bytes, with a warning.
func TestAvroKeyWithItsOwnRegistryKeepsBytes(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081\n"+
		"key.converter=io.confluent.connect.avro.AvroConverter\nkey.converter.schema.registry.url=http://k:8081")
	c, warns := connectorWith(t, w, ``)
	if c.KeyConverter.Kind != ConverterByteArray || len(warns) == 0 {
		t.Fatalf("key %+v, warnings %q", c.KeyConverter, warnStrings(warns))
	}
	same := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081\n"+
		"key.converter=io.confluent.connect.avro.AvroConverter\nkey.converter.schema.registry.url=http://w:8081")
	if c, _ := connectorWith(t, same, ``); c.KeyConverter.Kind != ConverterAvro {
		t.Fatalf("the same registry: key %+v", c.KeyConverter)
	}
}

// TestProtobufConverterSettings: ProtobufConverter reads through the
// registry (its URL is required), takes wrapper.for.nullables (Confluent's
// default false), and as a key needs a registry value converter.
func TestProtobufConverterSettings(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092")
	c, _ := connectorWith(t, w, `,"format.class":"io.confluent.connect.hdfs.parquet.ParquetFormat",`+
		`"value.converter":"io.confluent.connect.protobuf.ProtobufConverter","value.converter.schema.registry.url":"http://r:8081",`+
		`"key.converter":"io.confluent.connect.protobuf.ProtobufConverter","key.converter.wrapper.for.nullables":"true"`)
	want := Converter{Class: "io.confluent.connect.protobuf.ProtobufConverter", Kind: ConverterProtobuf}
	if c.ValueConverter != want || c.Schemaless || !c.NeedsRegistry() {
		t.Fatalf("value converter %+v (schemaless %v, registry %v); want %+v", c.ValueConverter, c.Schemaless, c.NeedsRegistry(), want)
	}
	if k := c.KeyConverter; k.Kind != ConverterProtobuf || !k.WrapperForNullables {
		t.Fatalf("key converter %+v", k)
	}
	for _, tc := range []struct{ name, extra, says string }{
		{"no registry URL", `,"value.converter":"io.confluent.connect.protobuf.ProtobufConverter"`, "value.converter.schema.registry.url"},
		{"key without registry values", `,"value.converter":"org.apache.kafka.connect.json.JsonConverter",` +
			`"key.converter":"io.confluent.connect.protobuf.ProtobufConverter"`, "a registry key converter"},
		{"bad wrapper.for.nullables", `,"value.converter":"io.confluent.connect.protobuf.ProtobufConverter","schema.registry.url":"http://r:8081",` +
			`"value.converter.wrapper.for.nullables":"maybe"`, "wrapper.for.nullables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseFile("c.json", []byte(`{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"`+tc.extra+`}}`), w)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v, want one naming %q", err, tc.says)
			}
		})
	}
}

// TestJSONSchemaConverterSettings: JsonSchemaConverter reads through the
// registry (values and keys, keys through the values' registry), takes
// use.optional.for.nonrequired.properties, and refuses
// json.fail.invalid.schema=true, which it cannot honour, rather than
// ignoring it.
func TestJSONSchemaConverterSettings(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081")
	const js = "io.confluent.connect.json.JsonSchemaConverter"
	const reg = `,"value.converter.schema.registry.url":"http://w:8081"`
	c, _ := connectorWith(t, w, reg+`,"value.converter":"`+js+`","value.converter.use.optional.for.nonrequired.properties":"true",`+
		`"value.converter.schemas.cache.size":"5","key.converter":"`+js+`"`)
	if v := c.ValueConverter; v.Kind != ConverterJSONSchema || !v.OptionalForNonRequired || v.CacheSize != 5 || c.Schemaless || !c.NeedsRegistry() {
		t.Fatalf("value converter %+v (schemaless %v, registry %v)", v, c.Schemaless, c.NeedsRegistry())
	}
	if k := c.KeyConverter; k.Kind != ConverterJSONSchema || k.OptionalForNonRequired || k.CacheSize != DefaultSchemaCacheSize {
		t.Fatalf("key converter %+v", k)
	}
	for _, tc := range []struct{ extra, want string }{
		{`,"value.converter":"` + js + `","value.converter.json.fail.invalid.schema":"true"`, `value.converter.json.fail.invalid.schema = "true": not honoured`},
		{`,"value.converter":"` + js + `","key.converter":"` + js + `","key.converter.json.fail.invalid.schema":"true"`, `key.converter.json.fail.invalid.schema = "true": not honoured`},
		{`,"value.converter":"org.apache.kafka.connect.storage.StringConverter","format.class":"io.confluent.connect.hdfs.string.StringFormat","key.converter":"` + js + `"`, "it needs value.converter AvroConverter, ProtobufConverter or JsonSchemaConverter"},
		{`,"value.converter":"` + js + `","value.converter.schemas.cache.size":"0"`, `value.converter.schemas.cache.size = "0"`},
		{`,"value.converter":"` + js + `","key.converter":"` + js + `","key.converter.schemas.cache.size":"many"`, `key.converter.schemas.cache.size = "many"`},
	} {
		_, _, err := ParseFile("c.json", []byte(`{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"`+reg+tc.extra+`}}`), w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.extra, err, tc.want)
		}
	}
	if c, _ := connectorWith(t, w, reg+`,"value.converter":"`+js+`","value.converter.json.fail.invalid.schema":"false"`); c.ValueConverter.Kind != ConverterJSONSchema {
		t.Fatalf("json.fail.invalid.schema=false (the default) refused: %+v", c.ValueConverter)
	}
}

// TestSchemalessValuesFormats: schemaless values are written by the string
// format, and JsonConverter's by the JSON format too; Avro and Parquet
// need a schema, and the JSON format does not write String or ByteArray
// values (Connect's would, as JSON strings).
func TestSchemalessValuesFormats(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092")
	const jsonValues = `,"value.converter":"org.apache.kafka.connect.json.JsonConverter","value.converter.schemas.enable":"false"`
	const stringValues = `,"value.converter":"org.apache.kafka.connect.storage.StringConverter"`
	for _, tc := range []struct{ converter, format, want string }{
		{jsonValues, "io.confluent.connect.hdfs.json.JsonFormat", ""},
		{jsonValues, "io.confluent.connect.hdfs.string.StringFormat", ""},
		{stringValues, "io.confluent.connect.hdfs.string.StringFormat", ""},
		{stringValues, "io.confluent.connect.hdfs.json.JsonFormat", "not strings or bytes as JSON strings"},
		{jsonValues, "io.confluent.connect.hdfs.avro.AvroFormat", "Avro and Parquet files need a schema"},
		{jsonValues, "io.confluent.connect.hdfs.parquet.ParquetFormat", "can only be written with the string or JSON format"},
	} {
		_, _, err := ParseFile("c.json", []byte(`{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"`+
			tc.converter+`,"format.class":"`+tc.format+`"}}`), w)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %s: err = %v, want %q", tc.converter, tc.format, err, tc.want)
		}
	}
}
