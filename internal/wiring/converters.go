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
func ValueConverter(c *configs.Connector, _ schema.Registry) convert.Converter {
	if v := c.ValueConverter; v.Kind == configs.ConverterJSON {
		return convert.NewJSON(convert.JSONOptions{SchemasEnable: v.SchemasEnable, CacheSize: v.CacheSize})
	}
	return nil
}

// KeyConverter is the connector's key.converter; nil: keys stay their
// bytes (ByteArrayConverter, the default). An Avro key reads through the
// value converter's registry reg (configs requires AvroConverter values).
func KeyConverter(c *configs.Connector, reg schema.Registry) convert.Converter {
	k := c.KeyConverter
	switch k.Kind {
	case configs.ConverterAvro:
		if reg == nil {
			return nil
		}
		return convert.NewAvro(reg, 0)
	case configs.ConverterJSON:
		return convert.NewJSON(convert.JSONOptions{SchemasEnable: k.SchemasEnable, CacheSize: k.CacheSize})
	case configs.ConverterString:
		return convert.String{}
	case configs.ConverterShort, configs.ConverterInteger, configs.ConverterLong, configs.ConverterFloat, configs.ConverterDouble:
		return convert.NewNumber(convert.NumberKind(k.Kind))
	}
	return nil
}
