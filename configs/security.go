package configs

import (
	"fmt"
	"strings"
)

// Transport security and authentication (TLS, SASL) for Kafka and the
// schema registry are not in this build yet. Until they are, a setting
// that asks for them is an error at check, never a silent plaintext
// connection; settings that PLAINTEXT makes meaningless draw a warning.
// The resolved maps (Connector.Kafka, SchemaRegistry.Props) carry every
// such key for the code that will honour them.

const reasonNoSecurity = "not supported by hdfs-sink yet: its Kafka clients speak PLAINTEXT only (no TLS, no SASL)"

// securityGate checks the three Kafka clients and the registry settings.
func (p *parser) securityGate(c *Connector) {
	seen := map[string]bool{}
	for _, client := range []string{clientConsumer, clientProducer, clientAdmin} {
		p.clientSecurity(client, c.Kafka.from[client], seen)
	}
	p.registrySecurity(c.Registry.Props)
}

func (p *parser) clientSecurity(client string, props map[string]clientProp, seen map[string]bool) {
	proto, ok := props["security.protocol"]
	if ok && proto.value != "" && !strings.EqualFold(proto.value, "PLAINTEXT") {
		if !seen[proto.key] {
			seen[proto.key] = true
			p.failOrigin(proto.key, proto.value, proto.origin, fmt.Sprintf("security.protocol %s for the %s: %s", proto.value, client, reasonNoSecurity))
		}
		return
	}
	for _, name := range sortedKeys(props) {
		prop := props[name]
		if isSecurityKey(name) && name != "security.protocol" && prop.value != "" && !seen[prop.key] {
			seen[prop.key] = true
			p.warnOrigin(prop.key, prop.origin, "ignored: the "+client+" uses security.protocol PLAINTEXT")
		}
	}
}

// registrySecurity refuses registry TLS and bearer settings; https:// URLs
// work with the system's trust store (SSL_CERT_FILE names another one).
func (p *parser) registrySecurity(props map[string]string) {
	for _, k := range sortedKeys(props) {
		if props[k] == "" {
			continue
		}
		switch {
		case strings.HasPrefix(k, "schema.registry.ssl."):
			p.fail(p.registryKey(k), props[k], "TLS settings for the schema registry are not supported by hdfs-sink yet (https:// uses the system trust store; SSL_CERT_FILE names another CA bundle)")
		case strings.HasPrefix(k, "bearer.auth."):
			p.fail(p.registryKey(k), props[k], "bearer authentication to the schema registry is not supported by hdfs-sink yet (basic auth is: basic.auth.credentials.source=USER_INFO)")
		}
	}
}

// registryKey is the key that set registry property k, as written.
func (p *parser) registryKey(k string) string {
	if _, ok := p.raw["value.converter."+k]; ok {
		return "value.converter." + k
	}
	return k
}
