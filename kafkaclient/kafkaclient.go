// Package kafkaclient owns how hdfs-sink's Kafka clients (the consumer, and
// the dead-letter producer that shares it) secure their connections: the
// Java client's security.protocol, ssl.* and sasl.* properties, a JAAS
// parser in Java's syntax, the SASL mechanisms (PLAIN, SCRAM, OAUTHBEARER
// with a client-credentials token refreshed before it expires; GSSAPI plugs
// in as one more entry of the mechanism table), the franz-go options they
// become, the errors that no retry will fix (authentication and TLS
// failures, named with the address), a readiness probe that waits out
// outages but not those, and franz-go's log lines in slog.
//
// A setting it cannot honour is an error naming the key; it never connects
// with less security than the properties ask for. Secrets (passwords, JAAS
// configs, client secrets, tokens) never appear in its errors or logs.
package kafkaclient

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// Props are one Kafka client's properties by their Java names, without the
// Connect prefix ("security.protocol", not "consumer.override.security.protocol").
type Props map[string]string

// IsSecurityKey reports whether key belongs to this package: the client's
// security.protocol and every ssl.* and sasl.* key.
func IsSecurityKey(key string) bool {
	return key == "security.protocol" || strings.HasPrefix(key, "ssl.") || strings.HasPrefix(key, "sasl.")
}

// Protocols: security.protocol values.
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SASLPlaintext = "SASL_PLAINTEXT"
	SASLSSL       = "SASL_SSL"
)

// Security is the parsed security setup of one client.
type Security struct {
	Protocol  string
	Mechanism string // SASL mechanism name; "" without SASL

	tls  *tls.Config    // nil without TLS
	sasl sasl.Mechanism // nil without SASL
	// last is the broker address most recently dialled or authenticated
	// against, for errors whose response does not say which broker.
	last atomic.Value
	log  *slog.Logger
}

// serverOnly are ssl.* keys only a broker or a REST server reads; a Java
// client ignores them, and so does this package.
var serverOnly = []string{"ssl.client.auth", "ssl.principal.mapping.rules", "ssl.allow.dn.changes", "ssl.allow.san.changes"}

// Parse reads the security keys of p (others are not looked at). name says
// how each key is called in the user's file ("consumer.override.…"), for
// errors; nil: as in p. The error joins one *tlsprops.KeyError
// per setting that cannot be honoured; stores and files are read here, so
// a wrong store password is found by `check`.
func Parse(p Props, name tlsprops.Namer) (*Security, error) {
	return ParseWith(p, name, Kerberos{})
}

// Kerberos is what a GSSAPI client needs beyond its properties: the
// krb5.conf (a Java client takes it from the JVM's flags, not from a
// property; "" means $KRB5_CONFIG, else /etc/krb5.conf) and the process's
// logins, shared with HDFS and the metastore. Without Logins the client can
// be checked but not log in: its authentication fails, it never goes
// without.
type Kerberos struct {
	Krb5Conf string
	Logins   *kerberos.Logins
}

// ParseWith is Parse for a client that may log in with GSSAPI.
func ParseWith(p Props, name tlsprops.Namer, krb Kerberos) (*Security, error) {
	if name == nil {
		name = tlsprops.Prefix("")
	}
	b := &builder{p: p, name: name, krb: krb}
	s := &Security{Protocol: b.protocol()}
	useTLS := s.Protocol == SSL || s.Protocol == SASLSSL
	useSASL := s.Protocol == SASLPlaintext || s.Protocol == SASLSSL
	b.unused(useTLS, useSASL)
	if useTLS {
		s.tls = b.tlsConfig()
	}
	if useSASL {
		s.Mechanism, s.sasl = b.mechanism(s)
	}
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return s, nil
}

// Opts are the franz-go options of s: the dialer (TLS when asked for, and
// errors that name the broker), the SASL mechanism, and franz-go's log
// lines into log, which becomes s's logger (SetLogger).
func (s *Security) Opts(log *slog.Logger) []kgo.Opt {
	s.SetLogger(log)
	opts := []kgo.Opt{kgo.Dialer(s.dial), kgo.WithLogger(Logger(log))}
	if s.sasl == nil {
		return opts
	}
	return append(opts, kgo.SASL(s.sasl))
}

// SetLogger makes log the receiver of WaitReady's warnings and of the
// OAuth token renewals. Call it before s is used.
func (s *Security) SetLogger(log *slog.Logger) {
	s.log = log
	if s.sasl == nil {
		return
	}
	if om, ok := s.sasl.(tracked).Mechanism.(oauthMechanism); ok {
		om.ts.SetLogger(log)
	}
}

// UserPassword is the user and password of a PLAIN or SCRAM login, for the
// registry's basic.auth.credentials.source=SASL_INHERIT; ok is false for
// any other mechanism.
func UserPassword(p Props) (user, password string, ok bool) {
	mods, err := ParseJAAS(p["sasl.jaas.config"])
	if err != nil || len(mods) != 1 {
		return "", "", false
	}
	o := mods[0].Options
	switch mods[0].Class {
	case plainModule, scramModule:
		return o["username"], o["password"], o["username"] != ""
	}
	return "", "", false
}

// builder collects every error of one Parse.
type builder struct {
	p    Props
	name tlsprops.Namer
	krb  Kerberos
	errs []error
}

func (b *builder) get(key string) string { return strings.TrimSpace(b.p[key]) }

func (b *builder) fail(key, reason string) {
	v := b.p[key]
	if isSecret(key) && v != "" {
		v = tlsprops.Hidden
	}
	b.errs = append(b.errs, &tlsprops.KeyError{Key: b.name(key), Value: v, Reason: reason})
}

func isSecret(key string) bool {
	return key == "sasl.jaas.config" || strings.HasSuffix(key, ".secret") || tlsprops.IsSecret(key)
}

func (b *builder) protocol() string {
	v := strings.ToUpper(b.get("security.protocol"))
	switch v {
	case "":
		return Plaintext
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
		return v
	}
	b.fail("security.protocol", "must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
	return Plaintext
}

// unused refuses ssl.* or sasl.* settings that the protocol would not use:
// a truststore next to security.protocol=PLAINTEXT means TLS was wanted,
// and connecting in plaintext would be the silent downgrade.
func (b *builder) unused(useTLS, useSASL bool) {
	var keys []string
	for k, v := range b.p {
		tlsKey := strings.HasPrefix(k, "ssl.") && !contains(serverOnly, k)
		if strings.TrimSpace(v) != "" && ((tlsKey && !useTLS) || (strings.HasPrefix(k, "sasl.") && !useSASL)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.fail(k, fmt.Sprintf("is set, but security.protocol=%s does not use it (SSL or SASL_SSL for ssl.*, SASL_PLAINTEXT or SASL_SSL for sasl.*)", b.protocolName()))
	}
}

func (b *builder) protocolName() string {
	if v := b.get("security.protocol"); v != "" {
		return v
	}
	return Plaintext + " (the default)"
}

func (b *builder) tlsConfig() *tls.Config {
	ssl := tlsprops.Props{}
	for k, v := range b.p {
		if strings.HasPrefix(k, "ssl.") && !contains(serverOnly, k) {
			ssl[k] = v
		}
	}
	cfg, err := tlsprops.Config(ssl, b.name)
	if err != nil {
		b.errs = append(b.errs, err)
	}
	return cfg
}
