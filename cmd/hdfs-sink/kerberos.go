package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/colinmarc/hdfs/v2/hadoopconf"
	krbclient "github.com/jcmturner/gokrb5/v8/client"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

// kerberosConfig is the connector's login (hdfs.authentication.kerberos);
// ok is false without one.
func kerberosConfig(c *configs.Connector) (kerberos.Config, bool) {
	k := c.Kerberos
	if !k.Enabled {
		return kerberos.Config{}, false
	}
	return kerberos.Config{Principal: k.Principal, Keytab: k.Keytab, Krb5Conf: k.Krb5Conf, RenewPeriod: k.RenewPeriod}, true
}

// hdfsOptions are the store's connection options; with Kerberos the
// process's shared login for the connector's principal and keytab is
// obtained (or reused) here, so a refused login fails the connector.
func hdfsOptions(c *configs.Connector, logins *kerberos.Logins) (hdfs.Options, error) {
	opts := hdfs.Options{URL: "hdfs://" + c.Store.Host, ConfDir: hadoopConfDir(c), User: c.HDFSUser,
		NameNodePrincipal: c.Kerberos.NameNodePrincipal}
	kc, ok := kerberosConfig(c)
	if !ok || logins == nil {
		return opts, nil
	}
	l, err := logins.Login(kc)
	if err != nil {
		return opts, err
	}
	opts.Kerberos = l.Client()
	return opts, nil
}

// hiveSASL is the Metastore's SASL setting and principal: the connector's
// keys win over hive-site.xml in hive.conf.dir (or <hive.home>/conf), as
// the reference's HiveConf would have it.
func hiveSASL(c *configs.Connector) (enabled bool, principal string, err error) {
	site, err := hiveSite(c)
	if err != nil {
		return false, "", err
	}
	enabled = strings.EqualFold(strings.TrimSpace(site["hive.metastore.sasl.enabled"]), "true") ||
		strings.EqualFold(strings.TrimSpace(site["metastore.sasl.enabled"]), "true")
	if c.Hive.SASLEnabled != nil {
		enabled = *c.Hive.SASLEnabled
	}
	principal = firstSet(c.Hive.KerberosPrincipal, site["hive.metastore.kerberos.principal"], site["metastore.kerberos.principal"])
	switch {
	case !enabled:
		return false, "", nil
	case !c.Kerberos.Enabled:
		return false, "", errors.New("hive.metastore.sasl.enabled is true (hive-site.xml) but hdfs.authentication.kerberos is not: the Metastore login uses connect.hdfs.principal and connect.hdfs.keytab")
	case principal == "":
		return false, "", errors.New("hive.metastore.sasl.enabled is true but hive.metastore.kerberos.principal is not set (connector or hive-site.xml), e.g. hive/_HOST@EXAMPLE.COM")
	}
	return true, principal, nil
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// hiveSite reads hive-site.xml (and metastore-site.xml) of hive.conf.dir,
// else <hive.home>/conf; nil when there is none.
func hiveSite(c *configs.Connector) (map[string]string, error) {
	dir := c.Hive.ConfDir
	if dir == "" && c.Hive.Home != "" {
		dir = filepath.Join(c.Hive.Home, "conf")
	}
	out := map[string]string{}
	if dir == "" {
		return out, nil
	}
	for _, name := range []string{"hive-site.xml", "metastore-site.xml"} {
		if err := readSiteXML(filepath.Join(dir, name), out); err != nil {
			return nil, fmt.Errorf("hive.conf.dir: %w", err)
		}
	}
	return out, nil
}

func readSiteXML(file string, into map[string]string) error {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var doc struct {
		Props []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, p := range doc.Props {
		into[strings.TrimSpace(p.Name)] = p.Value
	}
	return nil
}

// hiveDialOptions are the hive.Dial options of a connector: SASL GSSAPI with
// the connector's login when the Metastore asks for it. The login is looked
// up at each dial, so a KDC outage is one more failed (and retried) dial.
func hiveDialOptions(c *configs.Connector, logins *kerberos.Logins) ([]hive.Option, error) {
	on, principal, err := hiveSASL(c)
	if err != nil || !on {
		return nil, err
	}
	kc, _ := kerberosConfig(c)
	return []hive.Option{hive.WithSASL(hiveGSSAPI{logins: logins, cfg: kc, principal: principal})}, nil
}

// hiveGSSAPI adapts a Kerberos login to hive.SASLMechanism.
type hiveGSSAPI struct {
	logins    *kerberos.Logins
	cfg       kerberos.Config
	principal string // hive.metastore.kerberos.principal, may hold _HOST
}

func (h hiveGSSAPI) Name() string { return "GSSAPI" }

func (h hiveGSSAPI) Start(host string) (hive.SASLSession, []byte, error) {
	l, err := h.logins.Login(h.cfg)
	if err != nil {
		return nil, nil, err
	}
	s := l.NewSASL(serviceSPN(h.principal, host))
	tok, err := s.Start()
	return s, tok, err
}

// serviceSPN turns a service principal setting (service/_HOST@REALM) into
// the name a ticket is asked for: _HOST becomes the host dialled, and the
// realm is dropped (krb5.conf's domain_realm maps the host to it).
func serviceSPN(principal, host string) string {
	name, _, _ := strings.Cut(kerberos.ExpandHost(principal, host), "@")
	return name
}

// describeSecurity checks a connector's Kerberos setup as far as it can
// be without a KDC, and says in lines what each connection will use.
func describeSecurity(c *configs.Connector) ([]string, []string, error) {
	var lines, warns []string
	var errs []error
	kc, krb := kerberosConfig(c)
	if krb {
		p, err := kerberos.Prepare(kc)
		if err != nil {
			errs = append(errs, err)
		} else {
			lines = append(lines, fmt.Sprintf("kerberos login: %s from keytab %s (krb5.conf %s), ticket renewed from the keytab at 80%% of its lifetime (checked at least every %v)", p.Principal, kc.Keytab, p.Krb5Conf, c.Kerberos.RenewPeriod))
			warns = append(warns, p.Warnings...)
		}
	}
	if c.Store.Scheme == "hdfs" {
		lines, warns, errs = describeHDFS(c, krb, lines, warns, errs)
	}
	if c.Hive.Enabled {
		if on, principal, err := hiveSASL(c); err != nil {
			errs = append(errs, err)
		} else if on {
			lines = append(lines, fmt.Sprintf("hive metastore: SASL GSSAPI to %s, with the strongest security layer it offers (privacy, integrity or none)", principal))
		} else {
			lines = append(lines, "hive metastore: plain Thrift (no SASL)")
		}
	}
	return lines, warns, errors.Join(errs...)
}

func describeHDFS(c *configs.Connector, krb bool, lines, warns []string, errs []error) ([]string, []string, []error) {
	opts := hdfs.Options{URL: "hdfs://" + c.Store.Host, ConfDir: hadoopConfDir(c), NameNodePrincipal: c.Kerberos.NameNodePrincipal}
	if krb {
		opts.Kerberos = placeholderClient // Describe only looks at whether there is one
	}
	sec, err := hdfs.Describe(opts)
	if err != nil {
		return lines, warns, append(errs, fmt.Errorf("connector %q (%s): %w", c.Name, c.Source, err))
	}
	lines = append(lines, "hdfs: "+sec.String())
	if opts.ConfDir != "" {
		if conf, _ := hadoopconf.Load(opts.ConfDir); conf != nil {
			lines = append(lines, fmt.Sprintf("hadoop.conf.dir %s: hadoop.security.authentication=%s", opts.ConfDir, orDefault(conf["hadoop.security.authentication"], "simple")))
		}
	}
	if krb && strings.Contains(sec.RPCProtection, "i") { // integrity or privacy
		warns = append(warns, fmt.Sprintf("hadoop.rpc.protection=%s: colinmarc/hdfs verifies or decrypts the NameNode's replies but sends its requests unwrapped (paths and metadata in clear; file data goes to the DataNodes under dfs.data.transfer.protection)", sec.RPCProtection))
	}
	if krb && isIPHost(c.Store.Host) && strings.Contains(sec.NameNodePrincipal, "_HOST") {
		warns = append(warns, fmt.Sprintf("store.url names the NameNode by address (%s): _HOST in %s becomes that address, which is rarely a principal; name the NameNode by its host name", c.Store.Host, sec.NameNodePrincipal))
	}
	return lines, warns, errs
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func isIPHost(hostport string) bool {
	u, err := url.Parse("hdfs://" + hostport)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return strings.Trim(h, "0123456789.") == "" || strings.Contains(h, ":")
}

// placeholderClient stands for a login in hdfs.Describe, which never uses it.
var placeholderClient = &krbclient.Client{}
