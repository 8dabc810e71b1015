package configs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func parseMap(t *testing.T, extra map[string]string) (*Connector, []Warning, error) {
	t.Helper()
	cfg := map[string]string{
		"name": "k", "topics": "t", "hdfs.url": "hdfs://nn.example.com:8020", "flush.size": "10",
		"bootstrap.servers": "b:9092", "value.converter.schema.registry.url": "http://r:8081",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	b, _ := json.Marshal(cfg)
	return Parse("k.json", b)
}

func TestKerberosKeys(t *testing.T) {
	c, warns, err := parseMap(t, map[string]string{
		"hdfs.authentication.kerberos": "true", "connect.hdfs.principal": "connect/_HOST@EXAMPLE.COM",
		"connect.hdfs.keytab": "/etc/security/connect.keytab", "hdfs.namenode.principal": "nn/_HOST@EXAMPLE.COM",
		"kerberos.ticket.renew.period.ms": "60000", "hdfs.sink.krb5.conf": "/etc/krb5-prod.conf",
		"hive.integration": "true", "hive.metastore.uris": "thrift://hms:9083", "schema.compatibility": "BACKWARD",
		"hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/_HOST@EXAMPLE.COM",
	})
	if err != nil || len(warns) != 0 {
		t.Fatalf("err %v, warnings %v", err, warns)
	}
	want := Kerberos{Enabled: true, Principal: "connect/_HOST@EXAMPLE.COM", Keytab: "/etc/security/connect.keytab",
		NameNodePrincipal: "nn/_HOST@EXAMPLE.COM", RenewPeriod: time.Minute, Krb5Conf: "/etc/krb5-prod.conf"}
	if c.Kerberos != want {
		t.Errorf("Kerberos = %+v, want %+v", c.Kerberos, want)
	}
	if c.Hive.SASLEnabled == nil || !*c.Hive.SASLEnabled || c.Hive.KerberosPrincipal != "hive/_HOST@EXAMPLE.COM" {
		t.Errorf("Hive SASL = %v %q", c.Hive.SASLEnabled, c.Hive.KerberosPrincipal)
	}
}

func TestKerberosKeysWithoutKerberos(t *testing.T) {
	_, warns, err := parseMap(t, map[string]string{
		"connect.hdfs.principal": "p@R", "kerberos.ticket.renew.period.ms": "3600000",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := warnStrings(warns)
	if len(got) != 1 || !strings.Contains(got[0], "connect.hdfs.principal: ignored: hdfs.authentication.kerberos is not true") {
		t.Errorf("warnings %v", got)
	}
}

func TestKerberosErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		extra map[string]string
		want  string
	}{
		"no principal": {map[string]string{"hdfs.authentication.kerberos": "true", "connect.hdfs.keytab": "/k"},
			"connect.hdfs.principal is not set"},
		"renew too short": {map[string]string{"hdfs.authentication.kerberos": "true", "connect.hdfs.keytab": "/k",
			"connect.hdfs.principal": "p", "kerberos.ticket.renew.period.ms": "10"}, "kerberos.ticket.renew.period.ms"},
		"sasl without kerberos": {map[string]string{"hive.integration": "true", "hive.metastore.uris": "thrift://h:9083",
			"schema.compatibility": "BACKWARD", "hive.metastore.sasl.enabled": "true"}, "needs hdfs.authentication.kerberos=true"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := parseMap(t, tc.extra)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
