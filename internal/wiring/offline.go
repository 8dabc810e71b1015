package wiring

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// check --offline validates connector and worker files away from the
// daemon's host: in CI, on a laptop. What only the host has is not read,
// and check says so instead: the values config providers would resolve
// (configs.ReadOptions), hadoop.conf.dir and hive.conf.dir, the Kerberos
// keytab and krb5.conf, and the stores, keytabs and token files the Kafka
// and registry clients name. Everything else is checked as on the host.

// hostOnly are the settings of one connector that check --offline cannot
// check: errors names the keys as errors spell them ("consumer.ssl.…
// (from worker …)"), whose errors are dropped; notes says what was not
// checked, one line per key as the file spells it.
type hostOnly struct {
	errors map[string]bool
	notes  map[string]string
}

func newHostOnly() hostOnly { return hostOnly{errors: map[string]bool{}, notes: map[string]string{}} }

// add leaves errKey's errors to the host, with note for fileKey unless
// one is there already.
func (h hostOnly) add(errKey, fileKey, note string) {
	h.errors[errKey] = true
	if _, ok := h.notes[fileKey]; !ok {
		h.notes[fileKey] = note
	}
}

// offlineNote begins each line check prints for what it could not check.
const offlineNote = "not checked (offline): "

// lines are check's lines for what was not checked, sorted by key.
func (h hostOnly) lines() []string {
	var out []string
	for _, k := range sortedKeys(h.notes) {
		out = append(out, offlineNote+h.notes[k])
	}
	return out
}

// names reports an error about one of h's keys: a *tlsprops.KeyError of
// the key, or an error (or one it wraps) whose text starts with it.
func (h hostOnly) names(err error) bool {
	var ke *tlsprops.KeyError
	if errors.As(err, &ke) {
		return h.errors[ke.Key]
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		for k := range h.errors {
			if msg := e.Error(); strings.HasPrefix(msg, k+":") || strings.HasPrefix(msg, k+" ") {
				return true
			}
		}
	}
	return false
}

// drop removes from errs those about h's keys.
func (h hostOnly) drop(errs []error) []error {
	var out []error
	for _, err := range errs {
		for _, e := range flattenErrs(err) {
			if !h.names(e) {
				out = append(out, e)
			}
		}
	}
	return out
}

func flattenErrs(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flattenErrs(e)...)
		}
		return out
	}
	return []error{err}
}

// hostOnlyOf lists what of c check --offline leaves to the host: the
// unresolved placeholders, and the files the Kafka consumer and the
// registry client would read.
func hostOnlyOf(c *configs.Connector, r *secret.Redactor) hostOnly {
	h := newHostOnly()
	for _, k := range c.Unresolved() {
		h.add(k, k, fmt.Sprintf("%s = %s (a config provider resolves it on the daemon's host)", k, r.Show(k, c.Raw[k])))
	}
	props, name := kafkaProps(c)
	for prop := range props {
		if c.Kafka.Unresolved("consumer", prop) {
			h.add(name(prop), fileKey(name(prop)), name(prop)+" (a config provider resolves it on the daemon's host)")
		}
	}
	clientFiles(h, props, name)
	clientFiles(h, c.Registry.Security.SSL, tlsprops.Prefix("value.converter.schema.registry."))
	return h
}

// fileKey is a key as errors name it without where it came from
// ("consumer.x (from worker w.properties)" is consumer.x).
func fileKey(errKey string) string {
	k, _, _ := strings.Cut(errKey, " (from ")
	return k
}

// clientFiles adds the keys of a client's properties that name files on
// the host (stores, the GSSAPI keytab and krb5.conf, a token file), and
// the passwords that can only be checked against those files.
func clientFiles(h hostOnly, props map[string]string, name tlsprops.Namer) {
	add := func(prop, note string) { h.add(name(prop), fileKey(name(prop)), name(prop)+" "+note) }
	for _, store := range []struct {
		location  string
		passwords []string
	}{
		{"ssl.truststore.location", []string{"ssl.truststore.password"}},
		{"ssl.keystore.location", []string{"ssl.keystore.password", "ssl.key.password"}},
	} {
		loc := strings.TrimSpace(props[store.location])
		if loc == "" {
			continue
		}
		add(store.location, loc+" (a file on the daemon's host)")
		for _, pw := range store.passwords {
			if props[pw] != "" {
				add(pw, "(checked against "+loc+" on the daemon's host)")
			}
		}
	}
	if props["sasl.jaas.config"] != "" && gssapi(props) {
		add("sasl.jaas.config", "(the GSSAPI login's keytab and krb5.conf are on the daemon's host)")
	}
	if u, err := url.Parse(strings.TrimSpace(props["sasl.oauthbearer.token.endpoint.url"])); err == nil && u.Scheme == "file" {
		add("sasl.oauthbearer.token.endpoint.url", u.Path+" (a token file on the daemon's host)")
	}
}

// gssapi reports a SASL client logging in with Kerberos (Kafka's default
// mechanism).
func gssapi(props map[string]string) bool {
	p := strings.ToUpper(strings.TrimSpace(props["security.protocol"]))
	m := strings.ToUpper(strings.TrimSpace(props["sasl.mechanism"]))
	return strings.HasPrefix(p, "SASL_") && (m == "" || m == "GSSAPI")
}

// offlineStore is check --offline's store line, and what it leaves to the
// host: hadoop.conf.dir and the Kerberos login are not read.
func offlineStore(c *configs.Connector, h hostOnly) report {
	if c.Store.Scheme == "" {
		return report{} // an unresolved store URL: listed with the placeholders
	}
	if c.Store.Scheme != "hdfs" {
		return report{lines: []string{"store: " + c.Store.Raw + " (local disk)"}}
	}
	target := "NameNode " + c.Store.Host
	if _, port, _ := net.SplitHostPort(c.Store.Host); port == "" {
		target = c.Store.Host + " (a nameservice of hadoop.conf.dir, or a NameNode on port 8020)"
	}
	rep := report{lines: []string{fmt.Sprintf("store: %s: %s", c.Store.Raw, target)}}
	if dir := hadoopConfDir(c); dir != "" {
		h.notes["hadoop.conf.dir"] = fmt.Sprintf("hadoop.conf.dir %s (the NameNodes of a nameservice, HDFS authentication and data transfer protection)", dir)
	}
	if c.Kerberos.Enabled {
		h.notes["connect.hdfs.keytab"] = fmt.Sprintf("the Kerberos login of %s: keytab %s, krb5.conf %s", c.Kerberos.Principal, c.Kerberos.Keytab, kerberos.Krb5ConfPath(c.Kerberos.Krb5Conf))
	}
	return rep
}

// offlineHive is check --offline's hive line: hive.conf.dir is not read;
// the connector's own hive.metastore.uris are checked.
func offlineHive(c *configs.Connector, h hostOnly) (string, error) {
	uris, dir := strings.Join(c.Hive.MetastoreURIs, ","), hiveConfDir(c)
	if dir != "" {
		h.notes["hive.conf.dir"] = fmt.Sprintf("hive.conf.dir %s (hive-site.xml: the metastore's SASL and timeouts, and its URIs when the connector sets none)", dir)
	}
	switch {
	case uris == "" && dir != "":
		return fmt.Sprintf("hive: metastore from %s/hive-site.xml, database %s", dir, c.Hive.Database), nil
	case uris == "":
		return "", fmt.Errorf("connector %q (%s): hive.metastore.uris is not set: required when hive.integration is true", c.Name, c.Source)
	}
	if err := hive.CheckURIs(uris); err != nil {
		return "", fmt.Errorf("connector %q (%s): hive.metastore.uris: %w", c.Name, c.Source, err)
	}
	return fmt.Sprintf("hive: metastore %s (from %s), database %s", uris, c.Source, c.Hive.Database), nil
}

// partitionerKeys are the keys OutputPartitioner reads.
var partitionerKeys = []string{"partitioner.class", "partition.field.name", "partition.duration.ms", "path.format",
	"locale", "timezone", "timestamp.extractor", "timestamp.field"}

// unresolvedAny reports whether any of keys holds an unresolved placeholder.
func unresolvedAny(c *configs.Connector, keys []string) bool {
	for _, k := range c.Unresolved() {
		for _, want := range keys {
			if k == want {
				return true
			}
		}
	}
	return false
}
