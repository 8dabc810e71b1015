// Package wiring is the one place where a connector file becomes what the
// packages below take: sink.Config (the output format, the partitioner,
// the memory plan), the store's options (hdfs.Options, Kerberos logins),
// the schema registry client's configuration, the Kafka client's security
// (kafkaclient.Security, parsed once per connector run) and the Hive
// metastore's dial options. It also loads the worker and connector files
// as every command does (LoadChecked), checks what configs alone cannot
// (CheckWiring, Check: what `hdfs-sink check` says, also away from the
// daemon's host with --offline: offline.go), plans the process's
// memory and hides secrets in what is shown (Redact, RedactedErrors).
// The daemon and every tool of cmd/hdfs-sink use it, so that a tool
// reaches Kafka and the store exactly as the daemon would.
package wiring

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/avro"
	jsonfmt "github.com/hdfs-sink/hdfs-sink/format/json"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/sink/memory"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// ConnectorDeps are what a connector's wiring takes besides its file.
type ConnectorDeps struct {
	Store    storage.FS
	Registry schema.Registry // nil: schemaless values
	Mem      ProcessMemory
	Log      *slog.Logger
	Faults   sink.Faults
	// Security is the connector's Kafka security (KafkaSecurity), parsed
	// once per run: the readiness probe and the client share it.
	Security *kafkaclient.Security
}

// SinkConfig turns a validated connector file into the sink's wiring,
// within the process's memory. What this build cannot do yet is refused
// here, before anything is consumed.
func SinkConfig(c *configs.Connector, d ConnectorDeps) (sink.Config, error) {
	f, err := OutputFormat(c)
	if err != nil {
		return sink.Config{}, err
	}
	part, err := OutputPartitioner(c)
	if err != nil {
		return sink.Config{}, err
	}
	compat, err := schema.ParseCompatibility(string(c.SchemaCompatibility))
	if err != nil {
		return sink.Config{}, fmt.Errorf("connector %q (%s): schema.compatibility: %w", c.Name, c.Source, err)
	}
	chain, err := transformChain(c)
	if err != nil {
		return sink.Config{}, err
	}
	mem, log := d.Mem.Connector(c), d.Log
	cfg := sink.Config{
		Name: c.Name, Brokers: c.Consumer.BootstrapServers, GroupID: c.Consumer.GroupID, Topics: c.Topics,
		StartAtEnd: c.Consumer.AutoOffsetReset == configs.ResetLatest,
		WriteSettings: sink.WriteSettings{
			FS: d.Store, Format: f, Partitioner: part, TopicsDir: c.TopicsDir, LogsDir: c.LogsDir,
			Pad: c.OffsetPadWidth, FlushSize: c.FlushSize, MaxFileBytes: c.RotateMaxFileBytes, Compatibility: compat,
			RotateInterval: c.RotateInterval, RotateSchedule: c.RotateScheduleInterval, Location: c.Timezone,
			Faults: d.Faults, CountLate: c.Completeness.Enabled, Lateness: c.Completeness.Lateness,
		},
		Registry: d.Registry, ExtraColumns: c.ExtraColumns, Schemaless: c.Schemaless, Transforms: chain,
		Value: ValueConverter(c, d.Registry), Key: KeyConverter(c, d.Registry),
		ValueClass: c.ValueConverter.Class, KeyClass: c.KeyConverter.Class,
		RetryBackoff: c.RetryBackoff, ShutdownTimeout: max(c.ShutdownTimeout, 10*time.Second),
		DLQTopic: c.Errors.DLQTopic, DLQHeaders: c.Errors.DLQContextHeaders, DLQReplication: c.Errors.DLQReplication,
		LogBadRecords: c.Errors.LogEnable, LogRecordContent: c.Errors.LogMessages,
		FailOnNull: c.NullValues == configs.NullFail,
		MemoryMax:  mem.FileBudget, Budget: d.Mem.budget, Logger: log,
	}
	if (c.ValueConverter.Kind == configs.ConverterProtobuf && cfg.Value == nil) || (c.KeyConverter.Kind == configs.ConverterProtobuf && cfg.Key == nil) {
		return sink.Config{}, fmt.Errorf("connector %q (%s): ProtobufConverter needs a registry client that serves .proto schemas", c.Name, c.Source)
	}
	if (c.ValueConverter.Kind == configs.ConverterJSONSchema && cfg.Value == nil) || (c.KeyConverter.Kind == configs.ConverterJSONSchema && cfg.Key == nil) {
		return sink.Config{}, fmt.Errorf("connector %q (%s): JsonSchemaConverter needs a registry client that serves JSON schemas", c.Name, c.Source)
	}
	if c.TopicsRegex != nil {
		cfg.TopicsRegex = c.TopicsRegex.String()
	}
	if chain.ChangesTopic() {
		cfg.Route = chain.Route
	}
	if c.Errors.Tolerance == configs.ToleranceAll {
		cfg.Tolerance = sink.ToleranceAll
	}
	cfg.KafkaOpts = KafkaOpts(c, mem, d.Security, log) // once: each build logs its warnings
	cfg.KafkaFatal = kafkaFatal(d.Security)
	return cfg, nil
}

// outputFormats maps the format names configs resolves format.class to
// (Confluent class names included) to the encoders, configured from the
// connector file. It is the one name → format table.
var outputFormats = map[configs.Format]func(c *configs.Connector) (format.Format, error){
	configs.FormatAvro: func(c *configs.Connector) (format.Format, error) {
		return avro.New(avro.Options{Codec: string(c.AvroCodec)})
	},
	configs.FormatParquet: func(c *configs.Connector) (format.Format, error) {
		return parquet.New(parquet.Options{Codec: string(c.ParquetCodec), RowGroupBytes: int(c.ParquetRowGroupBytes)})
	},
	configs.FormatJSON: func(*configs.Connector) (format.Format, error) {
		return jsonfmt.New(jsonfmt.Options{})
	},
	configs.FormatString: func(*configs.Connector) (format.Format, error) {
		return jsonfmt.NewText(), nil
	},
}

// OutputFormat is the encoder of the connector's format.class.
func OutputFormat(c *configs.Connector) (format.Format, error) {
	newFormat, ok := outputFormats[c.Format]
	if !ok {
		return nil, fmt.Errorf("format: unknown format %q (supported: avro, parquet, json, string)", c.Format)
	}
	f, err := newFormat(c)
	if err != nil {
		return nil, fmt.Errorf("format %q: %w", c.Format, err)
	}
	return f, nil
}

// OutputPartitioner is the connector's partitioner.class, configured.
func OutputPartitioner(c *configs.Connector) (partitioner.Partitioner, error) {
	p, err := partitioner.New(partitioner.Config{
		Kind: partitioner.Kind(c.Partitioner.Kind), FieldNames: c.Partitioner.Fields,
		Duration: c.Partitioner.Duration, PathFormat: c.Partitioner.PathFormat, Locale: c.Locale,
		Location: c.Timezone, Extractor: partitioner.Extractor(c.Partitioner.Extractor),
		TimestampField: c.Partitioner.TimestampField,
	})
	if err != nil {
		return nil, fmt.Errorf("connector %q (%s): partitioner: %w", c.Name, c.Source, err)
	}
	return p, nil
}

// Group timeouts as Kafka Connect's workers use them, not the plain
// consumer's 45 s session: after a crash the partitions of the dead process
// stay unassigned, so nothing is written, until its session expires.
const (
	defaultSessionTimeout    = 10 * time.Second
	defaultHeartbeatInterval = 3 * time.Second
)

// KafkaOpts are the client options from the connector file: the memory
// plan's fetch bounds, group timeouts, the security settings (TLS, SASL,
// and franz-go's log lines), then the consumer.override.* keys, which win
// because franz-go applies options in order (so does isolation.level over
// the sink's read_committed).
func KafkaOpts(c *configs.Connector, mem memory.Plan, sec *kafkaclient.Security, log *slog.Logger) []kgo.Opt {
	opts := append(mem.FetchOpts(), kgo.SessionTimeout(defaultSessionTimeout), kgo.HeartbeatInterval(defaultHeartbeatInterval))
	opts = append(opts, sec.Opts(log.With("connector", c.Name))...)
	if c.Consumer.ReadUncommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	}
	return append(opts, kafkaOverrides(c.Consumer.Overrides, log.With("connector", c.Name))...)
}

// kafkaOverrides applies the consumer.override.* keys franz-go has an
// equivalent for, and says which it ignores. Security keys are not among
// them: kafkaclient applies those, or check refuses them.
func kafkaOverrides(over map[string]string, log *slog.Logger) []kgo.Opt {
	var opts []kgo.Opt
	for k, v := range over {
		if kafkaclient.IsSecurityKey(k) {
			continue
		}
		switch opt, use := consumerOverride(k, v); use {
		case overrideApplied:
			opts = append(opts, opt)
		case overrideNoEquivalent:
			log.Warn("consumer override has no franz-go equivalent here; ignored", "key", "consumer.override."+k)
		}
	}
	return opts
}

// overrideUse is what the daemon does with one consumer property.
type overrideUse int

const (
	overrideApplied      overrideUse = iota
	overrideOwned                    // hdfs-sink sets it itself; the value is ignored
	overrideNoEquivalent             // franz-go has nothing like it here; ignored
)

// consumerOverride is the franz-go option of one consumer property (not a
// security one), and whether it is applied at all.
func consumerOverride(k, v string) (kgo.Opt, overrideUse) {
	switch k {
	case "session.timeout.ms":
		if d, err := time.ParseDuration(v + "ms"); err == nil {
			return kgo.SessionTimeout(d), overrideApplied
		}
	case "heartbeat.interval.ms":
		if d, err := time.ParseDuration(v + "ms"); err == nil {
			return kgo.HeartbeatInterval(d), overrideApplied
		}
	case "client.id":
		return kgo.ClientID(v), overrideApplied
	case "group.instance.id":
		// Static membership: a restarted process with the same id takes
		// its partitions back at once, without waiting for a session to
		// expire or a rebalance. Each process needs its own id.
		return kgo.InstanceID(v), overrideApplied
	case "enable.auto.commit", "key.deserializer", "value.deserializer":
		return nil, overrideOwned
	}
	return nil, overrideNoEquivalent
}

// consumerUse splits the consumer's properties as check shows them: those
// the daemon applies (the typed ones, security, and the overrides franz-go
// has an equivalent for) and those it ignores, with why. A group.id from
// consumer.group.id is ignored: the group is consumer.override.group.id,
// else connect-<name>.
func consumerUse(c *configs.Connector) (applied map[string]string, ignored map[string]string) {
	applied, ignored = map[string]string{}, map[string]string{}
	for k, v := range c.Kafka.Consumer {
		applied[k] = v
	}
	if _, ok := applied["group.id"]; ok && strings.HasPrefix(c.Kafka.KeyOf("consumer", "group.id"), "consumer.group.id") {
		delete(applied, "group.id")
		ignored["group.id"] = "the group is consumer.override.group.id, else connect-<name>"
	}
	for k, v := range c.Consumer.Overrides {
		if kafkaclient.IsSecurityKey(k) {
			continue
		}
		switch _, use := consumerOverride(k, v); use {
		case overrideOwned:
			delete(applied, k)
			ignored[k] = "hdfs-sink sets it"
		case overrideNoEquivalent:
			delete(applied, k)
			ignored[k] = "no franz-go equivalent"
		}
	}
	return applied, ignored
}

// checkSecurity: the Kafka and registry security settings, stores read.
func checkSecurity(c *configs.Connector) []error {
	var errs []error
	if _, err := KafkaSecurity(c, nil); err != nil {
		errs = append(errs, err)
	}
	if err := producerSecurity(c); err != nil {
		errs = append(errs, err)
	}
	if c.NeedsRegistry() {
		if _, err := registryConfig(c, slog.New(slog.DiscardHandler)); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// checkWiring finds what configs alone cannot: settings the wired packages
// refuse (the output format, the partitioner, security settings that
// cannot be honoured or stores that cannot be read), listed topics whose
// committed file names would be longer than the store allows (an error at
// partition 0, a warning naming the first partition refused at assignment
// otherwise: checkTopicNames), and what hadoop.conf.dir and hive.conf.dir
// say (envcheck.go).
// check and run both use it, so run refuses what check refuses. It returns
// what check reports of each connector.
func checkWiring(conns []*configs.Connector, r *secret.Redactor, offline bool) ([]report, error) {
	var errs []error
	reports := make([]report, len(conns))
	for i, c := range conns {
		var h *hostOnly // nil: on the daemon's host
		if offline {
			ho := hostOnlyOf(c, r)
			h = &ho
		}
		warns, cerrs := checkConnector(c, h)
		errs = append(errs, cerrs...)
		rep, err := connectorReport(c, r, h)
		rep.warns = append(rep.warns, warns...)
		reports[i] = rep
		errs = append(errs, err)
	}
	return reports, errors.Join(errs...)
}

// CheckWiring is what checkWiring refuses, without the reports.
func CheckWiring(conns []*configs.Connector, r *secret.Redactor) error {
	_, err := checkWiring(conns, r, false)
	return err
}

// checkConnector is what the wired packages refuse of c; offline (h not
// nil), not what h leaves to the daemon's host.
func checkConnector(c *configs.Connector, h *hostOnly) (warns []string, errs []error) {
	if h == nil || !unresolvedAny(c, partitionerKeys) {
		if _, err := OutputPartitioner(c); err != nil {
			errs = append(errs, err)
		}
	}
	if h == nil {
		errs = append(errs, checkSecurity(c)...)
	} else {
		errs = append(errs, h.drop(checkSecurity(c))...)
	}
	// The chain refuses routers and schema transforms on schemaless values
	// when the connector is built (SinkConfig); check must refuse them too.
	if _, err := transformChain(c); err != nil {
		errs = append(errs, err)
	}
	f, err := OutputFormat(c)
	if err != nil {
		return nil, append(errs, err)
	}
	warns, nameErrs := checkTopicNames(c, f.Extension())
	return warns, append(errs, nameErrs...)
}

// transformChain builds the connector's transforms. RegexRouter is a static
// rename per consumed topic, refused where it is not one-to-one over the
// listed topics (topics.regex: at assignment, in sink); a router whose
// output varies per record (TimestampRouter, a predicate other than
// TopicNameMatches) is refused: see docs/decisions.md, D31 and the router
// decision after it.
func transformChain(c *configs.Connector) (*transform.Chain, error) {
	chain, err := transform.NewForValues(c.Transforms, c.Predicates, valueForm(c))
	if err != nil {
		return nil, fmt.Errorf("connector %q (%s): %w", c.Name, c.Source, err)
	}
	if name, why := chain.PerRecordRoute(); name != "" {
		return nil, fmt.Errorf("connector %q (%s): transforms.%s: refused: %s, so one source partition's records would land under many names, "+
			"and recovery, which finds a partition's committed offsets under its one routed name, would have to scan an unbounded set of names: "+
			"that cannot be written exactly once (RegexRouter, alone or under TopicNameMatches, is supported: one name per topic)", c.Name, c.Source, name, why)
	}
	if len(c.Topics) > 0 {
		if err := chain.CheckRoutes(c.Topics); err != nil {
			return nil, fmt.Errorf("connector %q (%s): %w", c.Name, c.Source, err)
		}
	}
	values, keys := valueForm(c), keyForm(c.KeyConverter)
	if name := chain.NeedsSchemas(values); name != "" {
		if values == transform.SchemalessJSON {
			return nil, fmt.Errorf("connector %q (%s): transforms.%s has no schemaless support in hdfs-sink yet, and this connector's values are "+
				"schemaless JSON (JsonConverter with schemas.enable=false): every record would fail it", c.Name, c.Source, name)
		}
		return nil, fmt.Errorf("connector %q (%s): transforms.%s needs values with a schema (Avro), and this connector's values are "+
			"schemaless (StringConverter or ByteArrayConverter): every record would fail it", c.Name, c.Source, name)
	}
	if name := chain.NeedsKeySchemas(keys, values); name != "" {
		if keys == transform.SchemalessJSON {
			return nil, fmt.Errorf("connector %q (%s): transforms.%s works on keys with a schema (it has no schemaless support in hdfs-sink yet), "+
				"and key.converter %s gives schemaless JSON keys: every record with a key would fail it", c.Name, c.Source, name, keyConverterName(c.KeyConverter))
		}
		return nil, fmt.Errorf("connector %q (%s): transforms.%s works on keys with a schema, and key.converter %s leaves keys "+
			"as their bytes: every record with a key would fail it (set key.converter to one that reads them: StringConverter, "+
			"a Number converter, JsonConverter, AvroConverter, ProtobufConverter or JsonSchemaConverter)", c.Name, c.Source, name, keyConverterName(c.KeyConverter))
	}
	return chain, nil
}

// valueForm is what the transforms get as values: schemaless JSON is
// text they can work on, String and ByteArray values have no fields.
func valueForm(c *configs.Connector) transform.Form {
	switch {
	case !c.Schemaless:
		return transform.WithSchema
	case c.ValueConverter.Kind == configs.ConverterJSON:
		return transform.SchemalessJSON
	}
	return transform.RawBytes
}

// keyForm is what the transforms get as keys (keysHaveSchema).
func keyForm(k configs.Converter) transform.Form {
	switch {
	case keysHaveSchema(k):
		return transform.WithSchema
	case k.Kind == configs.ConverterJSON:
		return transform.SchemalessJSON
	}
	return transform.RawBytes
}

// keysHaveSchema: every key converter but ByteArrayConverter (the default)
// and JsonConverter without schemas gives keys a schema (StringConverter
// an Avro string).
func keysHaveSchema(k configs.Converter) bool {
	switch k.Kind {
	case configs.ConverterByteArray:
		return false
	case configs.ConverterJSON:
		return k.SchemasEnable
	}
	return true
}

func keyConverterName(k configs.Converter) string {
	if k.Class == "" {
		return "(ByteArrayConverter, the default)"
	}
	switch k.Kind {
	case configs.ConverterJSON:
		return k.Class + " with schemas.enable=false"
	case configs.ConverterByteArray:
		if !strings.HasSuffix(k.Class, "ByteArrayConverter") {
			return k.Class + " (with a registry of its own: keys kept as bytes, see the warning)"
		}
	}
	return k.Class
}
