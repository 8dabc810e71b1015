package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
// the worker's declarations, and every resolved value is a secret.
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
	// hdfs.sink.hdfs.user is no secret by its key; from a provider it is.
	if got := c.Show("hdfs.sink.hdfs.user"); got != Hidden {
		t.Errorf("Show(hdfs.sink.hdfs.user) = %q", got)
	}
	r := NewRedactor(w, c)
	text := "dial failed for svc:env-secret-value as fixture-password-3, jaas password fixture-password-2"
	if got := r.Text(text); strings.Contains(got, "secret-value") || strings.Contains(got, "fixture-password") {
		t.Errorf("Text left a secret: %s", got)
	}
}

func TestConnectorDeclaresProvider(t *testing.T) {
	c, _ := connectorWith(t, workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081"),
		`,"config.providers":"file","config.providers.file.class":"FileConfigProvider",
		"value.converter.basic.auth.credentials.source":"USER_INFO",
		"value.converter.basic.auth.user.info":"${file:testdata/secrets/kafka.properties:registry.user.info}"`)
	if c.Registry.UserInfo != "svc:fixture-password-1" {
		t.Fatalf("user info %q", c.Registry.UserInfo)
	}
}

func TestProviderAllowedPaths(t *testing.T) {
	abs, _ := filepath.Abs("testdata/secrets")
	p, err := newFileProvider("file", map[string]string{"allowed.paths": abs})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := p.get(filepath.Join(abs, "kafka.properties"), "flush"); err != nil || v != "ten" {
		t.Fatalf("inside allowed.paths: %q %v", v, err)
	}
	if _, err := p.get(filepath.Join(abs, "../shapes/worker.properties"), "bootstrap.servers"); err == nil {
		t.Fatal("a path outside allowed.paths (through ..) was read")
	}
	if _, err := newFileProvider("file", map[string]string{"allowed.paths": "relative/dir"}); err == nil {
		t.Fatal("a relative allowed.paths was accepted")
	}
}

func TestDirectoryProviderRefusesPaths(t *testing.T) {
	p, _ := newDirProvider("directory", nil)
	for _, file := range []string{"../kafka.properties", "", "dir"} {
		if _, err := p.get("testdata/secrets", file); err == nil {
			t.Errorf("directory provider read %q", file)
		}
	}
}

// TestPlaceholderSyntax: Kafka's pattern; ${topic} is not a placeholder.
func TestPlaceholderSyntax(t *testing.T) {
	ps := providers{"env": envProvider{allow: mustRE(".*")}}
	lookupEnv = func(k string) (string, bool) { return "<" + k + ">", true }
	t.Cleanup(func() { lookupEnv = os.LookupEnv })
	for in, want := range map[string]string{
		"${topic}":                "${topic}",
		"a-${env:X}-b-${env:Y}":   "a-<X>-b-<Y>",
		"${env:X}/${topic}":       "<X>/${topic}",
		"plain value, no ${ here": "plain value, no ${ here",
	} {
		got, _, err := ps.resolve(in)
		if err != nil || got != want {
			t.Errorf("resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
