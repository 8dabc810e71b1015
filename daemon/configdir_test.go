package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// withWorker gives the fixture's daemon a worker file holding what
// published connector files leave out (bootstrap.servers, the converter,
// its registry) and the file config provider, and its directory as the
// config; it returns the directory for secrets.
func (f *daemonFixture) withWorker() string {
	f.t.Helper()
	secrets := f.t.TempDir()
	worker := filepath.Join(secrets, "worker.properties")
	body := fmt.Sprintf(`bootstrap.servers=%s
value.converter=io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url=http://127.0.0.1:1
config.providers=file
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
`, strings.Join(f.brokers, ","))
	if err := os.WriteFile(worker, []byte(body), 0o600); err != nil {
		f.t.Fatal(err)
	}
	f.d.files.Config, f.d.files.Worker = f.dir, worker
	return secrets
}

// writeConnector writes a connector file as published: no worker keys.
func (f *daemonFixture) writeConnector(file, name string, cfg map[string]string) {
	f.t.Helper()
	full := map[string]string{"name": name, "topics": name, "store.url": "file://" + filepath.Join(f.dir, name), "flush.size": "5"}
	maps.Copy(full, cfg)
	var data []byte
	if strings.HasSuffix(file, ".properties") {
		data = syntax.FormatProperties(nil, full)
	} else {
		data, _ = json.Marshal(map[string]any{"name": name, "config": full})
	}
	if err := os.WriteFile(filepath.Join(f.dir, file), data, 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// loadAndRun loads the directory and worker as run does and runs them.
func (f *daemonFixture) loadAndRun() {
	f.t.Helper()
	l, err := wiring.LoadChecked(f.d.files, f.d.log)
	if err != nil {
		f.t.Fatal(err)
	}
	f.d.board.setLoaded(l)
	f.run(l.Conns)
	for _, c := range l.Conns {
		f.waitFor(c.Name+" running", func() bool { return f.d.board.get(c.Name).state == "running" })
	}
}

// rest calls the daemon's REST API as a client on the host would.
func (f *daemonFixture) rest(method, path, body string) (int, string) {
	f.t.Helper()
	srv := httptest.NewServer(f.d.restAPI("").Handler())
	defer srv.Close()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// getConfig is GET /connectors/<name>/config, decoded.
func (f *daemonFixture) getConfig(name string) map[string]string {
	f.t.Helper()
	code, body := f.rest("GET", "/connectors/"+name+"/config", "")
	var cfg map[string]string
	if err := json.Unmarshal([]byte(body), &cfg); code != 200 || err != nil {
		f.t.Fatalf("GET config: %d %s %v", code, body, err)
	}
	return cfg
}

// TestPutAppliesTheWorker: a published config (no bootstrap.servers, no
// converter: the worker's) is accepted by PUT when the daemon runs with
// that worker, and the connector it adds runs with the worker's settings.
func TestPutAppliesTheWorker(t *testing.T) {
	f := newDaemonFixture(t, "orders", "added")
	f.withWorker()
	f.writeConnector("orders.json", "orders", nil)
	f.loadAndRun()
	body := `{"topics":"added","store.url":"file://` + filepath.Join(f.dir, "added") + `","flush.size":"5"}`
	if code, resp := f.rest("PUT", "/connectors/added/config", body); code != 201 {
		t.Fatalf("PUT a published config: %d %s", code, resp)
	}
	f.waitFor("added running", func() bool { return f.d.board.get("added").state == "running" })
	if got := f.d.supervisor("added").config().Consumer.BootstrapServers; strings.Join(got, ",") != strings.Join(f.brokers, ",") {
		t.Fatalf("the added connector's brokers are %v, want the worker's %v", got, f.brokers)
	}
	f.produce("added", 5)
	f.waitFor("added commits", func() bool { return f.committed("added") == 1 })
	f.stop()
	f.wait()
}

// TestGetEditPutKeepsSecretsAndReferences: what Connect's UIs do, GET the
// config, change one key, PUT it all back, leaves a ${file:} reference and
// a literal secret on disk as they were (never [hidden]), and the
// connector runs with the change.
func TestGetEditPutKeepsSecretsAndReferences(t *testing.T) {
	f := newDaemonFixture(t, "orders", "clicks")
	secrets := f.withWorker()
	secretFile := filepath.Join(secrets, "registry.properties")
	if err := os.WriteFile(secretFile, []byte("user.info=svc:file-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := "${file:" + secretFile + ":user.info}"
	// Each sets its own value.converter, so that its converter settings
	// are the ones used (Connect ignores them under the worker's).
	const avro = "io.confluent.connect.avro.AvroConverter"
	f.writeConnector("orders.json", "orders", map[string]string{"value.converter": avro, "value.converter.basic.auth.credentials.source": "USER_INFO",
		"value.converter.basic.auth.user.info": ref, "value.converter.schema.registry.url": "http://svc:url-s3cret@127.0.0.1:1"})
	f.writeConnector("clicks.properties", "clicks", map[string]string{"value.converter": avro, "value.converter.basic.auth.credentials.source": "USER_INFO",
		"value.converter.basic.auth.user.info": "svc:literal-s3cret", "value.converter.schema.registry.url": "http://127.0.0.1:1"})
	f.loadAndRun()
	for _, tt := range []struct {
		name, file string
		kept       []string // on disk after the round trip
	}{
		{"orders", "orders.json", []string{ref, "svc:url-s3cret@127.0.0.1:1"}},
		{"clicks", "clicks.properties", []string{"svc:literal-s3cret"}},
	} {
		cfg := f.getConfig(tt.name)
		if strings.Contains(fmt.Sprint(cfg), "s3cret") {
			t.Fatalf("GET %s config shows a secret: %v", tt.name, cfg)
		}
		cfg["flush.size"] = "2"
		body, _ := json.Marshal(cfg)
		if code, resp := f.rest("PUT", "/connectors/"+tt.name+"/config", string(body)); code != 200 || strings.Contains(resp, "s3cret") {
			t.Fatalf("PUT %s back: %d %s", tt.name, code, resp)
		}
		disk, err := os.ReadFile(filepath.Join(f.dir, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range tt.kept {
			if !strings.Contains(string(disk), want) || strings.Contains(string(disk), secret.Hidden) {
				t.Fatalf("%s after GET -> edit -> PUT lacks %q or holds %s:\n%s", tt.file, want, secret.Hidden, disk)
			}
		}
		f.waitFor(tt.name+" restarted with flush.size=2", func() bool {
			s := f.d.supervisor(tt.name)
			return s != nil && s.config().FlushSize == 2 && f.d.board.get(tt.name).state == "running"
		})
		if got := f.getConfig(tt.name); got["value.converter.basic.auth.user.info"] != cfg["value.converter.basic.auth.user.info"] {
			t.Fatalf("GET after the PUT shows %q, before %q", got["value.converter.basic.auth.user.info"], cfg["value.converter.basic.auth.user.info"])
		}
		f.produce(tt.name, 2)
		f.waitFor(tt.name+" commits by its new config", func() bool { return f.committed(tt.name) == 1 })
	}
	if _, err := os.Stat(filepath.Join(f.dir, "clicks.json")); err == nil {
		t.Fatal("the .properties connector was written to a new .json file")
	}
	f.stop()
	f.wait()
}

// TestPutRefusals: a [hidden] the daemon cannot restore, a file that
// holds other connectors, a name taken by another connector's file: each
// is refused with what to do, and no file changes.
func TestPutRefusals(t *testing.T) {
	f := newDaemonFixture(t, "orders", "clicks", "views")
	f.withWorker()
	export := map[string]any{}
	for _, n := range []string{"orders", "clicks"} {
		export[n] = map[string]any{"info": map[string]any{"name": n, "config": map[string]string{
			"topics": n, "store.url": "file://" + filepath.Join(f.dir, n), "flush.size": "5"}}}
	}
	data, _ := json.Marshal(export)
	if err := os.WriteFile(filepath.Join(f.dir, "export.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	f.writeConnector("new.json", "views", nil) // a file named like the connector PUT creates below
	f.loadAndRun()
	before := configFingerprint(f.dir)
	for _, tt := range []struct {
		name, path, body string
		code             int
		want             string
	}{
		{"[hidden] with nothing stored", "/connectors/views/config",
			`{"topics":"views","store.url":"file:///tmp/v","flush.size":"5","consumer.override.sasl.jaas.config":"[hidden]"}`, 400,
			`consumer.override.sasl.jaas.config = \"[hidden]\": holds [hidden], which is how a hidden secret is shown, never a credential`},
		{"a connector of an export", "/connectors/orders/config", `{"topics":"orders","store.url":"file:///tmp/o","flush.size":"3"}`, 403,
			"connector orders would be written to " + filepath.Join(f.dir, "export.json") + ", which also defines clicks"},
		{"a new connector's file holds another", "/connectors/new/config", `{"topics":"views","store.url":"file:///tmp/n","flush.size":"3"}`, 403,
			"connector new would be written to " + filepath.Join(f.dir, "new.json") + ", which also defines views"},
		{"the body names another connector", "/connectors/views/config", `{"name":"other","topics":"views"}`, 400,
			"the config's name other is not the connector's name views"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code, body := f.rest("PUT", tt.path, tt.body); code != tt.code || !strings.Contains(body, tt.want) {
				t.Fatalf("%d %s\nwant %d with %s", code, body, tt.code, tt.want)
			}
			if configFingerprint(f.dir) != before {
				t.Fatal("a refused PUT changed the config directory")
			}
		})
	}
	f.stop()
	f.wait()
}

// TestReloadReadsPropertiesFiles: a config directory of .properties files
// reloads like one of .json files; a reload does not take them for an
// empty directory and stop every connector.
func TestReloadReadsPropertiesFiles(t *testing.T) {
	f := newDaemonFixture(t, "orders")
	f.withWorker()
	f.writeConnector("orders.properties", "orders", nil)
	f.loadAndRun()
	f.writeConnector("orders.properties", "orders", map[string]string{"flush.size": "2"})
	f.d.reloadNow()
	f.waitFor("orders restarted with flush.size=2", func() bool {
		s := f.d.supervisor("orders")
		return s != nil && s.config().FlushSize == 2 && f.d.board.get("orders").state == "running"
	})
	f.stop()
	f.wait()
}

// TestEncodeConnector: a REST body becomes the connector's file in the
// format of the file it lives in; a .properties file takes strings,
// numbers and booleans as Connect's REST API accepts them, and refuses
// what it cannot hold.
func TestEncodeConnector(t *testing.T) {
	for _, tt := range []struct {
		file, body, want, err string
	}{
		{"c.json", `{"flush.size":1000,"hive.integration":true,"topics":"t"}`,
			"{\n  \"config\": {\n    \"flush.size\": 1000,\n    \"hive.integration\": true,\n    \"name\": \"c\",\n    \"topics\": \"t\"\n  },\n  \"name\": \"c\"\n}\n", ""},
		{"c.properties", `{"flush.size":1000,"hive.integration":true,"topics":"t"}`,
			"flush.size=1000\nhive.integration=true\nname=c\ntopics=t\n", ""},
		{"c.PROPERTIES", `{"topics":"a b"}`, "name=c\ntopics=a b\n", ""},
		{"c.properties", `{"topics":["t"]}`, "", "topics: the connector is a .properties file, whose values are strings, numbers or booleans"},
		{"c.properties", `{"topics":null}`, "", "topics: the connector is a .properties file"},
	} {
		cfg, err := decodeConfig(strings.NewReader(tt.body), "c")
		if err != nil {
			t.Fatal(err)
		}
		data, err := encodeConnector(tt.file, "c", cfg)
		got := string(data)
		if i := strings.Index(got, "\n"); strings.HasPrefix(got, "#") {
			got = got[i+1:] // the header comment
		}
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %s: error %v, want %q", tt.file, tt.body, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s %s: %v\n%q\nwant %q", tt.file, tt.body, err, got, tt.want)
		}
	}
}
