package hive

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeSite(t *testing.T, props string) string {
	t.Helper()
	dir := t.TempDir()
	body := "<?xml version=\"1.0\"?>\n<configuration>\n" + props + "</configuration>\n"
	if err := os.WriteFile(filepath.Join(dir, "hive-site.xml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func prop(k, v string) string {
	return "  <property><name>" + k + "</name><value>" + v + "</value></property>\n"
}

func TestLoadSite(t *testing.T) {
	dir := writeSite(t, prop("hive.metastore.uris", "thrift://hms1:9083,thrift://hms2:9083")+prop("hive.metastore.sasl.enabled", "false"))
	s, err := LoadSite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.URIs != "thrift://hms1:9083,thrift://hms2:9083" || s.SASL || s.SSL {
		t.Fatalf("LoadSite = %+v", s)
	}
}

// Hive 3's standalone metastore spells its keys metastore.*, in
// metastore-site.xml; hive-site.xml wins where both set one.
func TestLoadSiteKerberos(t *testing.T) {
	dir := writeSite(t, prop("hive.metastore.uris", "thrift://hms1:9083")+prop("hive.metastore.sasl.enabled", "true"))
	ms := "<configuration>\n" + prop("metastore.kerberos.principal", "hive/_HOST@EXAMPLE.COM") + prop("metastore.thrift.uris", "thrift://other:9083") + "</configuration>\n"
	if err := os.WriteFile(filepath.Join(dir, "metastore-site.xml"), []byte(ms), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !s.SASL || s.Principal != "hive/_HOST@EXAMPLE.COM" || s.URIs != "thrift://hms1:9083" {
		t.Fatalf("LoadSite = %+v", s)
	}
}

func TestLoadSiteErrors(t *testing.T) {
	tests := []struct {
		name, props string
		is          error
		want        string
	}{
		{"ssl", prop("hive.metastore.use.SSL", "TRUE"), ErrUnsupportedSite, "hive.metastore.use.SSL is true: the metastore client of hdfs-sink speaks plain Thrift or SASL (Kerberos), not TLS"},
		{"timeout unit", prop("hive.metastore.client.socket.timeout", "10fortnights"), nil, `hive.metastore.client.socket.timeout: "10fortnights": unknown unit "fortnights" (ms, s, min, h, d)`},
		{"timeout fraction", prop("hive.metastore.client.socket.timeout", "1.5s"), nil, `hive.metastore.client.socket.timeout: "1.5s" is not a positive whole number with a unit such as 600s or 10min`},
		{"timeout zero", prop("hive.metastore.client.socket.timeout", "0"), nil, `hive.metastore.client.socket.timeout: "0" is not a positive whole number with a unit such as 600s or 10min`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSite(t, tt.props)
			_, err := LoadSite(dir)
			want := filepath.Join(dir, "hive-site.xml") + ": " + tt.want
			if err == nil || err.Error() != want || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("LoadSite error\n got: %v\nwant: %s", err, want)
			}
		})
	}
	if _, err := LoadSite(t.TempDir()); err == nil {
		t.Fatal("a hive.conf.dir without hive-site.xml was accepted")
	}
}

// TestLoadSiteSocketTimeout: HiveConf's time values, seconds without a unit.
func TestLoadSiteSocketTimeout(t *testing.T) {
	for _, tt := range []struct {
		key, value string
		want       time.Duration
	}{
		{"hive.metastore.client.socket.timeout", "600s", 600 * time.Second},
		{"hive.metastore.client.socket.timeout", "300", 300 * time.Second},
		{"hive.metastore.client.socket.timeout", "5000ms", 5 * time.Second},
		{"hive.metastore.client.socket.timeout", "10 min", 10 * time.Minute},
		{"metastore.client.socket.timeout", "2h", 2 * time.Hour},
	} {
		s, err := LoadSite(writeSite(t, prop(tt.key, tt.value)))
		if err != nil || s.SocketTimeout != tt.want {
			t.Errorf("%s=%s: SocketTimeout %v, err %v; want %v", tt.key, tt.value, s.SocketTimeout, err, tt.want)
		}
	}
	if s, err := LoadSite(writeSite(t, "")); err != nil || s.SocketTimeout != 0 {
		t.Errorf("unset: SocketTimeout %v, err %v; want 0", s.SocketTimeout, err)
	}
}
