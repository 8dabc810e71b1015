package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// A worker and a connector as they are on a Kerberized production host:
// every file they name (secrets, stores, keytabs, conf dirs) is there and
// nowhere else.
const (
	hostWorker = `bootstrap.servers=${file:/etc/hdfs-sink/kafka.properties:brokers}
config.providers=file
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.file.param.allowed.paths=/etc/hdfs-sink
value.converter=io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url=https://registry.example.com:8081
value.converter.basic.auth.credentials.source=USER_INFO
value.converter.basic.auth.user.info=${file:/etc/hdfs-sink/kafka.properties:registry.user.info}
consumer.security.protocol=SASL_SSL
consumer.sasl.mechanism=GSSAPI
consumer.sasl.kerberos.service.name=kafka
consumer.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/etc/security/keytabs/sink.keytab" principal="sink@EXAMPLE.COM";
consumer.ssl.truststore.location=/etc/kafka/truststore.jks
consumer.ssl.truststore.password=${file:/etc/hdfs-sink/kafka.properties:truststore.password}
`
	hostConnector = `{"name": "orders", "config": {
  "connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector", "topics": "orders", "flush.size": "1000",
  "hdfs.url": "hdfs://ns1/data", "hadoop.conf.dir": "/etc/hadoop/conf-of-the-host",
  "hdfs.authentication.kerberos": "true", "connect.hdfs.principal": "sink@EXAMPLE.COM",
  "connect.hdfs.keytab": "/etc/security/keytabs/sink.keytab", "hdfs.sink.krb5.conf": "/etc/krb5-of-the-host.conf",
  "hive.integration": "true", "hive.conf.dir": "/etc/hive/conf-of-the-host", "schema.compatibility": "BACKWARD"}}`
)

// TestCheckOffline: check --offline validates a host's files without the
// host: it passes where check on this machine fails for the host's files,
// and lists each thing it could not check. What is wrong in the files
// themselves still fails it.
func TestCheckOffline(t *testing.T) {
	conftest.NoConnectEnv(t)
	dir := t.TempDir()
	worker, conn := filepath.Join(dir, "connect.properties"), filepath.Join(dir, "orders.json")
	write(t, worker, hostWorker)
	write(t, conn, hostConnector)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"check", "--worker", worker, "--config", conn}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run(); code != 1 {
		t.Fatalf("check on this machine passed without the host's files (exit %d):\n%s%s", code, out, errOut)
	}
	code, out, errOut := run("--offline")
	if code != 0 {
		t.Fatalf("check --offline exit %d:\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		`ok: connector "orders"`,
		"store: hdfs://ns1/data: ns1 (a nameservice of hadoop.conf.dir, or a NameNode on port 8020)",
		"not checked (offline): bootstrap.servers = ${file:/etc/hdfs-sink/kafka.properties:brokers} (a config provider resolves it on the daemon's host)",
		"not checked (offline): value.converter.basic.auth.user.info = [hidden] (a config provider resolves it on the daemon's host)",
		"not checked (offline): consumer.ssl.truststore.location (from worker " + worker + ") /etc/kafka/truststore.jks (a file on the daemon's host)",
		"not checked (offline): consumer.ssl.truststore.password = [hidden] (a config provider resolves it on the daemon's host)",
		"not checked (offline): consumer.sasl.jaas.config (from worker " + worker + ") (the GSSAPI login's keytab and krb5.conf are on the daemon's host)",
		"not checked (offline): hadoop.conf.dir /etc/hadoop/conf-of-the-host (the NameNodes of a nameservice",
		"not checked (offline): the Kerberos login of sink@EXAMPLE.COM: keytab /etc/security/keytabs/sink.keytab, krb5.conf /etc/krb5-of-the-host.conf",
		"not checked (offline): hive.conf.dir /etc/hive/conf-of-the-host (hive-site.xml",
		"hive: metastore from /etc/hive/conf-of-the-host/hive-site.xml, database default",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check --offline output lacks %q:\n%s", want, out)
		}
	}

	// What is wrong in the files fails offline too.
	for name, edit := range map[string][2]string{
		"a bad value":              {`"flush.size": "1000"`, `"flush.size": "ten"`},
		"an undeclared provider":   {`"topics": "orders",`, `"topics": "orders", "hdfs.sink.hdfs.user": "${vault:secret/hdfs:user}",`},
		"outside allowed.paths":    {`"topics": "orders",`, `"topics": "orders", "hdfs.sink.hdfs.user": "${file:/etc/passwd:root}",`},
		"a connector's provider":   {`"topics": "orders",`, `"topics": "orders", "config.providers": "file",`},
		"a bad security protocol":  {`"flush.size": "1000"`, `"flush.size": "1000", "consumer.override.security.protocol": "SASL_TLS"`},
		"no metastore URI, no dir": {`"hive.conf.dir": "/etc/hive/conf-of-the-host",`, ``},
	} {
		t.Run(name, func(t *testing.T) {
			write(t, conn, strings.Replace(hostConnector, edit[0], edit[1], 1))
			if code, out, errOut := run("--offline"); code != 1 {
				t.Errorf("check --offline passed (exit %d):\n%s%s", code, out, errOut)
			}
		})
	}
}
