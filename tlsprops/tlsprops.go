// Package tlsprops owns the Java client's ssl.* settings, as Kafka clients
// and Confluent's schema registry client name them, and what they mean in
// Go: it turns them into a crypto/tls client configuration (trust and key
// stores in PEM, PKCS12 and JKS, host name verification, protocols, cipher
// suites), refuses every setting Go cannot honour with an error naming the
// key, and tells a TLS failure no retry will fix (untrusted CA, host name
// mismatch, expired certificate, a handshake the server refused) from a
// passing one. It imports nothing from the project.
package tlsprops

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Props are ssl.* properties by their Java names, without any client prefix
// ("ssl.truststore.location", not "consumer.override.ssl.truststore.location").
type Props map[string]string

// Keys are the ssl.* keys Config reads. Any other ssl.* key is refused.
var Keys = []string{
	"ssl.protocol", "ssl.provider", "ssl.enabled.protocols", "ssl.cipher.suites",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.key.password",
	"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
	"ssl.endpoint.identification.algorithm", "ssl.secure.random.implementation", "ssl.engine.factory.class",
}

// secretKeys hold passwords or private keys: their values never appear in
// an error.
var secretKeys = []string{"ssl.truststore.password", "ssl.keystore.password", "ssl.key.password", "ssl.keystore.key"}

// IsSecret reports whether the value of key (a Java ssl.* name) is a secret.
func IsSecret(key string) bool { return slices.Contains(secretKeys, key) }

// KeyError is one setting that cannot be honoured. Key is the name as the
// user wrote it (with its prefix); a secret's value is never kept.
type KeyError struct {
	Key    string
	Value  string // "[hidden]" for secrets
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("%s = %q: %s", e.Key, e.Value, e.Reason)
}

// Hidden is what stands in an error for a secret's value.
const Hidden = "[hidden]"

// Namer gives a key's name as the user wrote it, for errors: the Java name
// with the prefix of the file it came from.
type Namer func(key string) string

// Prefix names every key with the same prefix ("consumer.override.").
func Prefix(p string) Namer { return func(k string) string { return p + k } }

// keyErr builds a KeyError for key, hiding the value when it is secret.
func keyErr(name Namer, key, value, reason string) *KeyError {
	if IsSecret(key) && value != "" {
		value = Hidden
	}
	return &KeyError{Key: name(key), Value: value, Reason: reason}
}

// Config is the client TLS configuration p describes; name says how each
// key is called in the user's file ("value.converter.schema.registry.").
// The error joins one *KeyError per setting that cannot be honoured,
// including stores that cannot be read with the passwords given.
func Config(p Props, name Namer) (*tls.Config, error) {
	if name == nil {
		name = Prefix("")
	}
	b := &builder{p: p, name: name}
	b.unknownKeys()
	b.fixedValues()
	cfg := &tls.Config{}
	b.versions(cfg)
	b.ciphers(cfg)
	b.hostCheck(cfg)
	b.trust(cfg)
	b.identity(cfg)
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return cfg, nil
}

// builder collects every error of one Config call.
type builder struct {
	p    Props
	name Namer
	errs []error
}

func (b *builder) get(key string) string { return strings.TrimSpace(b.p[key]) }

func (b *builder) fail(key, reason string) {
	b.errs = append(b.errs, keyErr(b.name, key, b.p[key], reason))
}

func (b *builder) unknownKeys() {
	var unknown []string
	for k := range b.p {
		if !slices.Contains(Keys, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		b.fail(k, "unknown ssl setting (known: "+strings.Join(Keys, ", ")+")")
	}
}

// fixedValues are settings that name Java machinery; only the JVM's
// defaults, which are what Go does, are accepted.
func (b *builder) fixedValues() {
	allowed := map[string][]string{
		"ssl.provider":               {""},
		"ssl.engine.factory.class":   {""},
		"ssl.keymanager.algorithm":   {"", "SunX509", "PKIX", "NewSunX509"},
		"ssl.trustmanager.algorithm": {"", "PKIX", "SunX509"},
	}
	for _, k := range []string{"ssl.provider", "ssl.engine.factory.class", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm"} {
		if v := b.get(k); !slices.Contains(allowed[k], v) {
			b.fail(k, "names a Java security provider or class, which hdfs-sink (Go's crypto/tls) cannot load; leave it unset")
		}
	}
}
