package wiring

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// TestEnvironmentErrors: what a connector file names outside itself is
// checked by check (and run) with an error naming connector, file and the
// setting's file.
func TestEnvironmentErrors(t *testing.T) {
	hadoopNS := conftest.WriteFiles(t, map[string]string{"hdfs-site.xml": `<configuration>
  <property><name>dfs.nameservices</name><value>ns1</value></property>
  <property><name>dfs.ha.namenodes.ns1</name><value>nn1</value></property>
  <property><name>dfs.namenode.rpc-address.ns1.nn1</name><value>10.0.0.1:8020</value></property>
</configuration>`})
	hiveSASL := conftest.WriteFiles(t, map[string]string{"hive-site.xml": `<configuration>
  <property><name>hive.metastore.uris</name><value>thrift://hms:9083</value></property>
  <property><name>hive.metastore.sasl.enabled</name><value>true</value></property>
</configuration>`})
	hiveNoURIs := conftest.WriteFiles(t, map[string]string{"hive-site.xml": `<configuration></configuration>`})
	noSite := t.TempDir()
	hive := `,"hive.integration":"true","schema.compatibility":"BACKWARD","hive.conf.dir":"%s"`
	tests := []struct{ name, extra, want string }{
		{"unknown nameservice", `,"store.url":"hdfs://ns2","hadoop.conf.dir":"` + hadoopNS + `"`,
			`connector "c" (c.json): hdfs://ns2: no nameservice "ns2" in ` + hadoopNS + `/hdfs-site.xml (it defines ns1); to name a NameNode host, give its port (hdfs://ns2:8020)`},
		{"hive-site asks for SASL without a login", `,"store.url":"file:///tmp/x"` + fmt.Sprintf(hive, hiveSASL),
			`connector "c" (c.json): hive.metastore.sasl.enabled is true but hdfs.authentication.kerberos is not: the Metastore login uses connect.hdfs.principal and connect.hdfs.keytab`},
		{"no metastore URIs anywhere", `,"store.url":"file:///tmp/x"` + fmt.Sprintf(hive, hiveNoURIs),
			`connector "c" (c.json): hive.metastore.uris is not set: required when hive.integration is true; set it in the connector file or in ` + hiveNoURIs + `/hive-site.xml`},
		{"hive.conf.dir without hive-site.xml", `,"store.url":"file:///tmp/x"` + fmt.Sprintf(hive, noSite),
			`connector "c" (c.json): hive.conf.dir ` + noSite + `: open ` + noSite + `/hive-site.xml: no such file or directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := configs.Parse("c.json", []byte(`{"name":"c","config":{"topics":"t","flush.size":"1",
				"bootstrap.servers":"k:9092","value.converter.schema.registry.url":"http://r:8081"`+tt.extra+`}}`))
			if err != nil {
				t.Fatal(err)
			}
			_, err = checkWiring([]*configs.Connector{c}, nil, false)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
}

// TestHiveURIsFromHiveSite: a connector file without hive.metastore.uris
// uses hive-site.xml's, and check says where they came from.
func TestHiveURIsFromHiveSite(t *testing.T) {
	dir := conftest.WriteFiles(t, map[string]string{"hive-site.xml": `<configuration>
  <property><name>hive.metastore.uris</name><value>thrift://hms1:9083,thrift://hms2:9083</value></property>
</configuration>`})
	c := hiveSiteConnector(t, dir)
	reports, err := checkWiring([]*configs.Connector{c}, nil, false)
	want := "hive: metastore thrift://hms1:9083,thrift://hms2:9083 (from " + filepath.Join(dir, "hive-site.xml") + "), database default"
	if err != nil || reports[0].lines[len(reports[0].lines)-1] != want {
		t.Fatalf("report %q, %v; want last line %q", reports, err, want)
	}
}

// TestHiveSocketTimeoutFromHiveSite: hive.metastore.client.socket.timeout
// becomes the metastore client's call timeout, and check says so.
func TestHiveSocketTimeoutFromHiveSite(t *testing.T) {
	dir := conftest.WriteFiles(t, map[string]string{"hive-site.xml": `<configuration>
  <property><name>hive.metastore.uris</name><value>thrift://hms1:9083</value></property>
  <property><name>hive.metastore.client.socket.timeout</name><value>300s</value></property>
</configuration>`})
	c := hiveSiteConnector(t, dir)
	reports, err := checkWiring([]*configs.Connector{c}, nil, false)
	want := "; calls time out after 5m0s (hive.metastore.client.socket.timeout in " + filepath.Join(dir, "hive-site.xml") + ")"
	if err != nil || !strings.HasSuffix(reports[0].lines[len(reports[0].lines)-1], want) {
		t.Fatalf("report %q, %v; want the last line to end with %q", reports, err, want)
	}
	opts, err := HiveDialOptions(c, nil)
	if err != nil || len(opts) != 1 {
		t.Fatalf("HiveDialOptions = %d options, %v; want the call timeout only", len(opts), err)
	}
}

// hiveSiteConnector is a connector with Hive on and hive.conf.dir dir.
func hiveSiteConnector(t *testing.T, dir string) *configs.Connector {
	t.Helper()
	c, _, err := configs.Parse("c.json", []byte(`{"name":"c","config":{"topics":"t","flush.size":"1","store.url":"file:///tmp/x",
		"bootstrap.servers":"k:9092","value.converter.schema.registry.url":"http://r:8081",
		"hive.integration":"true","schema.compatibility":"BACKWARD","hive.conf.dir":"`+dir+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
