package configs

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

const providersWorker = `bootstrap.servers=w:9092
value.converter=io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url=http://w:8081
config.providers=file,env,directory
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
config.providers.env.param.allowlist.pattern=HDFS_SINK_.*
config.providers.directory.class=DirectoryConfigProvider`

// TestConfigProviders: the three providers resolve in connector files with
// the worker's declarations. What they resolve is hidden where its key is
// a secret (user info, JAAS) and shown where it is not (a user name): a
// value is not a secret for coming from a provider.
func TestConfigProviders(t *testing.T) {
	lookupEnv = func(k string) (string, bool) {
		if k == "HDFS_SINK_REGISTRY_PW" {
			return "env-secret-value", true
		}
		return "", false
	}
	t.Cleanup(func() { lookupEnv = os.LookupEnv })
	w := workerOf(t, providersWorker)
	c, _ := connectorWith(t, w, `,"value.converter":"io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url":"http://c:8081","value.converter.basic.auth.credentials.source":"USER_INFO",
		"value.converter.basic.auth.user.info":"svc:${env:HDFS_SINK_REGISTRY_PW}",
		"consumer.override.sasl.jaas.config":"${file:testdata/secrets/kafka.properties:jaas}",
		"hdfs.sink.hdfs.user":"${directory:testdata/secrets/dir:registry-password}"`)
	if c.Registry.UserInfo != "svc:env-secret-value" || c.HDFSUser != "fixture-password-3" ||
		!strings.Contains(c.Kafka.Consumer["sasl.jaas.config"], `password="fixture-password-2"`) {
		t.Fatalf("resolved: user info %q, HDFS user %q, jaas %q", c.Registry.UserInfo, c.HDFSUser, c.Kafka.Consumer["sasl.jaas.config"])
	}
	if got := c.Show("hdfs.sink.hdfs.user"); got != "fixture-password-3" {
		t.Errorf("Show(hdfs.sink.hdfs.user) = %q: a user name from a provider is not a secret", got)
	}
	if got := c.Show("value.converter.basic.auth.user.info"); got != secret.Hidden {
		t.Errorf("Show(value.converter.basic.auth.user.info) = %q", got)
	}
	r := NewRedactor(w, c)
	text := "dial failed for svc:env-secret-value, jaas password fixture-password-2"
	if got := r.Text(text); strings.Contains(got, "secret-value") || strings.Contains(got, "fixture-password") {
		t.Errorf("Text left a secret: %s", got)
	}
}

// TestConnectorDeclaresProvider: Kafka Connect honours only the worker's
// providers; a connector file (or a REST body) declaring its own would
// read past the worker's allowed.paths. Each such key is an error naming
// the file and the key, of the class ErrConnectorProviders.
func TestConnectorDeclaresProvider(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081")
	body := `{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1",
		"config.providers":"file","config.providers.file.class":"FileConfigProvider",
		"value.converter.basic.auth.credentials.source":"USER_INFO",
		"value.converter.basic.auth.user.info":"${file:testdata/secrets/kafka.properties:registry.user.info}"}}`
	conns, _, err := ParseFile("c.json", []byte(body), w)
	if err == nil {
		t.Fatalf("a connector's own config provider was honoured: %+v", conns[0].Registry)
	}
	if !errors.Is(err, ErrConnectorProviders) {
		t.Errorf("error is not ErrConnectorProviders: %v", err)
	}
	for _, want := range []string{
		`connector "c" (c.json): config.providers = "file": config providers are the worker's`,
		`connector "c" (c.json): config.providers.file.class = "FileConfigProvider": config providers are the worker's`,
		`value.converter.basic.auth.user.info: ${file:testdata/secrets/kafka.properties:registry.user.info} does not resolve: no config provider "file"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "fixture-password") {
		t.Errorf("the file was read: %v", err)
	}
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestOfflinePlaceholders: read offline (check --offline), placeholders
// are checked without the host's files and environment (the provider is
// declared, the path's form, allowed.paths as written) and left as
// written; the keys holding them are not validated and are listed as
// unresolved. The same files on the host (not offline) fail, as the
// files are not there.
func TestOfflinePlaceholders(t *testing.T) {
	lookupEnv = func(string) (string, bool) { return "", false }
	t.Cleanup(func() { lookupEnv = os.LookupEnv })
	worker := map[string]string{
		"config.providers": "file,env", "config.providers.file.class": "FileConfigProvider",
		"config.providers.file.param.allowed.paths": "/etc/hdfs-sink", "config.providers.env.class": "EnvVarConfigProvider",
		"bootstrap.servers":                   "${file:/etc/hdfs-sink/kafka.properties:brokers}",
		"value.converter.schema.registry.url": "${file:/etc/hdfs-sink/kafka.properties:registry}",
	}
	body := `{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"${env:FLUSH}",
		"value.converter.basic.auth.credentials.source":"USER_INFO",
		"value.converter.basic.auth.user.info":"${file:/etc/hdfs-sink/kafka.properties:user.info}"}}`
	w, _, err := newWorker("w.properties", worker, func(string) string { return "worker w.properties" }, ReadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	conns, _, err := ParseFile("c.json", []byte(body), w)
	if err != nil {
		t.Fatalf("offline: %v", err)
	}
	want := []string{"bootstrap.servers", "flush.size", "value.converter.basic.auth.user.info", "value.converter.schema.registry.url"}
	if got := conns[0].Unresolved(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Unresolved = %q, want %q", got, want)
	}
	if !conns[0].Kafka.Unresolved("consumer", "bootstrap.servers") {
		t.Error("the consumer's bootstrap.servers is not marked unresolved")
	}
	online, _, err := newWorker("w.properties", worker, func(string) string { return "worker w.properties" }, ReadOptions{})
	if err == nil {
		_, _, err = ParseFile("c.json", []byte(body), online)
	}
	if err == nil {
		t.Fatal("read on this host, the files' placeholders resolved")
	}
	for name, value := range map[string]string{
		`no config provider "vault"`:     "${vault:secret/x:k}",
		"is outside allowed.paths":       "${file:/etc/hdfs-sink/../passwd:root}",
		"is a relative path":             "${file:kafka.properties:k}",
		"takes no path (write ${env:X})": "${env:a:X}",
	} {
		bad := strings.Replace(body, "${env:FLUSH}", value, 1)
		if _, _, err := ParseFile("c.json", []byte(bad), w); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("offline %s: %v, want an error containing %q", value, err, name)
		}
	}
}
