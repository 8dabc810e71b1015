package configs

import (
	"fmt"
	"strings"
)

// validate holds every rule that spans keys. It checks presence in the raw
// map rather than typed results, so a key already reported as malformed is
// not reported again as missing.
func (p *parser) validate(c *Connector) {
	p.validateSources()
	p.validateSchedule(c)
	p.validatePartitioner(c)
	p.validateHive(c)
	p.validateRegistry(c)
	p.validateDLQ(c)
	p.warnWeakSecurity(c)
}

// validateDLQ: a dead-letter topic the connector also consumes would feed
// its bad records back to itself (Connect refuses it too).
func (p *parser) validateDLQ(c *Connector) {
	const key = "errors.deadletterqueue.topic.name"
	dlq := c.Errors.DLQTopic
	switch {
	case dlq == "":
	case c.consumes(dlq) && c.TopicsRegex != nil:
		p.fail(key, dlq, "is matched by topics.regex: the connector would consume its own dead-letter topic")
	case c.consumes(dlq):
		p.fail(key, dlq, "is in topics: the connector would consume its own dead-letter topic")
	case c.Errors.Tolerance == ToleranceNone:
		p.warn(key, "unused while errors.tolerance is none: the first bad record stops the connector")
	}
}

func (p *parser) validateSources() {
	switch hasT, hasR := p.has("topics"), p.has("topics.regex"); {
	case hasT && hasR:
		p.fail("topics.regex", p.raw["topics.regex"], "set either topics or topics.regex, not both")
	case !hasT && !hasR:
		p.missing("topics", "set topics (a comma list) or topics.regex")
	}
	if _, _, ok := p.pick("store.url", "hdfs.url"); !ok {
		p.missing("store.url", "set store.url (or hdfs.url) to hdfs://host[:port][/path] or file:///path")
	}
	if _, _, ok := p.pick("consumer.override.bootstrap.servers", "consumer.bootstrap.servers", "bootstrap.servers"); !ok {
		p.missing("bootstrap.servers", "the Kafka brokers, a host:port list: "+whereFrom("bootstrap.servers")+
			" (consumer.bootstrap.servers and consumer.override.bootstrap.servers work too)")
	}
}

const reasonTimezone = `an IANA time zone such as "UTC" or "Europe/Berlin"`

func (p *parser) validateSchedule(c *Connector) {
	if c.RotateScheduleInterval > 0 && !p.has("timezone") {
		p.missing("timezone", "required when rotate.schedule.interval.ms > 0 ("+reasonTimezone+")")
	}
}

func (p *parser) validatePartitioner(c *Connector) {
	pt := c.Partitioner
	name := pt.Kind
	switch {
	case pt.Kind == PartitionField && !p.has("partition.field.name"):
		p.missing("partition.field.name", "required by the field partitioner (a comma list of record field names)")
	case pt.Kind == PartitionTimeBased:
		if v, ok := p.get("partition.duration.ms"); !ok {
			p.missing("partition.duration.ms", "required by the timebased partitioner (an integer > 0)")
		} else if pt.Duration <= 0 && !p.failed("partition.duration.ms") {
			p.fail("partition.duration.ms", v, "must be an integer > 0 for the timebased partitioner")
		}
		if !p.has("path.format") || pt.PathFormat == "" {
			p.missing("path.format", "required by the timebased partitioner (a Joda pattern such as 'year'=YYYY/'month'=MM/'day'=dd)")
		}
	}
	if !pt.TimeBased() {
		return
	}
	if !p.has("locale") {
		p.missing("locale", fmt.Sprintf("required by the %s partitioner (such as en_US)", name))
	}
	if !p.has("timezone") {
		p.missing("timezone", fmt.Sprintf("required by the %s partitioner (%s)", name, reasonTimezone))
	}
	if pt.Extractor == ExtractRecordField && pt.TimestampField == "" {
		p.fail("timestamp.field", "", "must name the record field holding the timestamp when timestamp.extractor is RecordField")
	}
}

// failed reports whether key already has an error, to avoid a second one.
func (p *parser) failed(key string) bool {
	for _, e := range p.errs {
		if fe, ok := e.(*FieldError); ok && fe.Key == key {
			return true
		}
	}
	return false
}

func (p *parser) validateHive(c *Connector) {
	if !c.Hive.Enabled {
		return
	}
	if sasl := c.Hive.SASLEnabled; sasl != nil && *sasl && !c.Kerberos.Enabled {
		p.fail("hive.metastore.sasl.enabled", "true", "needs hdfs.authentication.kerberos=true: the Metastore login uses connect.hdfs.principal and connect.hdfs.keytab")
	}
	if !p.has("hive.metastore.uris") && !p.has("hive.conf.dir") && !p.has("hive.home") {
		p.missing("hive.metastore.uris", "required when hive.integration is true (thrift://host:port; hdfs-sink has no embedded metastore), in the connector file or in <hive.conf.dir>/hive-site.xml")
	}
	if c.SchemaCompatibility == CompatNone && !p.failed("schema.compatibility") {
		p.fail("schema.compatibility", string(c.SchemaCompatibility), "must be BACKWARD, FORWARD or FULL when hive.integration is true")
	}
	if c.Format == FormatJSON || c.Format == FormatString {
		p.fail("format.class", p.raw["format.class"], "hive.integration needs the avro or parquet format")
	}
	if c.Partitioner.Kind == PartitionTimeBased && c.Partitioner.PathFormat != "" && !hivePathFormat(c.Partitioner.PathFormat) {
		p.fail("path.format", c.Partitioner.PathFormat,
			"with hive.integration=true must be a prefix of 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/'minute'=mm (year first, later levels optional but in this order)")
	}
}

// hivePathFormat reports whether a Joda path format names its levels
// 'year'=…/'month'=…/… in order, so Hive partition columns follow from it.
func hivePathFormat(f string) bool {
	levels := []string{"year", "month", "day", "hour", "minute"}
	parts := strings.Split(f, "/")
	if len(parts) > len(levels) {
		return false
	}
	for i, part := range parts {
		if !strings.HasPrefix(part, "'"+levels[i]+"'=") || len(part) == len(levels[i])+3 {
			return false
		}
	}
	return true
}

func (p *parser) validateRegistry(c *Connector) {
	if c.Schemaless {
		if why := schemalessFormatProblem(c); why != "" && !p.failed("format.class") && !p.failed("value.converter") {
			p.fail("value.converter", p.raw["value.converter"], "schemaless values ("+schemalessWhy(c.ValueConverter)+") "+why)
		}
		if len(c.ExtraColumns) > 0 {
			p.fail("hdfs.sink.extra.columns", p.raw["hdfs.sink.extra.columns"], "needs values with a schema (value.converter AvroConverter, or JsonConverter with schemas.enable=true)")
		}
		return
	}
	if !c.NeedsRegistry() {
		return
	}
	if _, _, ok := p.pick("value.converter.schema.registry.url", "schema.registry.url"); !ok && !p.failed("value.converter") {
		p.missing("value.converter.schema.registry.url", "the schema registry URL list: "+whereFrom("value.converter.schema.registry.url")+
			" (with value.converter; schema.registry.url works in a connector file too)")
	}
	if c.Registry.CredentialsSource == CredentialsUserInfo && c.Registry.UserInfo == "" && !p.anyFailed("basic.auth.user.info") {
		p.missing("value.converter.basic.auth.user.info", "required (user:password) when basic.auth.credentials.source is USER_INFO")
	}
}

// schemalessFormatProblem says why the format cannot write the
// connector's schemaless values ("" if it can). The JSON format writes
// JsonConverter's values as the JSON they are; Connect's JsonFormat would
// write String and ByteArray values as JSON strings, which it does not.
func schemalessFormatProblem(c *Connector) string {
	switch {
	case c.Format == FormatString:
		return ""
	case c.Format == FormatJSON && c.ValueConverter.Kind == ConverterJSON:
		return ""
	case c.Format == FormatJSON:
		return "can only be written with the string format (format.class StringFormat): the JSON format writes JSON values " +
			"(JsonConverter with schemas.enable=false), not strings or bytes as JSON strings"
	}
	return "can only be written with the string or JSON format: Avro and Parquet files need a schema"
}

// schemalessWhy names the setting that makes values schemaless.
func schemalessWhy(v Converter) string {
	if v.Kind == ConverterJSON {
		return "value.converter JsonConverter with value.converter.schemas.enable=false"
	}
	return "value.converter " + v.Class
}

// anyFailed reports whether any key ending in suffix already has an error.
func (p *parser) anyFailed(suffix string) bool {
	for _, e := range p.errs {
		if fe, ok := e.(*FieldError); ok && strings.HasSuffix(fe.Key, suffix) {
			return true
		}
	}
	return false
}
