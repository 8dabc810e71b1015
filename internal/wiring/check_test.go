package wiring

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// checkFiles runs Check on a worker file and a connector file written from
// the given text, and returns whether it passed and what it printed.
func checkFiles(t *testing.T, worker, connector string) (bool, string, string) {
	t.Helper()
	conftest.NoConnectEnv(t)
	dir := t.TempDir()
	files := Files{Config: filepath.Join(dir, "c.json")}
	if err := os.WriteFile(files.Config, []byte(connector), 0o600); err != nil {
		t.Fatal(err)
	}
	if worker != "" {
		files.Worker = filepath.Join(dir, "worker.properties")
		if err := os.WriteFile(files.Worker, []byte(worker), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	ok := Check(files, &out, &errOut)
	return ok, out.String(), errOut.String()
}

// TestCheckListsIgnoredConsumerKeys: check shows the consumer properties
// the daemon applies, and apart from them those it ignores with why: no
// franz-go equivalent, set by hdfs-sink itself, or a group.id the group
// does not come from. None of these is listed as applied.
func TestCheckListsIgnoredConsumerKeys(t *testing.T) {
	ok, out, errOut := checkFiles(t, "bootstrap.servers=k:9092\nvalue.converter.schema.registry.url=http://r:8081\nconsumer.group.id=legacy\nconsumer.max.poll.records=500",
		`{"name":"c","config":{"topics":"t","store.url":"file:///tmp/c","flush.size":"1",
		"consumer.override.client.id":"sink-1","consumer.override.enable.auto.commit":"true","consumer.override.fetch.min.bytes":"1"}}`)
	if !ok {
		t.Fatalf("check refused:\n%s%s", out, errOut)
	}
	for _, want := range []string{
		"  kafka consumer: bootstrap.servers=k:9092 client.id=sink-1\n",
		"  kafka consumer, ignored: enable.auto.commit=true (hdfs-sink sets it), fetch.min.bytes=1 (no franz-go equivalent), " +
			"group.id=legacy (the group is consumer.override.group.id, else connect-<name>), max.poll.records=500 (no franz-go equivalent)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}

// TestWeakSecurityReported: a security-weakening setting is one warning
// line naming connector and key, from check and at start (LoadChecked,
// which run and every reload use).
func TestWeakSecurityReported(t *testing.T) {
	const worker = "bootstrap.servers=k:9092\nvalue.converter.schema.registry.url=http://r:8081"
	connector := `{"name":"c","config":{"topics":"t","store.url":"file:///tmp/c","flush.size":"1",
		"consumer.override.security.protocol":"SASL_PLAINTEXT","consumer.override.sasl.mechanism":"PLAIN",
		"consumer.override.sasl.jaas.config":"org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"pw-1234\";"}}`
	const want = `connector "c": consumer.override.sasl.mechanism: PLAIN over SASL_PLAINTEXT sends the password in clear`
	ok, out, errOut := checkFiles(t, worker, connector)
	if !ok || strings.Count(errOut, want) != 1 || !strings.Contains(errOut, "warning: "+want) {
		t.Fatalf("check (passed %v) does not warn once:\n%s%s", ok, out, errOut)
	}
	dir := t.TempDir()
	files := Files{Config: filepath.Join(dir, "c.json"), Worker: filepath.Join(dir, "w.properties")}
	os.WriteFile(files.Config, []byte(connector), 0o600)
	os.WriteFile(files.Worker, []byte(worker), 0o600)
	var log bytes.Buffer
	if _, err := LoadChecked(files, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		t.Fatal(err)
	}
	if strings.Count(log.String(), "level=WARN") != 1 || !strings.Contains(log.String(), strings.ReplaceAll(want, `"`, `\"`)) {
		t.Errorf("start does not log it once:\n%s", log.String())
	}
	if strings.Contains(out+errOut+log.String(), "pw-1234") {
		t.Error("the password was printed")
	}
}

// TestMissingHadoopConfDir: Hadoop skips configuration files that do not
// exist, and a URL that names its NameNode by host and port needs none:
// check warns and passes, and the store is opened without the directory.
// A URL without a port may be a nameservice, which only the directory
// resolves: an error naming the key and both ways out.
func TestMissingHadoopConfDir(t *testing.T) {
	const worker = "bootstrap.servers=k:9092\nvalue.converter.schema.registry.url=http://r:8081"
	missing := filepath.Join(t.TempDir(), "no-such-conf")
	for _, tc := range []struct {
		name, extra string
		pass        bool
		want        string // in stderr
	}{
		{"NameNode by host and port", `"hdfs.url":"hdfs://nn1:8020","hadoop.conf.dir":"` + missing + `"`, true,
			`warning: connector "c": hadoop.conf.dir: ` + missing + ` does not exist: skipped, as Hadoop skips missing configuration files (hdfs://nn1:8020 names its NameNode directly`},
		{"hadoop.home's etc/hadoop", `"hdfs.url":"hdfs://nn1:8020","hadoop.home":"` + missing + `"`, true,
			`warning: connector "c": hadoop.home: ` + missing + `/etc/hadoop does not exist: skipped`},
		{"maybe a nameservice", `"hdfs.url":"hdfs://ns1/data","hadoop.conf.dir":"` + missing + `"`, false,
			`connector "c" (`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, out, errOut := checkFiles(t, worker, `{"name":"c","config":{"topics":"t","flush.size":"1",`+tc.extra+`}}`)
			if ok != tc.pass || !strings.Contains(errOut, tc.want) {
				t.Fatalf("passed %v, want %v; stderr lacks %q:\n%s%s", ok, tc.pass, tc.want, out, errOut)
			}
			if !tc.pass && !strings.Contains(errOut, "hadoop.conf.dir: "+missing+" does not exist, and hdfs://ns1/data has no port, so ns1 may be a nameservice") ||
				!tc.pass && !strings.Contains(errOut, "give the NameNode's port (hdfs://ns1:8020)") {
				t.Errorf("the error does not say why and how out:\n%s", errOut)
			}
			if tc.pass && !strings.Contains(out, "store: hdfs://nn1:8020: NameNode nn1:8020; authentication simple") {
				t.Errorf("store line:\n%s", out)
			}
		})
	}
	c, _, err := configs.Parse("c.json", []byte(`{"name":"c","config":{"topics":"t","flush.size":"1","hdfs.url":"hdfs://nn1:8020",
		"hadoop.conf.dir":"`+missing+`","bootstrap.servers":"k:9092","value.converter.schema.registry.url":"http://r:8081"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if opts, err := hdfsLoginOptions(c, nil); err != nil || opts.ConfDir != "" {
		t.Errorf("the store would be opened with %+v, %v; want no conf dir", opts, err)
	}
}
