package configs

import (
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs/provider"
)

// Worker keys, sorted into what hdfs-sink does with them. README.md lists
// every one with its meaning here.

// workerKeyKind is what a worker key means to hdfs-sink.
type workerKeyKind int

const (
	workerUnknown       workerKeyKind = iota
	workerUsed                        // read by hdfs-sink (bootstrap, converters, listeners, ...)
	workerClient                      // a Kafka client property: top level goes to the admin client, as in Connect
	workerNotApplicable               // a Connect worker setting with no meaning here
)

// workerUsedKeys are read by name (prefixed families are in workerKind).
var workerUsedKeys = map[string]bool{
	"bootstrap.servers": true, "key.converter": true, "value.converter": true, "header.converter": true,
	"listeners": true, "rest.host.name": true, "rest.port": true,
	"connector.client.config.override.policy": true,
}

// workerNotApplicableKeys are Kafka Connect worker settings that describe a
// Connect cluster (its group, internal topics, plugins, REST extras), which
// hdfs-sink has no use for. They are listed once, not warned about.
var workerNotApplicableKeys = map[string]bool{
	"group.id": true, "session.timeout.ms": true, "heartbeat.interval.ms": true,
	"rebalance.timeout.ms": true, "worker.sync.timeout.ms": true, "worker.unsync.backoff.ms": true,
	"config.storage.topic": true, "config.storage.replication.factor": true,
	"offset.storage.topic": true, "offset.storage.partitions": true, "offset.storage.replication.factor": true,
	"status.storage.topic": true, "status.storage.partitions": true, "status.storage.replication.factor": true,
	"offset.storage.file.filename": true, "offset.flush.interval.ms": true, "offset.flush.timeout.ms": true,
	"plugin.path": true, "plugin.discovery": true,
	"internal.key.converter": true, "internal.value.converter": true,
	"task.shutdown.graceful.timeout.ms": true, "connect.protocol": true,
	"scheduled.rebalance.max.delay.ms": true, "exactly.once.source.support": true,
	"rest.advertised.host.name": true, "rest.advertised.port": true, "rest.advertised.listener": true,
	"access.control.allow.origin": true, "access.control.allow.methods": true,
	"admin.listeners": true, "rest.extension.classes": true, "response.http.headers.config": true,
	"metric.reporters": true, "metrics.num.samples": true, "metrics.recording.level": true,
	"metrics.sample.window.ms": true, "auto.include.jmx.reporter": true,
	"topic.tracking.enable": true, "topic.tracking.allow.reset": true, "topic.creation.enable": true,
	"config.action.reload": true,
}

// workerNotApplicablePrefixes are families of such settings.
var workerNotApplicablePrefixes = []string{
	"internal.key.converter.", "internal.value.converter.",
	"inter.worker.", "listeners.https.", "admin.listeners.", "log4j.", "rest.extension.",
	"metrics.context.", "confluent.",
}

// clientKeys are the Kafka client properties common to consumer, producer
// and admin (CommonClientConfigs and the security families are matched by
// prefix in isClientKey).
var clientKeys = map[string]bool{
	"bootstrap.servers": true, "client.dns.lookup": true, "client.id": true, "client.rack": true,
	"security.protocol": true, "request.timeout.ms": true, "retry.backoff.ms": true,
	"retry.backoff.max.ms": true, "reconnect.backoff.ms": true, "reconnect.backoff.max.ms": true,
	"connections.max.idle.ms": true, "metadata.max.age.ms": true, "metadata.recovery.strategy": true,
	"receive.buffer.bytes": true, "send.buffer.bytes": true, "default.api.timeout.ms": true,
	"socket.connection.setup.timeout.ms": true, "socket.connection.setup.timeout.max.ms": true,
}

// consumerKeys are common consumer-only properties, recognised at the top
// level of a connector file, where they reach no client.
var consumerKeys = map[string]bool{
	"max.poll.records": true, "max.poll.interval.ms": true, "session.timeout.ms": true,
	"heartbeat.interval.ms": true, "fetch.min.bytes": true, "fetch.max.bytes": true,
	"fetch.max.wait.ms": true, "max.partition.fetch.bytes": true, "auto.offset.reset": true,
	"enable.auto.commit": true, "auto.commit.interval.ms": true, "isolation.level": true,
	"group.instance.id": true, "partition.assignment.strategy": true, "group.protocol": true,
}

// isClientKey reports a Kafka client property.
func isClientKey(k string) bool {
	return clientKeys[k] || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
}

// isSecurityKey reports the keys of transport security and authentication.
func isSecurityKey(k string) bool {
	return k == "security.protocol" || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
}

func workerKind(k string) workerKeyKind {
	switch {
	case workerNotApplicableKeys[k] || hasAnyPrefix(k, workerNotApplicablePrefixes):
		return workerNotApplicable // before the families: admin.listeners is not admin.*
	case workerUsedKeys[k], provider.IsKey(k), isConverterKey(k), isClientPrefixed(k):
		return workerUsed
	case isClientKey(k):
		return workerClient
	}
	return workerUnknown
}

func isConverterKey(k string) bool {
	return strings.HasPrefix(k, "key.converter.") || strings.HasPrefix(k, "value.converter.") || strings.HasPrefix(k, "header.converter.")
}

// isClientPrefixed reports consumer.*, producer.* and admin.*: client
// properties for that client only.
func isClientPrefixed(k string) bool {
	return hasAnyPrefix(k, []string{"consumer.", "producer.", "admin."})
}

func hasAnyPrefix(k string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// workerKeys lists the exact worker keys, for "did you mean" hints.
func workerKeys() []string {
	var out []string
	for _, m := range []map[string]bool{workerUsedKeys, workerNotApplicableKeys, clientKeys} {
		for k := range m {
			out = append(out, k)
		}
	}
	return out
}
