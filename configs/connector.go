// Package configs owns the configuration of hdfs-sink: it reads Kafka
// Connect connector files in every shape Connect users have (REST bodies,
// exports, standalone .properties) and Kafka Connect worker files (or the
// CONNECT_* environment of Confluent's image), resolves config provider
// placeholders with the worker's providers (configs/provider), puts each
// connector's settings over the worker's as Connect does, applies the
// reference connector's defaults, validates every key and all cross-field
// rules, and returns one typed Connector per connector. The files' syntax
// is configs/syntax's, what is a secret and how values are printed
// configs/secret's. Nothing is consumed or written before a configuration
// has passed through this package; it imports nothing from the project
// but those leaves of its own.
//
// Keys, defaults and deviations from Confluent's kafka-connect-hdfs are listed
// in README.md next to this file.
package configs

import (
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// Connector is one validated connector configuration.
type Connector struct {
	Name   string // connector name; the default consumer group is "connect-<Name>"
	Source string // file it was read from, for messages
	Class  string // connector.class as written ("" when absent)

	TasksMax int // tasks.max: informational only, hdfs-sink sizes its own work

	Topics      []string       // topics, in file order; nil when TopicsRegex is used
	TopicsRegex *regexp.Regexp // topics.regex, anchored to match whole topic names

	Store         StoreURL // store.url, else hdfs.url
	HadoopConfDir string
	HadoopHome    string
	HDFSUser      string // hdfs.sink.hdfs.user
	Kerberos      Kerberos

	TopicsDirTemplate string // topics.dir as written; may hold ${topic}
	LogsDirTemplate   string // logs.dir as written; may hold ${topic}

	FlushSize              int64
	RotateInterval         time.Duration // rotate.interval.ms; 0 = off
	RotateScheduleInterval time.Duration // rotate.schedule.interval.ms; 0 = off
	RotateMaxFileBytes     int64         // hdfs.sink.rotate.max.file.bytes; 0 = off
	MemoryMaxBytes         int64         // hdfs.sink.memory.max.bytes
	// ExtraColumns are hdfs.sink.extra.columns: Kafka metadata appended to
	// every record as kafka_<name> columns (off when empty).
	ExtraColumns []string
	// Transforms and Predicates are Connect's single message transforms
	// (transforms, predicates), applied after decoding (package transform).
	Transforms []TransformSpec
	Predicates []PredicateSpec
	// ParquetRowGroupBytes is hdfs.sink.parquet.row.group.bytes.
	ParquetRowGroupBytes int64
	OffsetPadWidth       int // filename.offset.zero.pad.width
	RetryBackoff         time.Duration
	ShutdownTimeout      time.Duration

	Timezone     *time.Location // nil when timezone is not set
	TimezoneName string
	Locale       string

	Format       Format
	AvroCodec    AvroCodec
	ParquetCodec ParquetCodec

	SchemaCompatibility Compatibility
	Partitioner         Partitioner
	Completeness        Completeness // hdfs.sink.completeness.*
	Compaction          Compaction   // hdfs.sink.compaction.*
	Hive                Hive
	Errors              ErrorHandling
	NullValues          NullValueBehavior
	Registry            SchemaRegistry
	// ValueConverter and KeyConverter are value.converter and
	// key.converter with their settings (converters.go).
	ValueConverter, KeyConverter Converter
	// Schemaless is true when the value converter gives no schema
	// (StringConverter, ByteArrayConverter, JsonConverter with
	// schemas.enable=false): values are written as they are.
	Schemaless bool
	Consumer   Consumer
	// Kafka are the Kafka client properties of the consumer, the
	// dead-letter producer and the admin client, resolved with Connect's
	// precedence (see Kafka).
	Kafka Kafka
	// SchemaCacheSize is schemas.cache.config: how many writer schemas the
	// registry client keeps.
	SchemaCacheSize int

	// Raw holds every setting the connector reads (its own over the
	// worker's), placeholders resolved. It holds secrets: print it with
	// Redactor.ShowMap, never as it is.
	Raw map[string]string
	// Written is the connector's own keys as its file states them (no
	// worker keys, no defaults, config provider placeholders intact), with
	// its name: what Kafka Connect returns as its config. A literal secret
	// is in it as written: show it with wiring.RedactWritten.
	Written map[string]string

	set settings // Raw with origins and secrecy
}

// Show prints the connector's value of key, Hidden for a secret.
func (c *Connector) Show(key string) string {
	if secret.IsKey(key) {
		return secret.Hidden
	}
	return secret.URL(c.Raw[key])
}

// Unresolved lists the keys whose values hold config provider
// placeholders left unresolved, because the files were read offline
// (ReadOptions): their values were not validated. Sorted; nil when read
// on the daemon's host.
func (c *Connector) Unresolved() []string {
	var out []string
	for _, k := range sortedKeys(c.set) {
		if c.set[k].unresolved {
			out = append(out, k)
		}
	}
	return out
}

// StoreURL is the parsed store.url / hdfs.url.
type StoreURL struct {
	Raw    string
	Scheme string // "hdfs" or "file"
	// Host is "host:port", "host" (NameNode port 8020 implied, or an HA
	// nameservice resolved through hadoop.conf.dir); empty for file://.
	Host string
	Path string // cleaned absolute path, "/" when the URL has none
}

// Format is the output file format.
type Format string

// Formats.
const (
	FormatAvro    Format = "avro"
	FormatParquet Format = "parquet"
	FormatJSON    Format = "json"
	FormatString  Format = "string"
)

// AvroCodec is the Avro container block codec.
type AvroCodec string

// Avro codecs.
const (
	AvroNull    AvroCodec = "null"
	AvroDeflate AvroCodec = "deflate"
	AvroSnappy  AvroCodec = "snappy"
)

// ParquetCodec is the Parquet page compression.
type ParquetCodec string

// Parquet codecs ("none" is read as ParquetUncompressed).
const (
	ParquetSnappy       ParquetCodec = "snappy"
	ParquetGzip         ParquetCodec = "gzip"
	ParquetZstd         ParquetCodec = "zstd"
	ParquetUncompressed ParquetCodec = "uncompressed"
)

// Compatibility is schema.compatibility.
type Compatibility string

// Compatibility modes.
const (
	CompatNone     Compatibility = "NONE"
	CompatBackward Compatibility = "BACKWARD"
	CompatForward  Compatibility = "FORWARD"
	CompatFull     Compatibility = "FULL"
)

// PartitionerKind is the partitioner family.
type PartitionerKind string

// Partitioners.
const (
	PartitionDefault   PartitionerKind = "default"
	PartitionField     PartitionerKind = "field"
	PartitionTimeBased PartitionerKind = "timebased"
	PartitionDaily     PartitionerKind = "daily"
	PartitionHourly    PartitionerKind = "hourly"
)

// TimestampExtractor is timestamp.extractor.
type TimestampExtractor string

// Extractors.
const (
	ExtractWallclock   TimestampExtractor = "Wallclock"
	ExtractRecord      TimestampExtractor = "Record"
	ExtractRecordField TimestampExtractor = "RecordField"
)

// Partitioner holds the partitioner settings. For Daily and Hourly the
// fixed Duration and PathFormat of the reference are filled in, so users of
// this struct need not special-case them.
type Partitioner struct {
	Kind           PartitionerKind
	Fields         []string      // partition.field.name (Field)
	Duration       time.Duration // partition.duration.ms (time-based)
	PathFormat     string        // path.format, Joda syntax, trailing "/" removed
	Extractor      TimestampExtractor
	TimestampField string
}

// TimeBased reports whether the partitioner buckets by time.
func (p Partitioner) TimeBased() bool {
	return p.Kind == PartitionTimeBased || p.Kind == PartitionDaily || p.Kind == PartitionHourly
}

// Kerberos holds the reference connector's Kerberos keys. One login
// (principal and keytab) serves HDFS, the Hive Metastore and, when its
// JAAS names the same principal and keytab, Kafka.
type Kerberos struct {
	Enabled           bool          // hdfs.authentication.kerberos
	Principal         string        // connect.hdfs.principal, may hold _HOST
	Keytab            string        // connect.hdfs.keytab
	NameNodePrincipal string        // hdfs.namenode.principal ("" = dfs.namenode.kerberos.principal of hadoop.conf.dir)
	RenewPeriod       time.Duration // kerberos.ticket.renew.period.ms
	Krb5Conf          string        // hdfs.sink.krb5.conf ("" = $KRB5_CONFIG, else /etc/krb5.conf)
}

// Hive holds the Hive metastore settings.
type Hive struct {
	Enabled       bool
	MetastoreURIs []string // thrift://host:port
	ConfDir       string
	Home          string
	// SASLEnabled is hive.metastore.sasl.enabled when the connector sets
	// it (nil: hive-site.xml in ConfDir decides, else off).
	SASLEnabled *bool
	// KerberosPrincipal is hive.metastore.kerberos.principal ("": from hive-site.xml).
	KerberosPrincipal string
	Database          string
	TableTemplate     string // hive.table.name as written; may hold ${topic}
}

// Tolerance is errors.tolerance.
type Tolerance string

// Tolerances.
const (
	ToleranceNone Tolerance = "none"
	ToleranceAll  Tolerance = "all"
)

// ErrorHandling holds the Connect errors.* settings hdfs-sink honours.
type ErrorHandling struct {
	Tolerance         Tolerance
	DLQTopic          string
	DLQContextHeaders bool  // errors.deadletterqueue.context.headers.enable
	DLQReplication    int16 // errors.deadletterqueue.topic.replication.factor; -1: the broker's default
	LogEnable         bool  // errors.log.enable: log each tolerated bad record
	LogMessages       bool  // errors.log.include.messages: with its key and value
}

// NullValueBehavior is behavior.on.null.values (tombstones).
type NullValueBehavior string

// Null value behaviours.
const (
	NullIgnore NullValueBehavior = "ignore"
	NullFail   NullValueBehavior = "fail"
)

// CredentialsSource is basic.auth.credentials.source.
type CredentialsSource string

// Credential sources.
const (
	CredentialsURL      CredentialsSource = "URL"
	CredentialsUserInfo CredentialsSource = "USER_INFO"
)

// SchemaRegistry holds the value converter's registry settings.
type SchemaRegistry struct {
	// URLs without user info and without a trailing "/"; a path prefix such
	// as /apis/ccompat/v7 is kept.
	URLs              []string
	CredentialsSource CredentialsSource
	// UserInfo is "user:password" from basic.auth.user.info (USER_INFO) or
	// from the first URL that carries it (URL); empty for no auth.
	UserInfo string
	// Security is TLS and bearer auth (registry_security.go).
	Security RegistrySecurity
	// Props are every schema.registry.*, basic.auth.* and bearer.auth.*
	// setting of the value converter, its "value.converter." prefix
	// removed (the connector file's unprefixed aliases under them), for
	// the registry client's TLS and authentication. They hold secrets.
	Props map[string]string
}

// OffsetReset is the consumer's auto.offset.reset.
type OffsetReset string

// Offset reset policies.
const (
	ResetEarliest OffsetReset = "earliest"
	ResetLatest   OffsetReset = "latest"
	ResetNone     OffsetReset = "none"
)

// Consumer holds the Kafka consumer settings.
type Consumer struct {
	BootstrapServers []string // host:port
	GroupID          string
	AutoOffsetReset  OffsetReset
	// ReadUncommitted is isolation.level=read_uncommitted; hdfs-sink reads
	// committed records only unless asked.
	ReadUncommitted bool
	// Overrides are the other consumer properties (Kafka.Consumer without
	// the typed ones and the security ones), applied where franz-go has an
	// equivalent.
	Overrides map[string]string
}

const topicVar = "${topic}"

// TopicsDir is the store-absolute directory under which committed files of
// topic live (as "<TopicsDir>/<topic>/<partition path>/…"): store path joined
// with topics.dir, ${topic} expanded.
func (c *Connector) TopicsDir(topic string) string {
	return path.Join("/", c.Store.Path, strings.ReplaceAll(c.TopicsDirTemplate, topicVar, topic))
}

// LogsDir is the store-absolute directory holding topic's WALs
// ("<LogsDir>/<topic>/<partition>/log"): store path joined with logs.dir,
// ${topic} expanded.
func (c *Connector) LogsDir(topic string) string {
	return path.Join("/", c.Store.Path, strings.ReplaceAll(c.LogsDirTemplate, topicVar, topic))
}

// HiveTable is the Hive table name for topic: hive.table.name with ${topic}
// expanded and "." and "-" replaced by "_", as the reference does, because
// Hive identifiers cannot hold them.
func (c *Connector) HiveTable(topic string) string {
	return hiveIdent(strings.ReplaceAll(c.Hive.TableTemplate, topicVar, topic))
}

func hiveIdent(s string) string {
	return strings.NewReplacer(".", "_", "-", "_").Replace(s)
}
