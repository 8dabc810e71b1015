package wiring

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

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
	return kerberos.Config{Principal: k.Principal, Keytab: hostPath(k.Keytab), Krb5Conf: hostPath(kerberos.Krb5ConfPath(k.Krb5Conf)), RenewPeriod: k.RenewPeriod}, true
}

// hiveSite is hive-site.xml (and metastore-site.xml) of hive.conf.dir, or
// of <hive.home>/conf; the zero Site when neither is set.
func hiveSite(c *configs.Connector) (hive.Site, error) {
	dir := hiveConfDir(c)
	if dir == "" {
		return hive.Site{}, nil
	}
	return hive.LoadSite(hostPath(dir))
}

// hiveSASL is the Metastore's SASL setting and principal: the connector's
// keys win over the site's hive-site.xml, as the reference's HiveConf
// would have it.
func hiveSASL(c *configs.Connector, site hive.Site) (enabled bool, principal string, err error) {
	enabled = site.SASL
	if c.Hive.SASLEnabled != nil {
		enabled = *c.Hive.SASLEnabled
	}
	principal = strings.TrimSpace(c.Hive.KerberosPrincipal)
	if principal == "" {
		principal = site.Principal
	}
	switch {
	case !enabled:
		return false, "", nil
	case !c.Kerberos.Enabled:
		return false, "", errors.New("hive.metastore.sasl.enabled is true but hdfs.authentication.kerberos is not: the Metastore login uses connect.hdfs.principal and connect.hdfs.keytab")
	case principal == "":
		return false, "", errors.New("hive.metastore.sasl.enabled is true but hive.metastore.kerberos.principal is not set (connector or hive-site.xml), e.g. hive/_HOST@EXAMPLE.COM")
	}
	return true, principal, nil
}

// hiveConfDir is hive.conf.dir, else <hive.home>/conf as a Hive install
// lays it out.
func hiveConfDir(c *configs.Connector) string {
	if c.Hive.ConfDir != "" || c.Hive.Home == "" {
		return c.Hive.ConfDir
	}
	return filepath.Join(c.Hive.Home, "conf")
}

// HiveDialOptions are the hive.Dial options of a connector: the call
// timeout of hive.metastore.client.socket.timeout when the site sets one,
// and SASL GSSAPI with the connector's login when the Metastore asks for
// it. The login is looked up at each dial, so a KDC outage is one more
// failed (and retried) dial.
func HiveDialOptions(c *configs.Connector, logins *kerberos.Logins) ([]hive.Option, error) {
	site, err := hiveSite(c)
	if err != nil {
		return nil, err
	}
	var opts []hive.Option
	if site.SocketTimeout > 0 {
		opts = append(opts, hive.WithCallTimeout(site.SocketTimeout))
	}
	on, principal, err := hiveSASL(c, site)
	if err != nil || !on {
		return opts, err
	}
	kc, _ := kerberosConfig(c)
	return append(opts, hive.WithSASL(hiveGSSAPI{logins: logins, cfg: kc, principal: principal})), nil
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

// hdfsWarnings are what a Kerberized HDFS setting leaves weaker than the
// operator may think.
func hdfsWarnings(c *configs.Connector, sec hdfs.Security) []string {
	if !sec.Kerberos {
		return nil
	}
	var warns []string
	if wrapsRPC(sec.RPCProtection) {
		warns = append(warns, fmt.Sprintf("hadoop.rpc.protection=%s: colinmarc/hdfs verifies or decrypts the NameNode's replies but sends its requests unwrapped (paths and metadata in clear; file data goes to the DataNodes under dfs.data.transfer.protection)", sec.RPCProtection))
	}
	if isIPHost(c.Store.Host) && strings.Contains(sec.NameNodePrincipal, "_HOST") {
		warns = append(warns, fmt.Sprintf("store.url names the NameNode by address (%s): _HOST in %s becomes that address, which is rarely a principal; name the NameNode by its host name", c.Store.Host, sec.NameNodePrincipal))
	}
	return warns
}

// wrapsRPC reports a hadoop.rpc.protection (a comma list, as Hadoop
// reads it) asking for integrity or privacy; authentication alone wraps
// nothing.
func wrapsRPC(protection string) bool {
	for _, p := range strings.Split(protection, ",") {
		switch strings.ToLower(strings.TrimSpace(p)) {
		case "integrity", "privacy":
			return true
		}
	}
	return false
}

func isIPHost(hostport string) bool {
	u, err := url.Parse("hdfs://" + hostport)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return strings.Trim(h, "0123456789.") == "" || strings.Contains(h, ":")
}

// placeholderClient stands for a login in hdfs.Check, which never uses it.
var placeholderClient = &krbclient.Client{}
