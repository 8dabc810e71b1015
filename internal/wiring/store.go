package wiring

import (
	"fmt"
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
func hdfsOptions(c *configs.Connector) hdfs.Options {
	return hdfs.Options{URL: "hdfs://" + c.Store.Host, ConfDir: hostPath(hadoopConfDir(c)), User: c.HDFSUser,
		NameNodePrincipal: c.Kerberos.NameNodePrincipal}
}

// hdfsLoginOptions are the store's connection options; with Kerberos the
// process's shared login for the connector's principal and keytab is
// obtained (or reused) here, so a refused login fails the connector.
func hdfsLoginOptions(c *configs.Connector, logins *kerberos.Logins) (hdfs.Options, error) {
	opts := hdfsOptions(c)
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
