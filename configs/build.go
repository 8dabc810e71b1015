package configs

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // timezone validation must not depend on the host's zoneinfo

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/configs/zoneid"
)

// build reads every key into a Connector, applying defaults. Single-key
// errors are collected here; rules spanning keys are in validate.
func (p *parser) build() *Connector {
	c := &Connector{Name: p.name, Source: p.source, Raw: p.raw}
	p.framework(c)
	p.topics(c)
	p.store(c)
	p.kerberos(c)
	p.writer(c)
	p.formats(c)
	p.partitioner(c)
	p.completeness(c)
	p.hive(c)
	p.compaction(c)
	p.errorHandling(c)
	c.Kafka = kafkaClients(p.set, p.w)
	p.registry(c)
	p.consumer(c)
	p.checkTopLevelClientKeys(c.Kafka)
	p.warnUnappliedClients(c.Kafka)
	c.Raw, c.set = p.raw, p.set
	return c
}

// connectorClasses are the reference's classes and the aliases Connect
// accepts for a plugin: its simple name, and that name without "Connector".
var connectorClasses = map[string]bool{
	"io.confluent.connect.hdfs.HdfsSinkConnector":   true,
	"io.confluent.connect.hdfs3.Hdfs3SinkConnector": true,
	"HdfsSinkConnector":                             true, "HdfsSink": true, "Hdfs3SinkConnector": true, "Hdfs3Sink": true,
}

func (p *parser) framework(c *Connector) {
	if v, ok := p.get("connector.class"); ok && !connectorClasses[v] {
		p.fail("connector.class", v, "must be io.confluent.connect.hdfs.HdfsSinkConnector or io.confluent.connect.hdfs3.Hdfs3SinkConnector (or an alias: HdfsSinkConnector, HdfsSink, Hdfs3SinkConnector, Hdfs3Sink)")
	} else {
		c.Class = v
	}
	c.TasksMax = int(p.integer("tasks.max", DefaultTasksMax, 1, reasonPositive))
	p.transforms(c)
}

// topicName is a legal Kafka topic name.
var topicName = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

const reasonTopic = "not a valid Kafka topic name (letters, digits, '.', '_', '-'; 1 to 249 characters)"

// IsTopicName reports a legal Kafka topic name: what the sink accepts as a
// topic, and as a name RegexRouter routes to (it names directories, files
// and a Hive table); ReasonTopic says why another is not.
func IsTopicName(t string) bool { return topicName.MatchString(t) && t != "." && t != ".." }

// ReasonTopic is why a name IsTopicName refuses is refused.
const ReasonTopic = reasonTopic

func (p *parser) topics(c *Connector) {
	for _, t := range p.list("topics") {
		if !IsTopicName(t) {
			p.fail("topics", p.raw["topics"], fmt.Sprintf("topic %q is %s", t, reasonTopic))
			continue
		}
		c.Topics = append(c.Topics, t)
	}
	if v, _ := p.get("topics.regex"); v != "" {
		// Java's Pattern.matches matches the whole name; Go's MatchString
		// finds substrings, so anchor it.
		if _, err := regexp.Compile(v); err != nil {
			p.fail("topics.regex", v, "must be a regular expression in RE2 syntax: "+err.Error())
		} else {
			c.TopicsRegex = regexp.MustCompile(`^(?:` + v + `)$`)
		}
	}
}

const reasonStoreURL = "must be hdfs://host[:port][/path] or file:///path"

func (p *parser) store(c *Connector) {
	c.HadoopConfDir = p.str("hadoop.conf.dir", "")
	c.HadoopHome = p.str("hadoop.home", "")
	c.TopicsDirTemplate = p.dirTemplate("topics.dir", DefaultTopicsDir)
	c.LogsDirTemplate = p.dirTemplate("logs.dir", DefaultLogsDir)
	c.HDFSUser = p.str("hdfs.sink.hdfs.user", "")
	if v, ok := p.get("hdfs.sink.hdfs.user"); ok && v == "" {
		p.fail("hdfs.sink.hdfs.user", v, "must be a non-empty user name (leave it out for the default)")
	} else if !ok {
		c.HDFSUser = defaultHDFSUser()
	}
	key, v, ok := p.pick("store.url", "hdfs.url")
	if !ok {
		return // required: reported by validate
	}
	if key == "store.url" && p.has("hdfs.url") {
		p.warn("hdfs.url", "ignored because store.url is set")
	}
	u, err := parseStoreURL(v)
	if err != nil {
		p.fail(key, v, reasonStoreURL+" ("+err.Error()+")")
		return
	}
	c.Store = u
}

func parseStoreURL(v string) (StoreURL, error) {
	u, err := url.Parse(v)
	if err != nil {
		return StoreURL{}, err
	}
	s := StoreURL{Raw: v, Scheme: strings.ToLower(u.Scheme), Host: u.Host, Path: path.Clean("/" + u.Path)}
	switch {
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return StoreURL{}, fmt.Errorf("user info, query and fragment are not allowed")
	case s.Scheme == "hdfs" && u.Hostname() == "":
		return StoreURL{}, fmt.Errorf("no NameNode host")
	case s.Scheme == "hdfs" && u.Port() != "" && !validPort(u.Port()):
		return StoreURL{}, fmt.Errorf("bad port %q", u.Port())
	case s.Scheme == "file" && u.Host != "" && u.Host != "localhost":
		return StoreURL{}, fmt.Errorf("file URLs take no host")
	case s.Scheme == "file" && u.Path == "":
		return StoreURL{}, fmt.Errorf("no path")
	case s.Scheme != "hdfs" && s.Scheme != "file":
		return StoreURL{}, fmt.Errorf("scheme %q is not supported", u.Scheme)
	}
	if s.Scheme == "file" {
		s.Host = ""
	}
	return s, nil
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 65536
}

var placeholder = regexp.MustCompile(`\$\{[^}]*\}`)

// dirTemplate reads topics.dir / logs.dir: non-empty, only ${topic}.
func (p *parser) dirTemplate(key, def string) string {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	if v == "" || strings.Trim(v, "/") == "" {
		p.fail(key, v, "must be a non-empty directory path")
		return def
	}
	for _, m := range placeholder.FindAllString(v, -1) {
		if m != topicVar {
			p.fail(key, v, "only ${topic} may be substituted (${n} capture groups are not supported)")
			return def
		}
	}
	// Joined under the store URL's path (a leading "/" too); a topic name
	// can hold no "/" and is never "." or "..".
	switch rel := path.Clean(strings.TrimLeft(strings.ReplaceAll(v, topicVar, "t"), "/")); {
	case rel == ".." || strings.HasPrefix(rel, "../"):
		p.fail(key, v, "must stay under the store URL's path: \"..\" would lead out of it (into another connector's files, or anywhere in the store)")
		return def
	case rel == ".":
		p.fail(key, v, "must name a directory under the store URL's path, not that path itself")
		return def
	}
	return v
}

// checkPathFormat refuses a path.format whose literal text makes a ".."
// directory: the partition directories would lead out of the topic's
// directory (into another topic's, or out of topics.dir).
func (p *parser) checkPathFormat(v string) {
	for _, elem := range strings.Split(v, "/") {
		if lit := strings.ReplaceAll(elem, "'", ""); lit == ".." {
			p.fail("path.format", v, "a \"..\" directory would lead out of the topic's directory: each level must name a directory below it")
			return
		}
	}
}

func (p *parser) writer(c *Connector) {
	if _, ok := p.get("flush.size"); !ok {
		p.missing("flush.size", reasonPositive)
	}
	c.FlushSize = p.integer("flush.size", 0, 1, reasonPositive)
	c.RotateInterval = p.millis("rotate.interval.ms", DefaultRotateIntervalMs, math64Min, reasonAnyInt)
	c.RotateScheduleInterval = p.millis("rotate.schedule.interval.ms", DefaultRotateScheduleMs, math64Min, reasonAnyInt)
	c.OffsetPadWidth = p.padWidth()
	c.RetryBackoff = p.retryBackoff()
	c.ShutdownTimeout = p.millis("shutdown.timeout.ms", DefaultShutdownTimeoutMs, 0, reasonNonNegative)
	c.MemoryMaxBytes = p.integer("hdfs.sink.memory.max.bytes", DefaultMemoryMaxBytes, 1, reasonPositive)
	c.RotateMaxFileBytes = p.integer("hdfs.sink.rotate.max.file.bytes", DefaultRotateMaxFileBytes, 0, reasonNonNegative)
	c.ExtraColumns = p.extraColumns()
	c.ParquetRowGroupBytes = p.integer("hdfs.sink.parquet.row.group.bytes", DefaultParquetRowGroupBytes, 1<<10, "must be an integer >= 1024")
	c.SchemaCacheSize = p.schemaCache()
	p.timezone(c)
	if v, _ := p.get("locale"); v != "" && !localeRE.MatchString(v) {
		p.fail("locale", v, `must be a locale such as "en", "en_US" or "en-US"`)
	} else {
		c.Locale = v
	}
}

// retryBackoff reads retry.backoff.ms, the first wait after a failure
// (doubling while it lasts). 0 would retry a failing service without a
// pause, in a loop of errors: the default is used instead, with a warning
// (the sink, the Hive syncer and the store's first connection used to
// read 0 as 5 s, 1 s and no wait at all).
func (p *parser) retryBackoff() time.Duration {
	d := p.millis("retry.backoff.ms", DefaultRetryBackoffMs, 0, reasonNonNegative)
	if d == 0 && !p.failed("retry.backoff.ms") {
		p.warn("retry.backoff.ms", fmt.Sprintf("0 would retry a failing service without a pause: the default %d is used", DefaultRetryBackoffMs))
		return DefaultRetryBackoffMs * time.Millisecond
	}
	return d
}

// maxPadWidth bounds filename.offset.zero.pad.width. The reference allows
// any width >= 0, but a committed file is one name of at most 255 bytes
// (HDFS's default component limit, Linux's NAME_MAX): the two offsets at
// this width, a one-character topic, partition 0, the three "+" and the
// longest extension (".parquet") leave (255-5-8)/2 = 121 digits. A wider
// setting could not commit a single file of any topic.
const maxPadWidth = (255 - len("t+0++") - len(".parquet")) / 2

// padWidth reads filename.offset.zero.pad.width.
func (p *parser) padWidth() int {
	const key = "filename.offset.zero.pad.width"
	n := p.integer(key, DefaultOffsetPadWidth, 1, reasonPositive)
	if n > int64(maxPadWidth) {
		p.fail(key, p.raw[key], fmt.Sprintf("must be at most %d: committed file names hold two offsets of this width and must fit in 255 bytes (Kafka offsets have at most 19 digits; the default 10 is the reference's)", maxPadWidth))
		return DefaultOffsetPadWidth
	}
	return int(n)
}

// schemaCache reads schemas.cache.config, the reference's key for the size
// of its schema cache; schema.cache.size is what versions before 5.0
// called it.
func (p *parser) schemaCache() int {
	key, _, ok := p.pick("schemas.cache.config", "schema.cache.size")
	if !ok {
		return DefaultSchemaCacheSize
	}
	if p.has("schema.cache.size") && key == "schemas.cache.config" {
		p.warn("schema.cache.size", "ignored because schemas.cache.config is set")
	}
	return int(p.integer(key, DefaultSchemaCacheSize, 1, reasonPositive))
}

// ExtraColumnNames are the record metadata hdfs.sink.extra.columns may add.
var ExtraColumnNames = []string{"topic", "partition", "offset", "timestamp", "key", "headers"}

func (p *parser) extraColumns() []string {
	cols := p.list("hdfs.sink.extra.columns")
	for _, col := range cols {
		if !contains(ExtraColumnNames, col) {
			p.fail("hdfs.sink.extra.columns", col, "each must be one of "+strings.Join(ExtraColumnNames, ", "))
			return nil
		}
	}
	return cols
}

const math64Min = -1 << 63

var localeRE = regexp.MustCompile(`^[A-Za-z]{2,8}([_-][A-Za-z0-9]{1,8})*$`)

func (p *parser) timezone(c *Connector) {
	v, _ := p.get("timezone")
	if v == "" {
		return
	}
	loc, err := zoneid.Parse(v)
	if err != nil {
		p.fail("timezone", v, zoneid.Reason)
		return
	}
	c.Timezone, c.TimezoneName = loc, v
}

var formatClasses = map[string]Format{
	"avro": FormatAvro, "parquet": FormatParquet, "json": FormatJSON, "string": FormatString,
	"io.confluent.connect.hdfs.avro.avroformat":        FormatAvro,
	"io.confluent.connect.hdfs.parquet.parquetformat":  FormatParquet,
	"io.confluent.connect.hdfs.json.jsonformat":        FormatJSON,
	"io.confluent.connect.hdfs.string.stringformat":    FormatString,
	"io.confluent.connect.hdfs3.avro.avroformat":       FormatAvro,
	"io.confluent.connect.hdfs3.parquet.parquetformat": FormatParquet,
	"io.confluent.connect.hdfs3.json.jsonformat":       FormatJSON,
	"io.confluent.connect.hdfs3.string.stringformat":   FormatString,
}

var unsupportedFormats = map[string]string{
	"orc": "ORC is not supported by hdfs-sink (avro, parquet, json or string)",
	"io.confluent.connect.hdfs.orc.orcformat":  "ORC is not supported by hdfs-sink (avro, parquet, json or string)",
	"io.confluent.connect.hdfs3.orc.orcformat": "ORC is not supported by hdfs-sink (avro, parquet, json or string)",
}

var avroCodecs = map[string]AvroCodec{"null": AvroNull, "deflate": AvroDeflate, "snappy": AvroSnappy}

var parquetCodecs = map[string]ParquetCodec{
	"snappy": ParquetSnappy, "gzip": ParquetGzip, "zstd": ParquetZstd,
	"none": ParquetUncompressed, "uncompressed": ParquetUncompressed,
}

var compatibilities = map[string]Compatibility{
	"none": CompatNone, "backward": CompatBackward, "forward": CompatForward, "full": CompatFull,
}

func (p *parser) formats(c *Connector) {
	c.Format = choice(p, "format.class", DefaultFormat, formatClasses, unsupportedFormats,
		"must be an AvroFormat, ParquetFormat, JsonFormat or StringFormat class of io.confluent.connect.hdfs or hdfs3, or avro, parquet, json, string")
	c.AvroCodec = choice(p, "avro.codec", DefaultAvroCodec, avroCodecs,
		map[string]string{"bzip2": "bzip2 is not supported by hdfs-sink (null, deflate or snappy)"},
		"must be null, deflate or snappy")
	c.ParquetCodec = choice(p, "parquet.codec", DefaultParquetCodec, parquetCodecs, nil,
		"must be snappy, gzip, zstd, none or uncompressed")
	c.SchemaCompatibility = p.compatibility()
}

// compatibility reads schema.compatibility in upper case only, as the
// reference does. The reference maps any other spelling ("backward") to
// NONE without a word; hdfs-sink says so instead.
func (p *parser) compatibility() Compatibility {
	v, ok := p.get("schema.compatibility")
	if !ok {
		return DefaultCompatibility
	}
	up := Compatibility(strings.ToUpper(v))
	switch _, known := compatibilities[strings.ToLower(v)]; {
	case known && string(up) == v:
		return up
	case known:
		p.fail("schema.compatibility", v, fmt.Sprintf("must be upper case (%s): the reference connector reads only NONE, BACKWARD, FORWARD and FULL, and would silently use NONE for %q", up, v))
	default:
		p.fail("schema.compatibility", v, "must be NONE, BACKWARD, FORWARD or FULL")
	}
	return DefaultCompatibility
}

var partitionerClasses = func() map[string]PartitionerKind {
	m := map[string]PartitionerKind{}
	for short, k := range map[string]PartitionerKind{
		"Default": PartitionDefault, "Field": PartitionField, "TimeBased": PartitionTimeBased,
		"Daily": PartitionDaily, "Hourly": PartitionHourly,
	} {
		m[strings.ToLower(short)] = k
		m[strings.ToLower("io.confluent.connect.storage.partitioner."+short+"Partitioner")] = k
		m[strings.ToLower("io.confluent.connect.hdfs.partitioner."+short+"Partitioner")] = k
	}
	return m
}()

var extractors = func() map[string]TimestampExtractor {
	m := map[string]TimestampExtractor{}
	for _, e := range []TimestampExtractor{ExtractWallclock, ExtractRecord, ExtractRecordField} {
		m[strings.ToLower(string(e))] = e
		m[strings.ToLower("io.confluent.connect.storage.partitioner.TimeBasedPartitioner$"+string(e)+"TimestampExtractor")] = e
	}
	return m
}()

func (p *parser) partitioner(c *Connector) {
	pt := &c.Partitioner
	pt.Kind = choice(p, "partitioner.class", DefaultPartitioner, partitionerClasses, nil,
		"must be a Default, Field, TimeBased, Daily or Hourly partitioner class of io.confluent.connect.storage.partitioner or io.confluent.connect.hdfs.partitioner, or default, field, timebased, daily, hourly")
	pt.Fields = p.list("partition.field.name")
	pt.Duration = p.millis("partition.duration.ms", DefaultPartitionDurationMs, math64Min, reasonAnyInt)
	pt.PathFormat = strings.TrimRight(p.str("path.format", ""), "/")
	if pt.Kind == PartitionTimeBased {
		p.checkPathFormat(pt.PathFormat)
	}
	pt.Extractor = choice(p, "timestamp.extractor", DefaultExtractor, extractors, nil,
		"must be Wallclock, Record or RecordField (custom extractor classes are not supported)")
	pt.TimestampField = p.str("timestamp.field", DefaultTimestampField)
	switch pt.Kind {
	case PartitionDaily, PartitionHourly:
		for _, k := range []string{"path.format", "partition.duration.ms"} {
			if p.has(k) {
				p.warn(k, "ignored: the "+string(pt.Kind)+" partitioner has a fixed layout")
			}
		}
		pt.Duration, pt.PathFormat = 24*time.Hour, dailyPathFormat
		if pt.Kind == PartitionHourly {
			pt.Duration, pt.PathFormat = time.Hour, hourlyPathFormat
		}
	}
}

var (
	hiveIdentRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	thriftURIRE = regexp.MustCompile(`^thrift://[^/:]+:[0-9]+/?$`)
)

func (p *parser) hive(c *Connector) {
	h := &c.Hive
	h.Enabled = p.boolean("hive.integration", false)
	h.ConfDir = p.str("hive.conf.dir", "")
	h.Home = p.str("hive.home", "")
	for _, u := range p.list("hive.metastore.uris") {
		if !thriftURIRE.MatchString(u) {
			p.fail("hive.metastore.uris", p.raw["hive.metastore.uris"], fmt.Sprintf("%q must be thrift://host:port", u))
			continue
		}
		h.MetastoreURIs = append(h.MetastoreURIs, strings.TrimSuffix(u, "/"))
	}
	if p.has("hive.metastore.sasl.enabled") {
		v := p.boolean("hive.metastore.sasl.enabled", false)
		h.SASLEnabled = &v
	}
	h.KerberosPrincipal = p.str("hive.metastore.kerberos.principal", "")
	h.Database = p.str("hive.database", DefaultHiveDatabase)
	if !hiveIdentRE.MatchString(h.Database) {
		p.fail("hive.database", h.Database, "must be a Hive identifier (letters, digits, '_')")
	}
	h.TableTemplate = p.str("hive.table.name", DefaultHiveTable)
	sample := strings.ReplaceAll(h.TableTemplate, topicVar, "t")
	switch {
	case !strings.Contains(h.TableTemplate, topicVar):
		// The reference refuses it too: every topic would share one table.
		p.fail("hive.table.name", h.TableTemplate, "must contain ${topic}, as in the reference connector: each topic has its own table")
	case !hiveIdentRE.MatchString(hiveIdent(sample)):
		p.fail("hive.table.name", h.TableTemplate, "must be a Hive identifier (letters, digits, '_', with '.' and '-' turned into '_'); only ${topic} may be substituted")
	}
}

func (p *parser) errorHandling(c *Connector) {
	e := &c.Errors
	e.Tolerance = choice(p, "errors.tolerance", DefaultTolerance,
		map[string]Tolerance{"none": ToleranceNone, "all": ToleranceAll}, nil, "must be none or all")
	if v, _ := p.get("errors.deadletterqueue.topic.name"); v != "" {
		if !topicName.MatchString(v) {
			p.fail("errors.deadletterqueue.topic.name", v, reasonTopic)
		}
		e.DLQTopic = v
	}
	e.DLQContextHeaders = p.boolean("errors.deadletterqueue.context.headers.enable", false)
	e.DLQReplication = p.replication("errors.deadletterqueue.topic.replication.factor")
	e.LogEnable = p.boolean("errors.log.enable", false)
	e.LogMessages = p.boolean("errors.log.include.messages", false)
	c.NullValues = choice(p, "behavior.on.null.values", DefaultNullValues,
		map[string]NullValueBehavior{"ignore": NullIgnore, "fail": NullFail}, nil, "must be ignore or fail")
}

const avroConverter = "io.confluent.connect.avro.AvroConverter"

// Converter class names hdfs-sink reads (converters.go has them all).
const (
	stringConverter    = "org.apache.kafka.connect.storage.StringConverter"
	byteArrayConverter = "org.apache.kafka.connect.converters.ByteArrayConverter"
)

func (p *parser) registry(c *Connector) {
	p.converters(c)
	r := &c.Registry
	r.Props = p.registryProps()
	r.CredentialsSource = choice(p, firstSet(p, "value.converter.basic.auth.credentials.source", "basic.auth.credentials.source"),
		DefaultCredentialsSrc, map[string]CredentialsSource{"url": CredentialsURL, "user_info": CredentialsUserInfo, "sasl_inherit": CredentialsSASLInherit},
		nil, "must be USER_INFO, URL or SASL_INHERIT")
	if key, v, ok := p.pick("value.converter.schema.registry.url", "schema.registry.url"); ok {
		p.registryURLs(r, key, v)
	}
	key, info, ok := p.pick("value.converter.basic.auth.user.info", "value.converter.schema.registry.basic.auth.user.info",
		"basic.auth.user.info", "schema.registry.basic.auth.user.info")
	switch {
	case !ok:
	case r.CredentialsSource != CredentialsUserInfo:
		p.warn(key, "ignored because basic.auth.credentials.source is not USER_INFO")
	case !strings.Contains(info, ":"):
		p.fail(key, secret.Hidden, "must be user:password")
	default:
		r.UserInfo = info
	}
	p.registrySecurity(c)
}

// registryProps collects the registry client's settings: the connector
// file's unprefixed aliases, then the value converter's (which win).
func (p *parser) registryProps() map[string]string {
	out := map[string]string{}
	for _, k := range sortedKeys(p.own) {
		if isRegistryProp(k) {
			out[k] = p.raw[k]
		}
	}
	for _, k := range sortedKeys(p.raw) {
		if name, ok := strings.CutPrefix(k, "value.converter."); ok && isRegistryProp(name) {
			out[name] = p.raw[k]
		}
	}
	return out
}

func isRegistryProp(k string) bool {
	return strings.HasPrefix(k, "schema.registry.") || strings.HasPrefix(k, "basic.auth.") || strings.HasPrefix(k, "bearer.auth.")
}

// firstSet returns the first key present (even empty), else the first key.
func firstSet(p *parser, keys ...string) string {
	for _, k := range keys {
		if _, ok := p.raw[k]; ok {
			return k
		}
	}
	return keys[0]
}

func (p *parser) registryURLs(r *SchemaRegistry, key, v string) {
	for _, s := range splitList(v) {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.fail(key, secret.URL(v), fmt.Sprintf("%q must be an http:// or https:// URL", secret.URL(s)))
			continue
		}
		if u.User != nil {
			if r.CredentialsSource == CredentialsURL && r.UserInfo == "" {
				r.UserInfo = u.User.String()
			}
			u.User = nil
		}
		r.URLs = append(r.URLs, strings.TrimSuffix(u.String(), "/"))
	}
}

func (p *parser) consumer(c *Connector) {
	k := &c.Consumer
	if key, v, ok := p.pick("consumer.override.bootstrap.servers", "consumer.bootstrap.servers", "bootstrap.servers"); ok {
		for _, hp := range splitList(v) {
			if _, port, err := net.SplitHostPort(hp); err != nil || !validPort(port) {
				p.fail(key, v, fmt.Sprintf("%q must be host:port", hp))
				continue
			}
			k.BootstrapServers = append(k.BootstrapServers, hp)
		}
	}
	k.GroupID = DefaultGroupPrefix + c.Name
	if v, ok := p.get("consumer.override.group.id"); ok {
		if v == "" {
			p.fail("consumer.override.group.id", v, "must be a non-empty group id (leave it out for connect-<name>)")
		} else {
			k.GroupID = v
		}
	}
	k.AutoOffsetReset = choice(p, firstSet(p, "consumer.override.auto.offset.reset", "consumer.auto.offset.reset"),
		DefaultAutoOffsetReset, map[string]OffsetReset{"earliest": ResetEarliest, "latest": ResetLatest, "none": ResetNone},
		nil, "must be earliest, latest or none")
	k.ReadUncommitted = p.isolation()
	k.Overrides = p.consumerOverrides(c.Kafka.from[clientConsumer])
}

// isolation reads isolation.level. hdfs-sink's default is read_committed
// (a plain consumer's is read_uncommitted): records of aborted
// transactions are never written.
func (p *parser) isolation() bool {
	key := firstSet(p, "consumer.override.isolation.level", "consumer.isolation.level")
	v, ok := p.get(key)
	if !ok {
		return false
	}
	switch strings.ToLower(v) {
	case "read_committed":
		return false
	case "read_uncommitted":
		return true
	}
	p.fail(key, v, "must be read_committed or read_uncommitted")
	return false
}

// replication reads a topic replication factor: -1 (the broker's
// default) or 1 to 32767, as Connect's errors.deadletterqueue.topic.replication.factor.
func (p *parser) replication(key string) int16 {
	n := p.integer(key, DefaultDLQReplication, -1, "must be -1 (the broker's default) or an integer from 1 to 32767")
	if n == 0 || n > 32767 {
		p.fail(key, p.raw[key], "must be -1 (the broker's default) or an integer from 1 to 32767")
		return DefaultDLQReplication
	}
	return int16(n)
}

// handledConsumerKeys are consumer properties read into typed fields.
var handledConsumerKeys = map[string]bool{"bootstrap.servers": true, "group.id": true, "auto.offset.reset": true, "isolation.level": true}

// consumerOverrides are the resolved consumer properties hdfs-sink has no
// typed field for and that are not security settings (those are checked
// apart): cmd applies those franz-go has an equivalent for.
func (p *parser) consumerOverrides(props map[string]clientProp) map[string]string {
	out := map[string]string{}
	for name, prop := range props {
		if prop.key == "consumer.group.id" {
			p.warn(prop.key, "ignored: the group id is consumer.override.group.id, else connect-<name>")
			continue
		}
		if handledConsumerKeys[name] || isSecurityKey(name) {
			continue
		}
		out[name] = prop.value
	}
	return out
}

// kerberos reads the reference's Kerberos keys. As in the reference,
// principal and keytab mean nothing unless hdfs.authentication.kerberos is
// true; saying so beats acting on half a setting.
func (p *parser) kerberos(c *Connector) {
	k := &c.Kerberos
	k.Enabled = p.boolean("hdfs.authentication.kerberos", false)
	k.Principal = p.str("connect.hdfs.principal", "")
	k.Keytab = p.str("connect.hdfs.keytab", "")
	k.NameNodePrincipal = p.str("hdfs.namenode.principal", "")
	k.Krb5Conf = p.str("hdfs.sink.krb5.conf", "")
	k.RenewPeriod = p.millis("kerberos.ticket.renew.period.ms", DefaultKerberosRenewMs, 1000, "must be an integer >= 1000 (milliseconds)")
	keys := []string{"connect.hdfs.principal", "connect.hdfs.keytab", "hdfs.namenode.principal", "kerberos.ticket.renew.period.ms", "hdfs.sink.krb5.conf"}
	if !k.Enabled {
		for _, key := range keys {
			if v, _ := p.get(key); v != "" && !(key == "kerberos.ticket.renew.period.ms" && v == "3600000") {
				p.warn(key, "ignored: hdfs.authentication.kerberos is not true")
			}
		}
		return
	}
	if k.Principal == "" {
		p.missing("connect.hdfs.principal", "required with hdfs.authentication.kerberos=true (the principal to log in as, e.g. connect/_HOST@EXAMPLE.COM)")
	}
	if k.Keytab == "" {
		p.missing("connect.hdfs.keytab", "required with hdfs.authentication.kerberos=true (the keytab file of connect.hdfs.principal)")
	}
	if c.Store.Scheme == "file" {
		p.warn("hdfs.authentication.kerberos", "ignored for a file:// store")
	}
}
