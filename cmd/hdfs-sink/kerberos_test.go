package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// krbFiles writes a krb5.conf, a keytab for sink@EXAMPLE.COM and a
// hadoop.conf.dir that asks for Kerberos with dtp; it returns their paths.
func krbFiles(t *testing.T, dtp string) (krb5, kt, conf string) {
	t.Helper()
	dir := t.TempDir()
	krb5 = filepath.Join(dir, "krb5.conf")
	write(t, krb5, "[libdefaults]\n default_realm = EXAMPLE.COM\n[realms]\n EXAMPLE.COM = {\n  kdc = 127.0.0.1:1\n }\n")
	k := keytab.New()
	if err := k.AddEntry("sink", "EXAMPLE.COM", "x", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, _ := k.Marshal()
	kt = filepath.Join(dir, "sink.keytab")
	if err := os.WriteFile(kt, b, 0o600); err != nil {
		t.Fatal(err)
	}
	conf = filepath.Join(dir, "hadoop")
	os.Mkdir(conf, 0o755)
	write(t, filepath.Join(conf, "core-site.xml"), `<configuration><property><name>hadoop.security.authentication</name><value>kerberos</value></property></configuration>`)
	write(t, filepath.Join(conf, "hdfs-site.xml"), `<configuration><property><name>dfs.namenode.kerberos.principal</name><value>nn/_HOST@EXAMPLE.COM</value></property>`+
		`<property><name>dfs.data.transfer.protection</name><value>`+dtp+`</value></property>`+
		`<property><name>dfs.encrypt.data.transfer.cipher.suites</name><value>AES/CTR/NoPadding</value></property></configuration>`)
	return krb5, kt, conf
}

func write(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func krbConnector(t *testing.T, dtp string, extra map[string]string) string {
	t.Helper()
	krb5, kt, conf := krbFiles(t, dtp)
	cfg := map[string]string{
		"store.url": "hdfs://nn1.example.com:8020", "hadoop.conf.dir": conf,
		"hdfs.authentication.kerberos": "true", "connect.hdfs.principal": "sink@EXAMPLE.COM",
		"connect.hdfs.keytab": kt, "hdfs.sink.krb5.conf": krb5,
		"hive.integration": "true", "hive.metastore.uris": "thrift://hms1.example.com:9083", "schema.compatibility": "BACKWARD",
		"hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/_HOST@EXAMPLE.COM",
		"consumer.override.security.protocol": "SASL_PLAINTEXT", "consumer.override.sasl.mechanism": "GSSAPI",
		"consumer.override.sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="` + kt + `" principal="sink@EXAMPLE.COM";`,
	}
	for k, v := range extra {
		cfg[k] = v
		if v == "" {
			delete(cfg, k)
		}
	}
	c := conftest.Connector(t, t.TempDir(), "krb", cfg)
	return c.Source
}

func runCheck(t *testing.T, file string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cmdCheck(context.Background(), []string{"--config", file}, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCheckDescribesKerberos(t *testing.T) {
	code, out, errOut := runCheck(t, krbConnector(t, "privacy", nil))
	if code != 0 {
		t.Fatalf("check exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"kerberos login: sink@EXAMPLE.COM from keytab", "hdfs: Kerberos to NameNode principal nn/_HOST;",
		"data transfer protection privacy", "user from the Kerberos principal",
		"; SASL GSSAPI to hive/_HOST@EXAMPLE.COM",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckRefusesKerberosSettings(t *testing.T) {
	for name, tc := range map[string]struct {
		dtp   string
		extra map[string]string
		want  string
	}{
		"conf dir asks, connector does not": {"privacy", map[string]string{"hdfs.authentication.kerberos": "false", "hive.metastore.sasl.enabled": "false",
			"consumer.override.security.protocol": "", "consumer.override.sasl.mechanism": "", "consumer.override.sasl.jaas.config": ""},
			"sets hadoop.security.authentication=kerberos: set hdfs.authentication.kerberos=true"},
		"keytab missing": {"privacy", map[string]string{"connect.hdfs.keytab": "/nonexistent.keytab"}, "keytab /nonexistent.keytab"},
		"ticket cache":   {"privacy", map[string]string{"consumer.override.sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true principal="sink";`}, "useTicketCache=true is not supported"},
		"no sasl login":  {"privacy", map[string]string{"consumer.override.sasl.jaas.config": ""}, "consumer.override.sasl.jaas.config = \"\": must be set with sasl.mechanism GSSAPI"},
		"hive no princ":  {"privacy", map[string]string{"hive.metastore.kerberos.principal": ""}, "hive.metastore.kerberos.principal is not set"},
		// Worker-level consumer.* keys are read as the connector's are.
		"worker-level jaas": {"privacy", map[string]string{"consumer.override.sasl.jaas.config": "",
			"consumer.sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/worker.keytab" principal="sink";`}, "keytab /worker.keytab"},
		"kafka principal": {"privacy", map[string]string{"consumer.override.sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/nope" principal="sink";`}, "keytab /nope"},
		// Both named at once, not the keytab only after krb5.conf is fixed.
		"krb5.conf and keytab missing": {"privacy", map[string]string{"connect.hdfs.keytab": "/nonexistent.keytab", "hdfs.sink.krb5.conf": "/nonexistent/krb5.conf"},
			"krb5.conf /nonexistent/krb5.conf cannot be read: configuration file could not be opened: /nonexistent/krb5.conf open /nonexistent/krb5.conf: no such file or directory; keytab /nonexistent.keytab: no such file or directory"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCheck(t, krbConnector(t, tc.dtp, tc.extra))
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, want 1 naming %q\n%s%s", code, tc.want, out, errOut)
			}
		})
	}
}

func TestCheckWarnsOnIPAddressWithHost(t *testing.T) {
	code, _, errOut := runCheck(t, krbConnector(t, "privacy", map[string]string{"store.url": "hdfs://10.1.2.3:8020"}))
	if code != 0 || !strings.Contains(errOut, "store.url names the NameNode by address (10.1.2.3:8020)") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}

func TestHiveSASLFromHiveSite(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "hive-site.xml"), `<configuration><property><name>hive.metastore.sasl.enabled</name><value>true</value></property>`+
		`<property><name>hive.metastore.kerberos.principal</name><value>hive/_HOST@EXAMPLE.COM</value></property></configuration>`)
	src := krbConnector(t, "privacy", map[string]string{"hive.metastore.sasl.enabled": "", "hive.metastore.kerberos.principal": "", "hive.conf.dir": dir})
	code, out, errOut := runCheck(t, src)
	if code != 0 || !strings.Contains(out, "; SASL GSSAPI to hive/_HOST@EXAMPLE.COM") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}
