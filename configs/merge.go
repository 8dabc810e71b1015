package configs

import (
	"fmt"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// Kafka holds one connector's Kafka client properties, resolved as Kafka
// Connect resolves them for a sink task, prefixes removed:
//
//   - Consumer: bootstrap.servers, then the worker's consumer.*, then the
//     connector's consumer.override.*.
//   - Producer (the dead-letter producer): bootstrap.servers, then the
//     worker's producer.*, then the connector's producer.override.*.
//   - Admin (creates the dead-letter topic): the worker's top-level client
//     properties (security.protocol, sasl.*, ssl.*, ...), then admin.*,
//     then admin.override.*.
//
// A later layer wins. The worker's top-level security.protocol, sasl.* and
// ssl.* reach the admin client only: Connect uses them for its own
// clients, and a sink consumer needs consumer.security.protocol (and so
// on) as in Connect. Connector files may also carry bootstrap.servers and
// consumer.* themselves (hdfs-sink reads them as worker settings); they
// win over the worker file's. Values may be secrets: print them with
// Redactor.ShowMap.
type Kafka struct {
	Consumer, Producer, Admin map[string]string

	from map[string]map[string]clientProp // per client, per property: which key set it
}

// KeyOf names the key that set property prop of client ("consumer",
// "producer", "admin") as its file spells it, with where it came from when
// not the connector file ("consumer.sasl.jaas.config (from worker file
// connect.properties)"); messages about a client property use it.
func (k Kafka) KeyOf(client, prop string) string {
	cp, ok := k.from[client][prop]
	switch {
	case !ok:
		return client + ".override." + prop
	case cp.origin != "":
		return cp.key + " (from " + cp.origin + ")"
	}
	return cp.key
}

// clientProp is one resolved client property and the key that set it.
type clientProp struct {
	value, key, origin string
	unresolved         bool // read offline: a placeholder, not the value
}

// Unresolved reports whether property prop of client holds a config
// provider placeholder left unresolved (read offline, ReadOptions): what
// is made of its value cannot be checked.
func (k Kafka) Unresolved(client, prop string) bool { return k.from[client][prop].unresolved }

// Client names, as the maps and messages call them.
const (
	clientConsumer = "consumer"
	clientProducer = "producer"
	clientAdmin    = "admin"
)

// effective merges a connector's own settings over the worker's ones that
// apply to connectors. Converters follow Connect's rule: a connector that
// sets value.converter uses only its own value.converter.* settings; one
// that does not uses the worker's converter with the worker's settings;
// key.converter and header.converter alike.
func effective(own settings, w *Worker) (settings, []Warning) {
	eff := settings{}
	for k, st := range own {
		eff[k] = st
	}
	if w == nil {
		return eff, nil
	}
	var warns []Warning
	for _, conv := range []string{"value.converter", "key.converter", "header.converter"} {
		warns = append(warns, mergeConverter(eff, own, w.set, conv)...)
	}
	for k, st := range w.set {
		if _, mine := own[k]; !mine && appliesToConnectors(k) {
			eff[k] = st
		}
	}
	return eff, warns
}

// appliesToConnectors reports the worker keys a connector inherits (the
// converters are merged apart). The worker's top-level client properties
// are not among them: they reach the admin client only (kafkaClients),
// and some share a name with a connector key (retry.backoff.ms).
func appliesToConnectors(k string) bool {
	return k == "bootstrap.servers" || isClientPrefixed(k)
}

func mergeConverter(eff, own, worker settings, conv string) []Warning {
	prefix := conv + "."
	_, ownClass := own[conv]
	_, workerClass := worker[conv]
	var warns []Warning
	switch {
	case ownClass:
		return nil // the connector's converter, with its settings only
	case workerClass:
		for _, k := range sortedKeys(own) {
			if strings.HasPrefix(k, prefix) {
				delete(eff, k)
				warns = append(warns, Warning{Key: k, Message: "ignored: the connector file sets no " + conv +
					", so the worker's " + conv + " applies with the worker's " + prefix + "* settings, as in Kafka Connect (set " + conv + " here to use this file's settings)"})
			}
		}
	}
	for k, st := range worker {
		_, mine := own[k] // with the worker's class, the worker's settings replace the file's
		if (k == conv || strings.HasPrefix(k, prefix)) && (workerClass || !mine) {
			eff[k] = st
		}
	}
	return warns
}

// kafkaClients resolves the three clients' properties from the effective
// settings and, for the admin client, the worker's top-level client
// properties (w may be nil).
func kafkaClients(eff settings, w *Worker) Kafka {
	top := settings{}
	if w != nil {
		for k, st := range w.set {
			if workerKind(k) == workerClient {
				top[k] = st
			}
		}
	}
	k := Kafka{from: map[string]map[string]clientProp{}}
	for _, client := range []string{clientConsumer, clientProducer, clientAdmin} {
		k.from[client] = clientMap(eff, top, client)
	}
	k.Consumer, k.Producer, k.Admin = plain(k.from[clientConsumer]), plain(k.from[clientProducer]), plain(k.from[clientAdmin])
	return k
}

func clientMap(eff, top settings, client string) map[string]clientProp {
	out := map[string]clientProp{}
	put := func(name, key string, st setting) {
		v := st.value
		if !secret.IsKey(name) {
			v = strings.TrimSpace(v) // Kafka trims strings, not passwords
		}
		out[name] = clientProp{value: v, key: key, origin: st.origin, unresolved: st.unresolved}
	}
	if client == clientAdmin {
		for _, k := range sortedKeys(top) {
			put(k, k, top[k])
		}
	}
	if st, ok := eff["bootstrap.servers"]; ok {
		put("bootstrap.servers", "bootstrap.servers", st)
	}
	for _, layer := range []string{client + ".", client + ".override."} {
		for _, k := range sortedKeys(eff) {
			name, ok := strings.CutPrefix(k, layer)
			if ok && !(layer == client+"." && strings.HasPrefix(name, "override.")) {
				put(name, k, eff[k])
			}
		}
	}
	return out
}

func plain(m map[string]clientProp) map[string]string {
	out := make(map[string]string, len(m))
	for k, p := range m {
		out[k] = p.value
	}
	return out
}

// overrideLimits are the client properties connector.client.config.override.policy
// Principal lets a connector file set (Connect's PrincipalConnectorClientConfigOverridePolicy).
var principalOverrides = map[string]bool{"sasl.jaas.config": true, "sasl.mechanism": true, "security.protocol": true}

// checkOverridePolicy applies the worker's policy to the connector's own
// client properties: its *.override.* keys, and the consumer.* /
// producer.* / admin.* keys hdfs-sink also reads from a connector file.
func (p *parser) checkOverridePolicy(policy string) {
	if policy == "" || policy == PolicyAll {
		return
	}
	for _, k := range sortedKeys(p.own) {
		if !isClientPrefixed(k) {
			continue
		}
		name := k[strings.IndexByte(k, '.')+1:]
		name = strings.TrimPrefix(name, "override.")
		if policy == PolicyPrincipal && principalOverrides[name] {
			continue
		}
		p.fail(k, p.raw[k], fmt.Sprintf("the worker's connector.client.config.override.policy (%s) does not allow a connector to set this client property", policy))
	}
}

// checkTopLevelClientKeys: Kafka client properties at the top level of a
// connector file reach no client in Kafka Connect (only bootstrap.servers,
// which hdfs-sink reads as a worker setting). One equal to what the
// consumer uses anyway (a file exported with the worker's
// security.protocol copied in) changes nothing and is accepted without a
// word. A different security protocol is an error, so that a file meant
// for SASL never runs unauthenticated; anything else different draws a
// warning.
func (p *parser) checkTopLevelClientKeys(k Kafka) {
	for _, key := range sortedKeys(p.own) {
		if !(isClientKey(key) || consumerKeys[key]) || knownKeys[key] {
			continue // bootstrap.servers and retry.backoff.ms are connector keys too
		}
		v := strings.TrimSpace(p.own[key])
		if sameAsConsumer(key, v, k.Consumer) {
			continue
		}
		msg := "a Kafka client property at the top level of a connector file reaches no client (Kafka Connect ignores it there too): set consumer.override." + key + ", or consumer." + key + " in the worker file"
		if key == "security.protocol" {
			p.fail(key, p.own[key], msg+fmt.Sprintf(" (the consumer's security.protocol is %s)", consumerProtocol(k.Consumer)))
			continue
		}
		p.warn(key, "ignored: "+msg)
	}
}

// sameAsConsumer reports a top-level client property equal to the
// consumer's own (security.protocol compared as Kafka does, in any case).
func sameAsConsumer(key, v string, consumer map[string]string) bool {
	if key == "security.protocol" {
		return strings.EqualFold(v, consumerProtocol(consumer))
	}
	cv, ok := consumer[key]
	return ok && strings.TrimSpace(cv) == v
}

// consumerProtocol is the consumer's security.protocol, PLAINTEXT when unset.
func consumerProtocol(consumer map[string]string) string {
	if v := strings.TrimSpace(consumer["security.protocol"]); v != "" {
		return strings.ToUpper(v)
	}
	return "PLAINTEXT"
}

// warnUnappliedClients: the dead-letter producer and the topic creation
// share the consumer's client (acks=all, idempotent), so producer.* and
// admin.* properties are not applied; say so rather than drop them without
// a word. (A producer security setting that differs from the consumer's is
// a check error, in cmd: the producer can only connect as the consumer
// does.) The worker's own top-level security settings are for Kafka
// Connect's own connections (its group, its internal topics), which
// hdfs-sink does not make; the connector's consumer takes consumer.*.
func (p *parser) warnUnappliedClients(k Kafka) {
	for _, client := range []string{clientProducer, clientAdmin} {
		for _, name := range sortedKeys(k.from[client]) {
			prop := k.from[client][name]
			switch {
			case isClientPrefixed(prop.key) && !isSecurityKey(name) && name != "bootstrap.servers":
				p.warnOrigin(prop.key, prop.origin, "not applied: hdfs-sink's dead-letter producer and admin requests use the consumer's client")
			case client == clientAdmin && isSecurityKey(name) && !isClientPrefixed(prop.key) && k.Consumer[name] != prop.value:
				p.warnOrigin(prop.key, prop.origin, "not applied to the connector's consumer, as in Kafka Connect (it is for the worker's own connections): set consumer."+name+" in the worker file")
			}
		}
	}
}
