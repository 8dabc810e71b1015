package configs

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
)

// TestHiddenIsNeverACredential: a value holding [hidden] (what GET shows
// for a secret) is refused wherever it would be used, whether the
// connector file, the worker or a config provider supplied it, and the
// error names the key without quoting a secret.
func TestHiddenIsNeverACredential(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("pw=[hidden]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const jaasPrefix = `org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=`
	for _, tt := range []struct {
		name, worker, extra, wantKey string
	}{
		{"registry user info", "", `,"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"[hidden]"`,
			`value.converter.basic.auth.user.info = "[hidden]"`},
		{"password inside a JAAS line", "",
			`,"consumer.override.security.protocol":"SASL_PLAINTEXT","consumer.override.sasl.mechanism":"PLAIN","consumer.override.sasl.jaas.config":"` + jaasPrefix + `\"[hidden]\";"`,
			`consumer.override.sasl.jaas.config = "[hidden]"`},
		{"credentials in a URL", "", `,"value.converter.schema.registry.url":"http://svc:[hidden]@reg:8081"`,
			`value.converter.schema.registry.url = "http://svc:[hidden]@reg:8081"`},
		{"in a key the worker's converter makes ignored", "value.converter=io.confluent.connect.avro.AvroConverter",
			`,"value.converter.basic.auth.user.info":"[hidden]"`, `value.converter.basic.auth.user.info = "[hidden]"`},
		{"from a config provider", "config.providers=file\nconfig.providers.file.class=FileConfigProvider",
			`,"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"u:${file:` + secrets + `:pw}"`,
			`value.converter.basic.auth.user.info = "[hidden]"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := workerOf(t, "bootstrap.servers=k:9092\nvalue.converter.schema.registry.url=http://reg:8081\n"+tt.worker)
			body := `{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"` + tt.extra + `}}`
			_, _, err := ParseFile("c.json", []byte(body), w)
			if err == nil || !strings.Contains(err.Error(), tt.wantKey+": "+reasonHidden) {
				t.Fatalf("error %v\nwant one with %s: %s", err, tt.wantKey, reasonHidden)
			}
		})
	}
	// The worker's own settings are held to the same rule.
	_, _, err := newWorker("w.properties", map[string]string{"consumer.sasl.jaas.config": "[hidden]"}, func(string) string { return "worker w.properties" }, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), `w.properties: consumer.sasl.jaas.config = "[hidden]": `+reasonHidden) {
		t.Fatalf("worker holding [hidden]: %v", err)
	}
}

// TestWrittenIsTheFileAsWritten: Written is the connector's own keys with
// placeholders intact, without the worker's keys or defaults, named.
func TestWrittenIsTheFileAsWritten(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("user.info=svc:s3cret-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := workerOf(t, "bootstrap.servers=k:9092\nvalue.converter.schema.registry.url=http://reg:8081\nconfig.providers=file\nconfig.providers.file.class=FileConfigProvider")
	ref := "${file:" + secrets + ":user.info}"
	own := map[string]string{"topics": "t", "hdfs.url": "hdfs://nn:8020", "flush.size": "1",
		"value.converter.basic.auth.credentials.source": "USER_INFO", "value.converter.basic.auth.user.info": ref}
	for _, tt := range []struct{ file, body string }{
		{"c.json", `{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1",
			"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"` + ref + `"}}`},
		{"c.properties", string(syntax.FormatProperties(nil, own))},
	} {
		conns, _, err := ParseFile(tt.file, []byte(tt.body), w)
		if err != nil {
			t.Fatal(err)
		}
		want := maps.Clone(own)
		want["name"] = "c"
		if got := conns[0].Written; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Written = %v\nwant %v", tt.file, got, want)
		}
		if conns[0].Raw["value.converter.basic.auth.user.info"] != "svc:s3cret-pw" || conns[0].Raw["bootstrap.servers"] != "k:9092" {
			t.Errorf("%s: Raw is no longer the resolved, merged settings", tt.file)
		}
	}
}

// TestWorkerHTTPOrigin: the worker says where its HTTP address was set,
// in the words of its source (a file's key, the environment's variable).
func TestWorkerHTTPOrigin(t *testing.T) {
	for _, tt := range []struct {
		name string
		load func() (*Worker, error)
		want string
	}{
		{"listeners in a file", func() (*Worker, error) { return workerOf(t, "listeners=HTTP://:8083"), nil }, "listeners in worker file w.properties"},
		{"rest.port in a file", func() (*Worker, error) { return workerOf(t, "rest.port=8083"), nil }, "rest.port in worker file w.properties"},
		{"rest.host.name and rest.port", func() (*Worker, error) { return workerOf(t, "rest.port=8083\nrest.host.name=0.0.0.0"), nil },
			"rest.host.name and rest.port in worker file w.properties"},
		{"CONNECT_LISTENERS", func() (*Worker, error) {
			w, _, err := WorkerFromEnv([]string{"CONNECT_LISTENERS=http://0.0.0.0:8083"})
			return w, err
		}, "CONNECT_LISTENERS in the environment"},
		{"CONNECT_REST_PORT", func() (*Worker, error) {
			w, _, err := WorkerFromEnv([]string{"CONNECT_REST_PORT=28083", "CONNECT_BOOTSTRAP_SERVERS=k:9092"})
			return w, err
		}, "CONNECT_REST_PORT in the environment"},
	} {
		w, err := tt.load()
		if err != nil {
			t.Fatal(err)
		}
		if w.HTTPOrigin != tt.want {
			t.Errorf("%s: HTTPOrigin %q, want %q", tt.name, w.HTTPOrigin, tt.want)
		}
	}
}
