package wiring

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
