package hdfs

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"
)

// Target is what an hdfs:// URL resolves to, with the Hadoop configuration
// (hadoop.conf.dir) that resolved it. check prints it.
type Target struct {
	// Nameservice is the URL's host when hdfs-site.xml names it a
	// nameservice; "" for a NameNode given by host and port.
	Nameservice string
	NameNodes   []NameNode
	// Files are the configuration files read, in order.
	Files []string
	// Authentication is hadoop.security.authentication ("simple" when
	// unset); DataTransferProtection is dfs.data.transfer.protection or
	// "privacy" for dfs.encrypt.data.transfer.
	Authentication, DataTransferProtection string
}

// NameNode is one NameNode of a Target: its id in dfs.ha.namenodes.<ns>
// ("" for a single NameNode) and RPC address.
type NameNode struct {
	ID, Addr string
}

func (t Target) String() string {
	nns := make([]string, len(t.NameNodes))
	for i, nn := range t.NameNodes {
		nns[i] = nn.Addr
		if nn.ID != "" {
			nns[i] = nn.ID + "=" + nn.Addr
		}
	}
	s := "NameNode " + strings.Join(nns, ", ")
	if t.Nameservice != "" {
		s = fmt.Sprintf("nameservice %s: NameNodes %s", t.Nameservice, strings.Join(nns, ", "))
	}
	if len(t.Files) > 0 {
		s += " (from " + strings.Join(t.Files, ", ") + ")"
	}
	s += "; authentication " + t.Authentication
	if t.DataTransferProtection != "" {
		s += "; data transfer protection " + t.DataTransferProtection
	}
	return s
}

// resolve finds the NameNodes opts.URL names. Without ConfDir the URL's
// host is the NameNode (port 8020 by default). With it, a host that
// hdfs-site.xml names a nameservice resolves to exactly that
// nameservice's NameNodes (dfs.ha.namenodes.<ns> and
// dfs.namenode.rpc-address.<ns>.<id>, or dfs.namenode.rpc-address.<ns>),
// never to another nameservice's: a gateway's hdfs-site.xml often lists
// other clusters too. A bare host that is no nameservice is an error when
// the file defines nameservices, as a mistyped one would otherwise be
// dialled as a host name.
func resolve(opts Options) (Target, hadoopconf.HadoopConf, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || u.Scheme != "hdfs" || u.Hostname() == "" {
		return Target{}, nil, fmt.Errorf("hdfs url %q: want hdfs://host[:port][/path]", opts.URL)
	}
	t := Target{Authentication: "simple"}
	if opts.ConfDir == "" {
		t.NameNodes = []NameNode{{Addr: hostPort(u)}}
		return t, nil, nil
	}
	conf, files, err := loadConf(opts.ConfDir)
	if err != nil {
		return Target{}, nil, err
	}
	t.Files = files
	t.Authentication, t.DataTransferProtection = confSecurity(conf)
	t.Nameservice, t.NameNodes, err = nameNodes(conf, u, files)
	return t, conf, err
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "8020") // the NameNode's default RPC port
}

// confFiles are the files of hadoop.conf.dir hdfs-sink reads, in the order
// Hadoop's client loads them (a later file wins).
var confFiles = []string{"core-site.xml", "hdfs-site.xml"}

// loadConf reads hadoop.conf.dir. A directory without either file is an
// error: the setting would otherwise be silently ignored.
func loadConf(dir string) (hadoopconf.HadoopConf, []string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("hadoop.conf.dir %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("hadoop.conf.dir %s: not a directory", dir)
	}
	var files []string
	for _, f := range confFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			files = append(files, filepath.Join(dir, f))
		}
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("hadoop.conf.dir %s: has neither core-site.xml nor hdfs-site.xml", dir)
	}
	conf, err := hadoopconf.Load(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("hadoop.conf.dir %s: %w", dir, err)
	}
	return conf, files, nil
}

// confSecurity is what the configuration asks for: its authentication and
// its data transfer protection.
func confSecurity(conf hadoopconf.HadoopConf) (auth, protection string) {
	auth = strings.ToLower(strings.TrimSpace(conf["hadoop.security.authentication"]))
	if auth == "" {
		auth = "simple"
	}
	opts := hdfs.ClientOptionsFromConf(conf)
	return auth, opts.DataTransferProtection
}

// nameservices lists the nameservices the configuration defines.
func nameservices(conf hadoopconf.HadoopConf) []string {
	set := map[string]bool{}
	for _, ns := range strings.Split(conf["dfs.nameservices"], ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			set[ns] = true
		}
	}
	for k := range conf {
		if ns, ok := strings.CutPrefix(k, "dfs.ha.namenodes."); ok {
			set[ns] = true
		}
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

func isNameservice(conf hadoopconf.HadoopConf, host string) bool {
	for _, ns := range nameservices(conf) {
		if ns == host {
			return true
		}
	}
	_, single := conf["dfs.namenode.rpc-address."+host]
	return single
}

func nameNodes(conf hadoopconf.HadoopConf, u *url.URL, files []string) (string, []NameNode, error) {
	host := u.Hostname()
	where := strings.Join(files, ", ")
	switch {
	case isNameservice(conf, host) && u.Port() != "" && u.Port() != "8020":
		// Hadoop's client refuses it too; it ignores the default port.
		return "", nil, fmt.Errorf("hdfs://%s: %s is a nameservice in %s, and a nameservice URL takes no port (write hdfs://%s)", u.Host, host, where, host)
	case isNameservice(conf, host):
		nns, err := nameserviceNodes(conf, host, where)
		return host, nns, err
	case u.Port() == "" && len(nameservices(conf)) > 0:
		return "", nil, fmt.Errorf("hdfs://%s: no nameservice %q in %s (it defines %s); to name a NameNode host, give its port (hdfs://%s:8020)",
			host, host, where, strings.Join(nameservices(conf), ", "), host)
	}
	return "", []NameNode{{Addr: hostPort(u)}}, nil
}

func nameserviceNodes(conf hadoopconf.HadoopConf, ns, where string) ([]NameNode, error) {
	ids, ha := conf["dfs.ha.namenodes."+ns]
	if !ha {
		addr := strings.TrimSpace(conf["dfs.namenode.rpc-address."+ns])
		return []NameNode{{Addr: addr}}, checkAddr("dfs.namenode.rpc-address."+ns, addr, where)
	}
	var nns []NameNode
	for _, id := range strings.Split(ids, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		key := "dfs.namenode.rpc-address." + ns + "." + id
		addr := strings.TrimSpace(conf[key])
		if err := checkAddr(key, addr, where); err != nil {
			return nil, err
		}
		nns = append(nns, NameNode{ID: id, Addr: addr})
	}
	if len(nns) == 0 {
		return nil, fmt.Errorf("nameservice %s: dfs.ha.namenodes.%s in %s lists no NameNode", ns, ns, where)
	}
	return nns, nil
}

func checkAddr(key, addr, where string) error {
	if addr == "" {
		return fmt.Errorf("%s is not set in %s", key, where)
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("%s = %q in %s: want host:port", key, addr, where)
	}
	return nil
}

// Check resolves opts.URL as Resolve does and checks the security settings
// against the configuration, as a connection would, without connecting:
// `check` shows the result.
func Check(opts Options) (Target, Security, error) {
	t, _, err := resolve(opts)
	if err != nil {
		return t, Security{}, err
	}
	_, sec, err := clientOptions(opts)
	if sec.Kerberos { // the connector's login wins over hadoop.security.authentication, as in the reference
		t.Authentication = "kerberos"
	}
	return t, sec, err
}
