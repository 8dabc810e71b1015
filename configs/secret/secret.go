// Package secret says what is a secret in a configuration and hides
// secrets wherever hdfs-sink prints something: a value shown by its key
// (Hidden for a secret-typed one), and any text that might quote a
// secret's value or a URL's password (Redactor). It is a leaf: configs
// hands it the values to hide.
package secret

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

// IsKey reports whether values of key are secrets by their type
// (ssl.truststore.password, sasl.jaas.config, *.basic.auth.user.info, ...).
// Only these are hidden: a value a config provider resolved is a secret
// when its key is (Kafka hides PASSWORD-typed values only), and shown when
// it is an address, a URL or a user name.
func IsKey(key string) bool {
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
// secret value, such as a client library's error. It knows the values of
// the secret-typed keys, and the passwords written into URLs; nothing
// else, so that an address or a number in a log line is never taken for a
// secret.
type Redactor struct {
	values []string // longest first, so a secret's prefix never hides half of it
}

// minSecretLen keeps Text from blanking common short words: a shorter
// secret is still hidden by key, never quoted in text by hdfs-sink itself.
const minSecretLen = 4

// NewRedactor collects the secrets of configurations (key → value): a
// worker's and its connectors' settings.
func NewRedactor(configs ...map[string]string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, m := range configs {
		for k, v := range m {
			for _, part := range secretParts(k, v) {
				seen[part] = true
			}
		}
	}
	for v := range seen {
		r.values = append(r.values, v)
	}
	sort.Slice(r.values, func(i, j int) bool {
		if len(r.values[i]) != len(r.values[j]) {
			return len(r.values[i]) > len(r.values[j])
		}
		return r.values[i] < r.values[j]
	})
	return r
}

var (
	jaasSecret  = regexp.MustCompile(`(?i)(?:password|secret|token)\s*=\s*"([^"]*)"`)
	urlPassword = regexp.MustCompile(`//[^/@\s:]*:([^/@\s]+)@`)
)

// secretParts are the secrets the value of key holds, and the pieces of
// them that may be quoted alone: the whole value of a secret key, the
// password of a "user:password" user info, the password="..." of a JAAS
// line; and, for any key, the password of a URL's user info.
func secretParts(key, v string) []string {
	var out []string
	if IsKey(key) {
		out = append(out, v)
		if strings.HasSuffix(strings.ToLower(key), "user.info") {
			if _, pw, ok := strings.Cut(v, ":"); ok {
				out = append(out, pw)
			}
		}
		for _, m := range jaasSecret.FindAllStringSubmatch(v, -1) {
			out = append(out, m[1])
		}
	}
	for _, m := range urlPassword.FindAllStringSubmatch(v, -1) {
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
	if IsKey(key) {
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

// Text replaces every known secret value inside s, and the user info of
// URLs.
func (r *Redactor) Text(s string) string {
	if r == nil {
		return URL(s)
	}
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, Hidden)
	}
	return URL(s)
}

var userInfoRE = regexp.MustCompile(`//[^/@\s]*@`)

// URL hides the user info of the URLs in s, so passwords do not reach
// logs.
func URL(s string) string { return userInfoRE.ReplaceAllString(s, "//"+Hidden+"@") }
