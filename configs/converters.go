package configs

import "strings"

// ConverterKind is what a key.converter or value.converter class reads.
type ConverterKind string

// The converters hdfs-sink has (configs/README.md, "Converters").
const (
	ConverterAvro     ConverterKind = "avro"     // io.confluent.connect.avro.AvroConverter
	ConverterJSON     ConverterKind = "json"     // org.apache.kafka.connect.json.JsonConverter
	ConverterProtobuf ConverterKind = "protobuf" // io.confluent.connect.protobuf.ProtobufConverter
	// ConverterJSONSchema is io.confluent.connect.json.JsonSchemaConverter.
	ConverterJSONSchema ConverterKind = "jsonschema"
	ConverterString     ConverterKind = "string"    // org.apache.kafka.connect.storage.StringConverter
	ConverterByteArray  ConverterKind = "bytearray" // org.apache.kafka.connect.converters.ByteArrayConverter
	ConverterShort      ConverterKind = "short"     // org.apache.kafka.connect.converters.ShortConverter
	ConverterInteger    ConverterKind = "integer"   // …IntegerConverter
	ConverterLong       ConverterKind = "long"      // …LongConverter
	ConverterFloat      ConverterKind = "float"     // …FloatConverter
	ConverterDouble     ConverterKind = "double"    // …DoubleConverter
)

// Connect's class names of the converters, and those refused with a reason.
const (
	jsonConverter       = "org.apache.kafka.connect.json.JsonConverter"
	protobufConverter   = "io.confluent.connect.protobuf.ProtobufConverter"
	jsonSchemaConverter = "io.confluent.connect.json.JsonSchemaConverter"
	numberConverters    = "org.apache.kafka.connect.converters."
)

var converterClasses = map[string]ConverterKind{
	strings.ToLower(avroConverter):                         ConverterAvro,
	strings.ToLower(jsonConverter):                         ConverterJSON,
	strings.ToLower(protobufConverter):                     ConverterProtobuf,
	strings.ToLower(jsonSchemaConverter):                   ConverterJSONSchema,
	strings.ToLower(stringConverter):                       ConverterString,
	strings.ToLower(byteArrayConverter):                    ConverterByteArray,
	strings.ToLower(numberConverters + "ShortConverter"):   ConverterShort,
	strings.ToLower(numberConverters + "IntegerConverter"): ConverterInteger,
	strings.ToLower(numberConverters + "LongConverter"):    ConverterLong,
	strings.ToLower(numberConverters + "FloatConverter"):   ConverterFloat,
	strings.ToLower(numberConverters + "DoubleConverter"):  ConverterDouble,
}

var unsupportedConverters = map[string]string{}

// Header converters: headers reach transforms as Kafka's bytes, which is
// what SimpleHeaderConverter (Connect's default), StringConverter and
// ByteArrayConverter leave them for the transforms hdfs-sink has.
var headerConverters = map[string]bool{
	"org.apache.kafka.connect.storage.simpleheaderconverter": true,
	strings.ToLower(stringConverter):                         true,
	strings.ToLower(byteArrayConverter):                      true,
}

// DecimalFormat is JsonConverter's decimal.format.
type DecimalFormat string

// decimal.format's values; reading accepts both whatever it says.
const (
	DecimalBase64  DecimalFormat = "BASE64"
	DecimalNumeric DecimalFormat = "NUMERIC"
)

// Converter is key.converter or value.converter with its settings.
type Converter struct {
	Class string // as written; empty: the default
	Kind  ConverterKind
	// JsonConverter: schemas.enable (default true) and decimal.format
	// (default BASE64).
	SchemasEnable bool
	DecimalFormat DecimalFormat
	// JsonConverter and JsonSchemaConverter: schemas.cache.size (default
	// 1000), how many schemas stay compiled.
	CacheSize int
	// ProtobufConverter: wrapper.for.nullables (default false).
	WrapperForNullables bool
	// JsonSchemaConverter: use.optional.for.nonrequired.properties
	// (default false).
	OptionalForNonRequired bool
}

// HasSchema reports whether values read by c carry a schema (Avro, JSON
// with embedded schemas, the Number converters).
func (c Converter) HasSchema() bool {
	switch c.Kind {
	case ConverterString, ConverterByteArray:
		return false
	case ConverterJSON:
		return c.SchemasEnable
	}
	return true
}

// NeedsRegistry reports whether the value converter reads through the
// schema registry.
func (c *Connector) NeedsRegistry() bool { return c.ValueConverter.readsRegistry() }

// readsRegistry: the converters whose values name a registry schema id.
func (c Converter) readsRegistry() bool {
	return c.Kind == ConverterAvro || c.Kind == ConverterProtobuf || c.Kind == ConverterJSONSchema
}

// converters reads value.converter, key.converter and header.converter.
// The value converter defaults to AvroConverter (hdfs-sink's default since
// its start); the key converter to ByteArrayConverter: keys are kept as
// their bytes unless a file says how to read them.
func (p *parser) converters(c *Connector) {
	c.ValueConverter = p.converter("value.converter", ConverterAvro)
	c.KeyConverter = p.converter("key.converter", ConverterByteArray)
	c.Schemaless = !c.ValueConverter.HasSchema()
	switch c.ValueConverter.Kind {
	case ConverterShort, ConverterInteger, ConverterLong, ConverterFloat, ConverterDouble:
		p.fail("value.converter", c.ValueConverter.Class, "the Number converters are supported for keys only (key.converter)")
	}
	if c.KeyConverter.readsRegistry() && !c.ValueConverter.readsRegistry() && !p.failed("value.converter") {
		p.fail("key.converter", c.KeyConverter.Class, "a registry key converter reads through the value converter's registry: it needs value.converter AvroConverter, ProtobufConverter or JsonSchemaConverter")
	}
	if v, ok := p.get("header.converter"); ok && !headerConverters[strings.ToLower(v)] {
		p.fail("header.converter", v, "must be org.apache.kafka.connect.storage.SimpleHeaderConverter (the default), "+
			stringConverter+" or "+byteArrayConverter+": headers are kept as their bytes")
	}
}

func (p *parser) converter(key string, def ConverterKind) Converter {
	class, _ := p.get(key)
	c := Converter{Class: class, Kind: def}
	if class != "" {
		c.Kind = choice(p, key, def, converterClasses, unsupportedConverters,
			"must be one of "+avroConverter+", "+protobufConverter+", "+jsonSchemaConverter+", "+jsonConverter+", "+stringConverter+", "+byteArrayConverter+
				", or "+numberConverters+"{Short,Integer,Long,Float,Double}Converter")
	}
	if c.Kind == ConverterJSON {
		c.SchemasEnable = p.boolean(key+".schemas.enable", true)
		c.CacheSize = int(p.integer(key+".schemas.cache.size", DefaultSchemaCacheSize, 1, reasonPositive))
		c.DecimalFormat = choice(p, key+".decimal.format", DecimalBase64,
			map[string]DecimalFormat{"base64": DecimalBase64, "numeric": DecimalNumeric}, nil, "must be BASE64 or NUMERIC")
	}
	if c.Kind == ConverterProtobuf {
		c.WrapperForNullables = p.boolean(key+".wrapper.for.nullables", false)
	}
	if c.Kind == ConverterJSONSchema {
		p.jsonSchemaConverter(key, &c)
	}
	if key == "key.converter" && c.readsRegistry() && !p.sameKeyRegistry(map[ConverterKind]string{ConverterAvro: "an Avro", ConverterProtobuf: "a Protobuf", ConverterJSONSchema: "a JSON Schema"}[c.Kind]) {
		c.Kind = ConverterByteArray
	}
	return c
}

// jsonSchemaConverter reads JsonSchemaConverter's settings. It checks each
// value's JSON types and required fields against its schema, not the other
// JSON Schema keywords, so json.fail.invalid.schema=true (validate every
// value, fail on any violation) cannot be honoured and is refused rather
// than ignored.
func (p *parser) jsonSchemaConverter(key string, c *Converter) {
	c.CacheSize = int(p.integer(key+".schemas.cache.size", DefaultSchemaCacheSize, 1, reasonPositive))
	c.OptionalForNonRequired = p.boolean(key+".use.optional.for.nonrequired.properties", false)
	if p.boolean(key+".json.fail.invalid.schema", false) {
		p.fail(key+".json.fail.invalid.schema", "true", "not honoured: hdfs-sink checks a value's JSON types and required fields against its schema, "+
			"not the other JSON Schema keywords (pattern, minimum, enum, ...); leave it false (the default)")
	}
}

// sameKeyRegistry: an Avro key converter reads through the value
// converter's registry client. Worker files often name a key registry of
// their own (a leftover that Connect ignored when no transform read the
// key); rather than refusing them, keys stay their bytes, with a warning.
func (p *parser) sameKeyRegistry(which string) bool {
	k, v, ok := p.pick("key.converter.schema.registry.url")
	if !ok {
		return true
	}
	if _, own, _ := p.pick("value.converter.schema.registry.url", "schema.registry.url"); strings.TrimSpace(own) == v {
		return true
	}
	p.warn(k, "differs from the value converter's registry: "+which+" key converter with a registry of its own is not supported yet, so keys are kept as their bytes (ByteArrayConverter)")
	return false
}
