package wiring

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
	"github.com/hdfs-sink/hdfs-sink/storage/local"
)

// OpenStore connects the connector's store.url, logging in through logins
// when the store is Kerberized. The returned FS is rooted at
// "/" of the store; paths from configs already include the URL's path.
func OpenStore(c *configs.Connector, logins *kerberos.Logins) (storage.FS, error) {
	return openStore(c, logins, 0)
}

// OpenStoreWithin is OpenStore with every NameNode and DataNode dial, read
// and write bounded by bound: `hdfs-sink check --connect` reports a hung
// NameNode after its probe bound and leaves no call waiting much longer.
func OpenStoreWithin(c *configs.Connector, logins *kerberos.Logins, bound time.Duration) (storage.FS, error) {
	return openStore(c, logins, bound)
}

// openStore opens the store, its HDFS calls bounded by bound (0: the
// store's defaults).
func openStore(c *configs.Connector, logins *kerberos.Logins, bound time.Duration) (storage.FS, error) {
	switch c.Store.Scheme {
	case "file":
		if err := os.MkdirAll(c.Store.Path, 0o755); err != nil {
			return nil, fmt.Errorf("connector %q: store.url %s: %w", c.Name, c.Store.Raw, err)
		}
		return local.New("/"), nil
	case "hdfs":
		opts, err := hdfsLoginOptions(c, logins)
		if err != nil {
			return nil, fmt.Errorf("connector %q: %w", c.Name, err)
		}
		opts.DialTimeout, opts.IOTimeout = bound, bound
		fs, err := hdfs.New(opts)
		if err != nil {
			return nil, fmt.Errorf("connector %q: %w", c.Name, err)
		}
		return fs, nil
	}
	return nil, fmt.Errorf("connector %q: store.url scheme %q is not supported", c.Name, c.Store.Scheme)
}

// hadoopConfDir is hadoop.conf.dir, else <hadoop.home>/etc/hadoop as a
// Hadoop install lays it out.
func hadoopConfDir(c *configs.Connector) string {
	if c.HadoopConfDir != "" || c.HadoopHome == "" {
		return c.HadoopConfDir
	}
	return filepath.Join(c.HadoopHome, "etc", "hadoop")
}

// hdfsOptions is how the connector reaches HDFS, without its login
// (hdfsLoginOptions adds it).
func hdfsOptions(c *configs.Connector) (hdfs.Options, error) {
	dir, _, err := confDirFor(c)
	return hdfs.Options{URL: "hdfs://" + c.Store.Host, ConfDir: dir, User: c.HDFSUser,
		NameNodePrincipal: c.Kerberos.NameNodePrincipal}, err
}

// confDirFor is the Hadoop configuration directory the store is reached
// with: hadoop.conf.dir, else <hadoop.home>/etc/hadoop; "" for none. One
// that does not exist is skipped with a warning when the URL names its
// NameNode by host and port, as Hadoop skips missing resources and such a
// URL needs nothing from them. A URL without a port may name a
// nameservice, which only the directory's hdfs-site.xml resolves: then the
// missing directory is an error.
func confDirFor(c *configs.Connector) (dir, warning string, err error) {
	dir = hostPath(hadoopConfDir(c))
	if dir == "" {
		return "", "", nil
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, fs.ErrNotExist) {
		return dir, "", nil // present, or unreadable: loading it says which
	}
	key := "hadoop.conf.dir"
	if c.HadoopConfDir == "" {
		key = "hadoop.home"
	}
	if _, port, _ := net.SplitHostPort(c.Store.Host); port == "" {
		return "", "", fmt.Errorf("connector %q (%s): %s: %s does not exist, and %s has no port, so %s may be a nameservice, which only that directory's hdfs-site.xml resolves; "+
			"create the directory, or give the NameNode's port (hdfs://%s:8020) if %s is a host", c.Name, c.Source, key, dir, c.Store.Raw, c.Store.Host, c.Store.Host, c.Store.Host)
	}
	return "", fmt.Sprintf("%s: %s does not exist: skipped, as Hadoop skips missing configuration files (%s names its NameNode directly; authentication and data transfer protection are the defaults)",
		key, dir, c.Store.Raw), nil
}

// hdfsLoginOptions are the store's connection options; with Kerberos the
// process's shared login for the connector's principal and keytab is
// obtained (or reused) here, so a refused login fails the connector.
func hdfsLoginOptions(c *configs.Connector, logins *kerberos.Logins) (hdfs.Options, error) {
	opts, err := hdfsOptions(c)
	if err != nil {
		return opts, err
	}
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
