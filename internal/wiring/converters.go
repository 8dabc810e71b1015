package wiring

import (
	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// ValueConverter is the connector's value.converter; nil leaves the sink
// its default: Confluent's AvroConverter through reg (with the sink's
// bounded lookup wait), or the bytes as they are when values are
// schemaless (StringConverter, ByteArrayConverter).
func ValueConverter(c *configs.Connector, reg schema.Registry) convert.Converter {
	switch v := c.ValueConverter; v.Kind {
	case configs.ConverterJSON:
		return convert.NewJSON(convert.JSONOptions{SchemasEnable: v.SchemasEnable, CacheSize: v.CacheSize})
	case configs.ConverterProtobuf:
		return protobufConverter(v, reg)
	case configs.ConverterJSONSchema:
		return jsonSchemaConverter(v, reg, false)
	}
	return nil
}

// jsonSchemaConverter reads through reg when it serves schemas of any type
// (schema/registry.Client does); nil otherwise, which SinkConfig refuses
// rather than fall back to Avro.
func jsonSchemaConverter(v configs.Converter, reg schema.Registry, key bool) convert.Converter {
	raws, ok := reg.(convert.RawSchemas)
	if !ok {
		return nil
	}
	return convert.NewJSONSchema(raws, convert.JSONSchemaOptions{OptionalForNonRequired: v.OptionalForNonRequired, CacheSize: v.CacheSize, Key: key})
}

// protobufConverter reads through reg when it serves schemas of any type
// (schema/registry.Client does); nil otherwise, which SinkConfig refuses.
func protobufConverter(v configs.Converter, reg schema.Registry) convert.Converter {
	texts, ok := reg.(convert.SchemaTexts)
	if !ok {
		return nil
	}
	return convert.NewProtobuf(texts, convert.ProtobufOptions{WrapperForNullables: v.WrapperForNullables}, 0)
}

// KeyConverter is the connector's key.converter; nil: keys stay their
// bytes (ByteArrayConverter, the default). An Avro key reads through the
// value converter's registry reg (configs requires a registry value
// converter), and so do Protobuf and JSON Schema keys.
func KeyConverter(c *configs.Connector, reg schema.Registry) convert.Converter {
	k := c.KeyConverter
	switch k.Kind {
	case configs.ConverterAvro:
		if reg == nil {
			return nil
		}
		return convert.NewAvro(reg, 0)
	case configs.ConverterProtobuf:
		return protobufConverter(k, reg)
	case configs.ConverterJSONSchema:
		return jsonSchemaConverter(k, reg, true)
	case configs.ConverterJSON:
		return convert.NewJSON(convert.JSONOptions{SchemasEnable: k.SchemasEnable, CacheSize: k.CacheSize})
	case configs.ConverterString:
		return convert.String{}
	case configs.ConverterShort, configs.ConverterInteger, configs.ConverterLong, configs.ConverterFloat, configs.ConverterDouble:
		return convert.NewNumber(convert.NumberKind(k.Kind))
	}
	return nil
}
