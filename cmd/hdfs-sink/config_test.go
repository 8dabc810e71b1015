package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// bareConnector has none of the worker's settings, as published files.
const bareConnector = `{"name":"orders","config":{"connector.class":"io.confluent.connect.hdfs.HdfsSinkConnector",
	"topics":"orders","store.url":"file:///tmp/hdfs-sink-unused","flush.size":"100"}}`

const secretsWorker = `bootstrap.servers=127.0.0.1:9092
value.converter=io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url=http://127.0.0.1:8081
value.converter.basic.auth.credentials.source=USER_INFO
config.providers=file,env
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
value.converter.basic.auth.user.info=svc:${env:HDFS_SINK_TEST_REGISTRY_PW}
consumer.security.protocol=SASL_PLAINTEXT
consumer.sasl.mechanism=PLAIN
consumer.sasl.jaas.config=${file:%s/kafka.properties:jaas}
listeners=HTTP://127.0.0.1:18083
group.id=connect-cluster
`

// TestCheckWithWorkerHidesSecrets: check with a worker file reads what the
// connector file leaves out, resolves ${file:...} and ${env:...}, and
// prints neither secret, while saying where settings came from.
func TestCheckWithWorkerHidesSecrets(t *testing.T) {
	t.Setenv("HDFS_SINK_TEST_REGISTRY_PW", "env-secret-4711")
	dir := conftest.WriteFiles(t, map[string]string{"orders.json": bareConnector,
		"kafka.properties": `jaas=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="file-secret-0815";`})
	if err := os.WriteFile(filepath.Join(dir, "worker.properties"), []byte(fmt.Sprintf(secretsWorker, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := dispatch([]string{"check", "--worker", filepath.Join(dir, "worker.properties"), "--config", filepath.Join(dir, "orders.json")}, &out, &errOut)
	all := out.String() + errOut.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, all)
	}
	for _, want := range []string{
		"worker: " + filepath.Join(dir, "worker.properties"),
		"worker: not applicable to hdfs-sink, ignored: group.id",
		`ok: connector "orders"`,
		"sasl.jaas.config=[hidden]",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("check output lacks %q:\n%s", want, all)
		}
	}
	for _, secret := range []string{"env-secret-4711", "file-secret-0815"} {
		if strings.Contains(all, secret) {
			t.Errorf("check output shows the secret %q:\n%s", secret, all)
		}
	}
}

// TestCheckWithEnvironmentWorker: without --worker, CONNECT_* variables
// are the worker, as in Confluent's image.
func TestCheckWithEnvironmentWorker(t *testing.T) {
	dir := conftest.WriteFiles(t, map[string]string{"orders.json": bareConnector})
	conftest.NoConnectEnv(t)
	t.Setenv("CONNECT_BOOTSTRAP_SERVERS", "kafka:9092")
	t.Setenv("CONNECT_VALUE_CONVERTER", "io.confluent.connect.avro.AvroConverter")
	t.Setenv("CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL", "http://schema-registry:8081")
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"check", "--config", filepath.Join(dir, "orders.json")}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "kafka consumer: bootstrap.servers=kafka:9092") || !strings.Contains(out.String(), "worker: the environment (CONNECT_*)") {
		t.Fatalf("environment worker not used:\n%s", out.String())
	}
	// Without a worker the same file misses what Connect keeps there, and
	// the message says where it may come from.
	conftest.NoConnectEnv(t)
	out.Reset()
	errOut.Reset()
	if code := dispatch([]string{"check", "--config", filepath.Join(dir, "orders.json")}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "bootstrap.servers is not set: the Kafka brokers, a host:port list: set bootstrap.servers in the worker file (--worker), as CONNECT_BOOTSTRAP_SERVERS in the environment, or in the connector file") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

// TestListenAddr: --status-addr (the old name) wins when set, then
// --listen when given (empty: no server), then the worker file's
// listeners, then the default; each says where it came from.
func TestListenAddr(t *testing.T) {
	w := &configs.Worker{HTTPAddr: "0.0.0.0:28083", HTTPOrigin: "listeners in worker file w.properties"}
	for _, tt := range []struct {
		args               []string
		worker             *configs.Worker
		wantAddr, wantFrom string
	}{
		{nil, nil, defaultListen, "the default --listen"},
		{nil, w, "0.0.0.0:28083", "listeners in worker file w.properties"},
		{[]string{"--listen", "127.0.0.1:9999"}, w, "127.0.0.1:9999", "--listen"},
		{[]string{"--listen", ""}, w, "", "--listen"},
		{nil, &configs.Worker{}, defaultListen, "the default --listen"},
		{[]string{"--status-addr", "127.0.0.1:7777", "--listen", "127.0.0.1:9999"}, w, "127.0.0.1:7777", "--status-addr"},
		{[]string{"--status-addr", ""}, w, "0.0.0.0:28083", "listeners in worker file w.properties"},
	} {
		var rf runFlags
		fs := rf.flagSet(io.Discard)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if addr, from := rf.http.listenAddr(fs, tt.worker); addr != tt.wantAddr || from != tt.wantFrom {
			t.Errorf("args %v, worker %+v: %q from %q, want %q from %q", tt.args, tt.worker, addr, from, tt.wantAddr, tt.wantFrom)
		}
	}
}

// TestLogsHideSecrets: a library error that quotes a secret, in any attr
// or the message, reaches the log hidden; other values keep their type.
func TestLogsHideSecrets(t *testing.T) {
	const secret = "log-secret-42"
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		lf := logFlags{level: "info", format: format}
		log, err := lf.logger(&out)
		if err != nil {
			t.Fatal(err)
		}
		lf.hide(conftest.Redactor(t, secret))
		log.With("url", "http://svc:"+secret+"@r:8081").Error("login as svc:"+secret+" failed",
			"err", errors.New("401: password "+secret+" refused"), "attempt", 3,
			slog.Group("registry", "auth", "svc:"+secret))
		if strings.Contains(out.String(), secret) {
			t.Errorf("%s log shows the secret: %s", format, out.String())
		}
		if format == "json" && !strings.Contains(out.String(), `"attempt":3`) {
			t.Errorf("a number lost its type: %s", out.String())
		}
	}
}

// TestLogsKeepResolvedAddresses: the log handler hides secrets, not the
// addresses a config provider resolved: a log line naming the broker (or
// an offset that equals its port) reaches the log as it was written.
func TestLogsKeepResolvedAddresses(t *testing.T) {
	dir := conftest.WriteFiles(t, map[string]string{
		"kafka.properties": "brokers=kafka-1:9092\nregistry=http://registry:8081\nuser.info=svc:pw-resolved-77\n"})
	conftest.NoConnectEnv(t)
	worker := filepath.Join(dir, "worker.properties")
	props := filepath.Join(dir, "kafka.properties")
	write(t, worker, "config.providers=file\nconfig.providers.file.class=FileConfigProvider\n"+
		"bootstrap.servers=${file:"+props+":brokers}\nvalue.converter.schema.registry.url=${file:"+props+":registry}\n"+
		"value.converter.basic.auth.credentials.source=USER_INFO\nvalue.converter.basic.auth.user.info=${file:"+props+":user.info}\n")
	write(t, filepath.Join(dir, "orders.json"), strings.Replace(bareConnector, "file:///tmp/hdfs-sink-unused", "file://"+t.TempDir(), 1))
	l, err := configFlags{wiring.Files{Config: filepath.Join(dir, "orders.json"), Worker: worker}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	lf := logFlags{level: "info", format: "text"}
	log, err := lf.logger(&out)
	if err != nil {
		t.Fatal(err)
	}
	lf.hide(l.Redact)
	log.Info("fetch from kafka-1:9092 at offset 9092", "registry", "http://registry:8081/subjects", "err", errors.New("401 for svc:pw-resolved-77"))
	for _, want := range []string{"fetch from kafka-1:9092 at offset 9092", "registry=http://registry:8081/subjects", `err="401 for [hidden]"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q: %s", want, out.String())
		}
	}
}

// TestOffsetsResetReadsWorker: offsets reset takes --worker like run.
func TestOffsetsResetReadsWorker(t *testing.T) {
	dir := conftest.WriteFiles(t, map[string]string{
		"orders.json":       strings.Replace(bareConnector, "file:///tmp/hdfs-sink-unused", "file://"+t.TempDir(), 1),
		"worker.properties": "bootstrap.servers=127.0.0.1:1\nvalue.converter.schema.registry.url=http://127.0.0.1:1\n"})
	var out, errOut bytes.Buffer
	code := dispatch([]string{"offsets", "reset", "--worker", filepath.Join(dir, "worker.properties"), "--config", filepath.Join(dir, "orders.json"),
		"--topic", "orders", "--partition", "0", "--to", "42", "--yes", "--force"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), `ok: connector "orders" topic orders partition 0 resumes at offset 42`) {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
