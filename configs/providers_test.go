package configs

import (
	"errors"
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
	if got := c.Show("value.converter.basic.auth.user.info"); got != Hidden {
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

// TestProviderAllowedPaths: with allowed.paths (KIP-993) no resolution
// leaves the allowed directories, whether by "..", by a symbolic link
// inside them or by a relative path; links that stay inside (a Kubernetes
// secret mount's ..data) and an allowed directory that is itself a link
// are followed.
func TestProviderAllowedPaths(t *testing.T) {
	base := t.TempDir()
	allowed, outside := filepath.Join(base, "secrets"), filepath.Join(base, "other")
	for _, d := range []string{allowed, outside, filepath.Join(allowed, "..2024_01_01"), filepath.Join(base, "secrets-other")} {
		mkdir(t, d)
	}
	writeFile(t, filepath.Join(allowed, "kafka.properties"), "flush=ten\n")
	writeFile(t, filepath.Join(allowed, "..2024_01_01", "pw"), "mounted")
	writeFile(t, filepath.Join(outside, "kafka.properties"), "flush=stolen\n")
	writeFile(t, filepath.Join(outside, "pw"), "stolen")
	writeFile(t, filepath.Join(base, "secrets-other", "kafka.properties"), "flush=stolen\n")
	symlink(t, "..2024_01_01", filepath.Join(allowed, "..data"))
	symlink(t, "..data/pw", filepath.Join(allowed, "pw"))
	symlink(t, filepath.Join(outside, "kafka.properties"), filepath.Join(allowed, "leak.properties"))
	symlink(t, filepath.Join(outside, "pw"), filepath.Join(allowed, "leak"))
	symlink(t, outside, filepath.Join(allowed, "sub"))
	symlink(t, allowed, filepath.Join(base, "link-to-secrets"))

	file, err := newFileProvider("file", map[string]string{"allowed.paths": allowed})
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := newDirProvider("directory", map[string]string{"allowed.paths": allowed})
	viaLink, _ := newFileProvider("file", map[string]string{"allowed.paths": filepath.Join(base, "link-to-secrets")})
	rel, _ := filepath.Rel(mustGetwd(t), filepath.Join(allowed, "kafka.properties"))
	for _, tc := range []struct {
		name      string
		get       func() (string, error)
		want, err string
	}{
		{"file inside", func() (string, error) { return file.get(filepath.Join(allowed, "kafka.properties"), "flush") }, "ten", ""},
		{"file through ..", func() (string, error) {
			return file.get(filepath.Join(allowed, "../other/kafka.properties"), "flush")
		}, "", "outside allowed.paths"},
		{"sibling with the root as prefix", func() (string, error) {
			return file.get(filepath.Join(base, "secrets-other", "kafka.properties"), "flush")
		}, "", "outside allowed.paths"},
		{"file link leading out", func() (string, error) { return file.get(filepath.Join(allowed, "leak.properties"), "flush") }, "", "(a link to " + filepath.Join(outside, "kafka.properties") + ") is outside allowed.paths"},
		{"directory link leading out", func() (string, error) { return file.get(filepath.Join(allowed, "sub", "kafka.properties"), "flush") }, "", "is outside allowed.paths"},
		{"relative path", func() (string, error) { return file.get(rel, "flush") }, "", "is a relative path"},
		{"allowed root is a link", func() (string, error) {
			return viaLink.get(filepath.Join(base, "link-to-secrets", "kafka.properties"), "flush")
		}, "ten", ""},
		{"directory provider, link inside (Kubernetes mount)", func() (string, error) { return dir.get(allowed, "pw") }, "mounted", ""},
		{"directory provider, link leading out", func() (string, error) { return dir.get(allowed, "leak") }, "", "is outside allowed.paths"},
		{"directory provider, directory through ..", func() (string, error) { return dir.get(filepath.Join(allowed, "..", "other"), "pw") }, "", "is outside allowed.paths"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.get()
			switch {
			case tc.err == "" && (err != nil || v != tc.want):
				t.Errorf("got %q, %v; want %q", v, err, tc.want)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("got %q, %v; want an error containing %q", v, err, tc.err)
			case strings.Contains(v, "stolen"):
				t.Errorf("read outside allowed.paths: %q", v)
			}
		})
	}
	if _, err := newFileProvider("file", map[string]string{"allowed.paths": "relative/dir"}); err == nil {
		t.Fatal("a relative allowed.paths was accepted")
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

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
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
