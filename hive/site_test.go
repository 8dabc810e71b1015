package hive

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
