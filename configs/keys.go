package configs

import (
	"fmt"
	"sort"
	"strings"
)

// typedKeys are the keys hdfs-sink reads into Connector.
var typedKeys = []string{
	"name", "connector.class", "tasks.max",
	"topics", "topics.regex",
	"store.url", "hdfs.url", "hadoop.conf.dir", "hadoop.home", "topics.dir", "logs.dir",
	"flush.size", "rotate.interval.ms", "rotate.schedule.interval.ms",
	"timezone", "locale", "filename.offset.zero.pad.width",
	"format.class", "avro.codec", "parquet.codec",
	"retry.backoff.ms", "shutdown.timeout.ms", "schema.compatibility",
	"partitioner.class", "partition.field.name", "partition.duration.ms", "path.format",
	"timestamp.extractor", "timestamp.field",
	"hive.integration", "hive.metastore.uris", "hive.conf.dir", "hive.home",
	"hive.database", "hive.table.name",
	"errors.tolerance", "errors.deadletterqueue.topic.name",
	"errors.deadletterqueue.context.headers.enable", "errors.log.enable",
	"behavior.on.null.values",
	"value.converter", "key.converter",
	"value.converter.schema.registry.url", "schema.registry.url",
	"value.converter.basic.auth.credentials.source", "basic.auth.credentials.source",
	"value.converter.basic.auth.user.info", "basic.auth.user.info",
	"value.converter.schema.registry.basic.auth.user.info", "schema.registry.basic.auth.user.info",
	"bootstrap.servers", "consumer.bootstrap.servers", "consumer.override.bootstrap.servers",
	"consumer.override.group.id",
	"consumer.auto.offset.reset", "consumer.override.auto.offset.reset",
	"hdfs.sink.hdfs.user", "hdfs.sink.memory.max.bytes", "hdfs.sink.rotate.max.file.bytes",
	"hdfs.sink.extra.columns", "hdfs.sink.parquet.row.group.bytes",
	"schemas.cache.config", "schema.cache.size",
	"errors.log.include.messages", "errors.deadletterqueue.topic.replication.factor",
	"hdfs.authentication.kerberos", "connect.hdfs.principal", "connect.hdfs.keytab",
	"hdfs.namenode.principal", "kerberos.ticket.renew.period.ms", "hdfs.sink.krb5.conf",
	"hive.metastore.sasl.enabled", "hive.metastore.kerberos.principal",
}

// ignoredKey is a reference connector key hdfs-sink accepts without acting
// on it. Values in quiet draw no warning (they are what hdfs-sink does anyway).
type ignoredKey struct {
	quiet  []string
	reason string
}

var ignoredKeys = map[string]ignoredKey{
	"storage.class": {[]string{"io.confluent.connect.hdfs.storage.HdfsStorage", "io.confluent.connect.hdfs3.storage.HdfsStorage"},
		"ignored: the storage backend follows store.url"},
	"directory.delim":              {[]string{"/"}, "ignored: directories are always separated by \"/\""},
	"file.delim":                   {[]string{"+"}, "ignored: file names always use \"+\" (as the reference, which hard-codes it)"},
	"enhanced.avro.schema.support": {[]string{"true"}, "ignored: Avro schemas are kept as registered"},
	"connect.meta.data":            {[]string{"true", "false"}, "ignored: Connect metadata does not exist in hdfs-sink"},
	"allow.optional.map.keys":      {[]string{"false"}, "ignored"},
	"topic.capture.groups.regex":   {nil, "ignored: ${n} capture groups in topics.dir/logs.dir are not supported"},
}

// frameworkPrefixes are key families Kafka Connect itself owns; they are
// never "unknown". Those that matter are read by name in build.
var frameworkPrefixes = []string{
	"key.converter", "value.converter", "header.converter",
	"transforms", "predicates", "errors.",
	"consumer.", "producer.", "admin.", "config.providers", "config.action.reload",
	"confluent.", // the licence settings of Confluent's connectors: hdfs-sink needs none
}

// knownKeys is every exact key name, for unknown-key detection and hints.
var knownKeys = func() map[string]bool {
	m := make(map[string]bool, len(typedKeys)+len(ignoredKeys))
	for _, k := range typedKeys {
		m[k] = true
	}
	for _, k := range completenessKeys {
		m[k] = true
	}
	for _, k := range compactionKeys {
		m[k] = true
	}
	for k := range ignoredKeys {
		m[k] = true
	}
	return m
}()

func isFrameworkKey(k string) bool {
	for _, p := range frameworkPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// keyWarnings reports unknown keys (with a hint) and ignored reference keys
// set to a value that hdfs-sink will not honour, in key order.
func keyWarnings(raw map[string]string) []Warning {
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Warning
	for _, k := range keys {
		if ig, ok := ignoredKeys[k]; ok {
			if ig.reason != "" && !contains(ig.quiet, strings.TrimSpace(raw[k])) {
				out = append(out, Warning{Key: k, Message: ig.reason})
			}
			continue
		}
		if knownKeys[k] || isFrameworkKey(k) || isClientKey(k) || consumerKeys[k] {
			continue // client properties: see checkTopLevelClientKeys
		}
		if workerKind(k) == workerNotApplicable {
			out = append(out, Warning{Key: k, Message: "a Kafka Connect worker setting, which means nothing in a connector file (nor to hdfs-sink): ignored"})
			continue
		}
		msg := "unknown key, ignored"
		if s := suggest(k); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		out = append(out, Warning{Key: k, Message: msg})
	}
	return out
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// suggest returns the known key closest to k when it is close enough to be
// a typo.
func suggest(k string) string { return closest(k, sortedKeys(knownKeys)) }

// closest returns the candidate closest to k when it is close enough to be
// a typo: at most 2 edits, or 3 for keys of 12 characters or more.
func closest(k string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, cand := range candidates {
		d := editDistance(k, cand)
		if d < bestD || (d == bestD && cand < best) {
			best, bestD = cand, d
		}
	}
	limit := 2
	if len(k) >= 12 {
		limit = 3
	}
	if bestD > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance over bytes (keys are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
