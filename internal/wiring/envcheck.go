package wiring

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

// Checks of what a connector file names outside itself: hadoop.conf.dir
// (the NameNodes of the URL's nameservice, the authentication) and
// hive.conf.dir (hive-site.xml). check and run both make them, so a
// setting run could not honour fails check, not a retry loop.

// report is what check says of a connector that passed: lines for stdout,
// warnings for stderr.
type report struct {
	lines, warns []string
}

func (r *report) add(o report) {
	r.lines = append(r.lines, o.lines...)
	r.warns = append(r.warns, o.warns...)
}

// storeCheck resolves the store as run will open it, checks its security
// settings against hadoop.conf.dir, and says what it found.
func storeCheck(c *configs.Connector) (report, error) {
	if c.Store.Scheme != "hdfs" {
		return report{lines: []string{"store: " + c.Store.Raw + " (local disk)"}}, nil
	}
	opts, err := hdfsOptions(c)
	if err != nil {
		return report{}, err
	}
	var rep report
	if _, warning, _ := confDirFor(c); warning != "" {
		rep.warns = append(rep.warns, warning)
	}
	if _, krb := kerberosConfig(c); krb {
		opts.Kerberos = placeholderClient // Check only looks at whether there is one
	}
	t, sec, err := hdfs.Check(opts)
	if err != nil {
		return report{}, fmt.Errorf("connector %q (%s): %w", c.Name, c.Source, err) // the error names the URL or conf dir
	}
	if !sec.Kerberos {
		rep.lines = []string{fmt.Sprintf("store: %s: %s; user %s", c.Store.Raw, t, c.HDFSUser)}
		return rep, nil
	}
	rep.lines = []string{fmt.Sprintf("store: %s: %s; user from the Kerberos principal", c.Store.Raw, t), "hdfs: " + sec.String()}
	rep.warns = append(rep.warns, hdfsWarnings(c, sec)...)
	return rep, nil
}

// kerberosReport checks a connector's Kerberos login as far as it can be
// without a KDC (krb5.conf, the keytab and the principal in it).
func kerberosReport(c *configs.Connector) (report, error) {
	kc, krb := kerberosConfig(c)
	if !krb {
		return report{}, nil
	}
	p, err := kerberos.Prepare(kc)
	if err != nil {
		return report{}, err
	}
	line := fmt.Sprintf("kerberos login: %s from keytab %s (krb5.conf %s), ticket renewed from the keytab at 80%% of its lifetime (checked at least every %v)",
		p.Principal, kc.Keytab, p.Krb5Conf, c.Kerberos.RenewPeriod)
	return report{lines: []string{line}, warns: p.Warnings}, nil
}

// hiveTarget is the metastore a connector registers in, and what said so.
type hiveTarget struct {
	uris, from string
}

// hiveTargetOf takes hive.metastore.uris from the connector file, else
// from hive.conf.dir/hive-site.xml, and refuses a hive-site.xml asking for
// SASL or SSL. (The reference ignores hive-site.xml's URIs and starts an
// embedded metastore when the file sets none; hdfs-sink has none to start.)
func hiveTargetOf(c *configs.Connector) (hiveTarget, error) {
	t := hiveTarget{uris: strings.Join(c.Hive.MetastoreURIs, ","), from: c.Source}
	if dir := hiveConfDir(c); dir != "" {
		site, err := hive.LoadSite(hostPath(dir))
		if err != nil {
			return t, fmt.Errorf("connector %q (%s): %w", c.Name, c.Source, err)
		}
		if t.uris == "" {
			t.uris, t.from = site.URIs, site.File
		}
	}
	if t.uris == "" {
		return t, fmt.Errorf("connector %q (%s): hive.metastore.uris is not set: required when hive.integration is true; set it in the connector file or in %s/hive-site.xml",
			c.Name, c.Source, c.Hive.ConfDir)
	}
	if err := hive.CheckURIs(t.uris); err != nil {
		return t, fmt.Errorf("connector %q (%s): hive.metastore.uris (from %s): %w", c.Name, c.Source, t.from, err)
	}
	return t, nil
}

// MetastoreURIs are the metastore URIs the connector registers in: its
// hive.metastore.uris, else hive-site.xml's; an error as check reports it.
func MetastoreURIs(c *configs.Connector) (string, error) {
	t, err := hiveTargetOf(c)
	return t.uris, err
}

// connectorReport is what check says of a connector that passed. Offline
// (h not nil), hadoop.conf.dir, the Kerberos login and hive.conf.dir are
// not read, and the report ends with what h leaves to the daemon's host.
func connectorReport(c *configs.Connector, r *secret.Redactor, h *hostOnly) (report, error) {
	if h != nil {
		return offlineReport(c, r, *h)
	}
	rep, err := storeCheck(c)
	if err != nil {
		return report{}, err
	}
	krb, err := kerberosReport(c)
	if err != nil {
		return report{}, fmt.Errorf("connector %q (%s): %w", c.Name, c.Source, err)
	}
	rep.add(krb)
	return clientsReport(c, r, rep, hiveReport)
}

// offlineReport is connectorReport for check --offline.
func offlineReport(c *configs.Connector, r *secret.Redactor, h hostOnly) (report, error) {
	rep, err := clientsReport(c, r, offlineStore(c, h), func(c *configs.Connector) (string, error) { return offlineHive(c, h) })
	rep.lines = append(rep.lines, h.lines()...)
	return rep, err
}

// clientsReport adds the Kafka consumer, the registry and the metastore
// (as hive describes it) to rep.
func clientsReport(c *configs.Connector, r *secret.Redactor, rep report, hive func(*configs.Connector) (string, error)) (report, error) {
	applied, ignored := consumerUse(c)
	rep.lines = append(rep.lines, "kafka consumer: "+showProps(r, applied))
	if len(ignored) > 0 {
		rep.lines = append(rep.lines, "kafka consumer, ignored: "+showIgnored(r, c.Kafka.Consumer, ignored))
	}
	if line := routesLine(c); line != "" {
		rep.lines = append(rep.lines, line)
	}
	if c.NeedsRegistry() {
		rep.lines = append(rep.lines, "schema registry: "+strings.Join(c.Registry.URLs, ", "))
	}
	if c.Hive.Enabled {
		line, err := hive(c)
		if err != nil {
			return report{}, err
		}
		rep.lines = append(rep.lines, line)
	}
	return rep, nil
}

func hiveReport(c *configs.Connector) (string, error) {
	t, err := hiveTargetOf(c)
	if err != nil {
		return "", err
	}
	line := fmt.Sprintf("hive: metastore %s (from %s), database %s", t.uris, t.from, c.Hive.Database)
	site, err := hiveSite(c)
	if err != nil {
		return "", fmt.Errorf("connector %q (%s): %w", c.Name, c.Source, err)
	}
	if site.SocketTimeout > 0 {
		line += fmt.Sprintf("; calls time out after %v (hive.metastore.client.socket.timeout in %s)", site.SocketTimeout, site.File)
	}
	on, principal, err := hiveSASL(c, site)
	switch {
	case err != nil:
		return "", fmt.Errorf("connector %q (%s): %w", c.Name, c.Source, err)
	case on:
		line += fmt.Sprintf("; SASL GSSAPI to %s, with the strongest security layer it offers (privacy, integrity or none)", principal)
	}
	return line, nil
}

// showProps prints client properties sorted, secrets hidden.
func showProps(r *secret.Redactor, m map[string]string) string {
	shown := r.ShowMap(m)
	parts := make([]string, 0, len(shown))
	for _, k := range slices.Sorted(maps.Keys(shown)) {
		parts = append(parts, k+"="+shown[k])
	}
	return strings.Join(parts, " ")
}

// showIgnored prints the ignored consumer properties sorted, each with its
// value (secrets hidden) and why it is ignored.
func showIgnored(r *secret.Redactor, props, why map[string]string) string {
	parts := make([]string, 0, len(why))
	for _, k := range slices.Sorted(maps.Keys(why)) {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", k, r.Show(k, props[k]), why[k]))
	}
	return strings.Join(parts, ", ")
}
