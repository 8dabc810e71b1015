package configs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
)

func loadShapes(t *testing.T, file string) []*Connector {
	t.Helper()
	w, _, err := LoadWorker("testdata/shapes/worker.properties")
	if err != nil {
		t.Fatal(err)
	}
	conns, _, err := Load(filepath.Join("testdata/shapes", file), w)
	if err != nil {
		t.Fatal(err)
	}
	return conns
}

// TestFileShapes: every shape Connect users have gives the same connector
// settings, with what the worker adds.
func TestFileShapes(t *testing.T) {
	tests := []struct {
		file  string
		names []string
		check func(t *testing.T, c []*Connector)
	}{
		{"export.json", []string{"orders", "payments"}, func(t *testing.T, c []*Connector) {
			if c[1].Class != "HdfsSinkConnector" || c[1].Store.Path != "/finance" || c[0].FlushSize != 1000 {
				t.Errorf("export read as %+v / %+v", c[0], c[1])
			}
		}},
		{"put-body.json", []string{"put-body"}, func(t *testing.T, c []*Connector) {
			if c[0].FlushSize != 100 || c[0].Topics[0] != "clicks" {
				t.Errorf("PUT body read as %+v", c[0])
			}
		}},
		{"standalone.properties", []string{"orders-standalone"}, func(t *testing.T, c []*Connector) {
			want := []string{"invoices", "refunds"}
			if !reflect.DeepEqual(c[0].Topics, want) || c[0].TopicsDirTemplate != "/data/café" || c[0].LogsDirTemplate != "/logs" {
				t.Errorf("properties read as topics %v, topics.dir %q, logs.dir %q", c[0].Topics, c[0].TopicsDirTemplate, c[0].LogsDirTemplate)
			}
		}},
		{"bom.json", []string{"bom"}, nil},
		{"bom.properties", []string{"bom-props"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			conns := loadShapes(t, tt.file)
			var names []string
			for _, c := range conns {
				names = append(names, c.Name)
				if c.Registry.URLs[0] != "http://registry:8081" || len(c.Consumer.BootstrapServers) != 2 {
					t.Errorf("%s: worker settings not applied: %v %v", c.Name, c.Registry.URLs, c.Consumer.BootstrapServers)
				}
			}
			if !reflect.DeepEqual(names, tt.names) {
				t.Fatalf("connectors %v, want %v", names, tt.names)
			}
			if tt.check != nil {
				tt.check(t, conns)
			}
		})
	}
}

// TestDirectoryMixesShapes: a directory's .json and .properties files all
// load; one connector name in two of them is an error.
func TestDirectoryMixesShapes(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"export.json", "standalone.properties", "put-body.json"} {
		data, err := os.ReadFile(filepath.Join("testdata/shapes", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, _, _ := LoadWorker("testdata/shapes/worker.properties")
	conns, _, err := Load(dir, w)
	if err != nil || len(conns) != 4 {
		t.Fatalf("Load(dir) = %d connectors, %v", len(conns), err)
	}
	dup := []byte(`{"name": "payments", "config": {"topics": "p2", "hdfs.url": "hdfs://nn:8020", "flush.size": "1"}}`)
	if err := os.WriteFile(filepath.Join(dir, "zz.json"), dup, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(dir, w)
	want := `connector "payments" is defined twice: in ` + filepath.Join(dir, "export.json") + ` and in ` + filepath.Join(dir, "zz.json")
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// TestFileSizeLimit: a file over MaxFileBytes is refused before it is read
// as a whole.
func TestFileSizeLimit(t *testing.T) {
	f := filepath.Join(t.TempDir(), "big.json")
	big := `{"name": "big", "config": {"topics": "` + strings.Repeat("t", syntax.MaxFileBytes) + `"}}`
	if err := os.WriteFile(f, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Load(f, nil)
	want := f + ": larger than 1048576 bytes (1 MiB), the most hdfs-sink reads from a configuration file"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// TestPropertiesNamedJSON: a .properties connector saved as .json is
// named as such, not reported as a JSON syntax error at line 1; a broken
// JSON file keeps its JSON error.
func TestPropertiesNamedJSON(t *testing.T) {
	for body, props := range map[string]bool{
		"name=orders\ntopics=orders\n":            true,
		"\n  # a comment\nname=orders\n":          true,
		"\ufeffname : orders\n":                   true,
		"connector.class=HdfsSinkConnector":       true,
		`{"name": "orders", "config": {"a": 1,}}`: false,
		`"name": "orders"`:                        false,
		"[1]":                                     false,
		"":                                        false,
	} {
		_, _, err := ParseFile("orders.json", []byte(body), nil)
		if err == nil {
			t.Fatalf("%q accepted", body)
		}
		if got := strings.Contains(err.Error(), "looks like a Java .properties file"); got != props {
			t.Errorf("%q: %v (properties hint: %v, want %v)", body, err, got, props)
		}
	}
}

// TestExportWithOtherConnectors: an expand=info export of a Connect
// cluster holds its other connectors too; the HDFS sinks load and each
// other one is skipped with a warning naming it and its class. An export
// with none left is an error naming what was skipped.
func TestExportWithOtherConnectors(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081")
	data, err := os.ReadFile("testdata/shapes/export-mixed.json")
	if err != nil {
		t.Fatal(err)
	}
	conns, warns, err := ParseFile("export-mixed.json", data, w)
	if err != nil || len(conns) != 1 || conns[0].Name != "orders" {
		t.Fatalf("ParseFile = %v, %v", conns, err)
	}
	got := strings.Join(warnStrings(warns), "\n")
	for _, want := range []string{
		`connector "jdbc-sink": connector.class: skipped: io.confluent.connect.jdbc.JdbcSinkConnector is not an HDFS sink connector`,
		`connector "datagen": connector.class: skipped: io.confluent.kafka.connect.datagen.DatagenConnector is not an HDFS sink connector`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "connection.url") || strings.Contains(got, "kafka.topic") {
		t.Errorf("a skipped connector's keys were read:\n%s", got)
	}
	others := strings.Replace(string(data), `"connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector"`, `"connector.class": "io.confluent.connect.s3.S3SinkConnector"`, 1)
	_, _, err = ParseFile("export-others.json", []byte(others), w)
	want := "export-others.json: the export holds no HDFS sink connector (skipped: orders (io.confluent.connect.s3.S3SinkConnector), jdbc-sink (io.confluent.connect.jdbc.JdbcSinkConnector), datagen (io.confluent.kafka.connect.datagen.DatagenConnector))"
	if err == nil || err.Error() != want {
		t.Errorf("export of other connectors only: %v\nwant %s", err, want)
	}
}

// TestDirectorySkipsEditorFiles: hidden files and what editors leave
// beside a file they edit are never read from a config directory, even
// with a connector file's extension (Emacs' lock is a dangling link); they
// are listed as skipped, and loading is not broken.
func TestDirectorySkipsEditorFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/good/minimal-rest.json")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"orders.json":           string(good),
		"orders.json~":          "{half an edit",
		".orders.json.swp":      "b0VIM 9.0\x00\x00",
		"#orders.json#":         "{autosave",
		".hidden.json":          "not json",
		".orders.json.123.tmp":  "{",
		".hidden.properties":    "a b c\\u12",
		"README.md":             "notes",
		".2024_01_01_00_00.123": "",
	}
	for name, body := range files {
		writeFile(t, filepath.Join(dir, name), body)
	}
	symlink(t, "someone@host.1234:1700000000", filepath.Join(dir, ".#orders.json"))
	conns, _, err := Load(dir, nil)
	if err != nil || len(conns) != 1 || conns[0].Name != "orders" {
		t.Fatalf("Load = %v, %v", conns, err)
	}
	got, skipped, err := ConnectorFiles(dir)
	if err != nil || len(got) != 1 {
		t.Fatalf("ConnectorFiles = %v, %v", got, err)
	}
	var names []string
	for _, f := range skipped {
		names = append(names, filepath.Base(f))
	}
	want := []string{"#orders.json#", ".#orders.json", ".2024_01_01_00_00.123", ".hidden.json", ".hidden.properties", ".orders.json.123.tmp", ".orders.json.swp", "orders.json~"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("skipped %q, want %q", names, want)
	}
}
