package configs

import (
	"regexp"
	"sort"
	"strings"
)

// Hidden is what is printed instead of a secret, as Kafka Connect prints a
// PASSWORD-typed value.
const Hidden = "[hidden]"

// secretSuffixes name the keys Kafka and Confluent type as PASSWORD (any
// prefix: consumer.override., value.converter., ...), and the credentials
// that are secrets by what they hold.
var secretSuffixes = []string{
	"password", "sasl.jaas.config", "basic.auth.user.info", "secret", ".token",
	"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates",
	"confluent.license",
}

// IsSecretKey reports whether values of key are secrets by their type
// (ssl.truststore.password, sasl.jaas.config, *.basic.auth.user.info, ...).
// A value resolved from a config provider is a secret whatever its key:
// Redactor knows those too.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, s := range secretSuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// Redactor hides secrets wherever hdfs-sink prints something: config
// values by key (Show, ShowMap), and any text (Text) that might quote a
// secret value, such as a client library's error. It knows every value of
// a secret-typed key and every value a config provider resolved.
type Redactor struct {
	values []string // longest first, so a secret's prefix never hides half of it
	keys   map[string]bool
}

// minSecretLen keeps Text from blanking common short words: a shorter
// secret is still hidden by key, never quoted in text by hdfs-sink itself.
const minSecretLen = 4

// NewRedactor collects the secrets of a worker (may be nil) and connectors.
func NewRedactor(w *Worker, conns ...*Connector) *Redactor {
	r := &Redactor{keys: map[string]bool{}}
	seen := map[string]bool{}
	add := func(s settings) {
		for k, st := range s {
			if st.secret || IsSecretKey(k) {
				r.keys[k] = true
				for _, v := range secretParts(st.value) {
					seen[v] = true
				}
			}
		}
	}
	if w != nil {
		add(w.set)
	}
	for _, c := range conns {
		add(c.set)
	}
	for v := range seen {
		r.values = append(r.values, v)
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

var jaasSecret = regexp.MustCompile(`(?i)(?:password|secret|token)\s*=\s*"([^"]*)"`)

// secretParts is a secret value and the pieces of it that may be quoted
// alone: the password of "user:password", the password="..." of a JAAS
// line.
func secretParts(v string) []string {
	out := []string{v}
	if _, pw, ok := strings.Cut(v, ":"); ok && !strings.Contains(v, " ") {
		out = append(out, pw)
	}
	for _, m := range jaasSecret.FindAllStringSubmatch(v, -1) {
		out = append(out, m[1])
	}
	var long []string
	for _, s := range out {
		if len(strings.TrimSpace(s)) >= minSecretLen {
			long = append(long, s)
		}
	}
	return long
}

// Show is how hdfs-sink prints the value of key: Hidden for a secret.
func (r *Redactor) Show(key, value string) string {
	if IsSecretKey(key) || (r != nil && r.keys[key]) {
		return Hidden
	}
	return r.Text(value)
}

// ShowMap is m with every secret value hidden, for printing.
func (r *Redactor) ShowMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = r.Show(k, v)
	}
	return out
}

// Text replaces every known secret value inside s.
func (r *Redactor) Text(s string) string {
	if r == nil {
		return redactURL(s)
	}
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, Hidden)
	}
	return redactURL(s)
}
