package daemon

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// TestPutRefusesConnectorProviders: a config PUT over the REST API may not
// declare config providers (Kafka Connect honours only the worker's): the
// body is refused as a *rest.ConfigError (400) naming the keys, and no
// file is written, so nothing the body names is ever read or sent.
func TestPutRefusesConnectorProviders(t *testing.T) {
	dir := t.TempDir()
	d := newDaemon(Options{Logger: testLogger(t), Config: dir}, nil, wiring.ProcessMemory{})
	body := `{"topics": "t", "hdfs.url": "hdfs://nn:8020", "flush.size": "1", "bootstrap.servers": "k:9092",
		"value.converter.schema.registry.url": "http://r:8081",
		"config.providers": "file", "config.providers.file.class": "FileConfigProvider",
		"value.converter.basic.auth.credentials.source": "USER_INFO",
		"value.converter.basic.auth.user.info": "${file:/etc/passwd:root}"}`
	_, _, err := d.Put("p", strings.NewReader(body))
	var ce *rest.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Put = %v, want a *rest.ConfigError (400)", err)
	}
	for _, key := range []string{"config.providers =", "config.providers.file.class ="} {
		if !strings.Contains(ce.Error(), key) {
			t.Errorf("the refusal does not name %s: %v", key, ce)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "p.json")); err == nil {
		t.Fatal("the refused config was written")
	}
}

// TestReloadSkipsEditorFiles: an editor open on a connector file leaves a
// lock (a dangling link), a swap file and a backup in the directory; a
// reload reads none of them (a debug line each), and they do not count as
// a change of the files.
func TestReloadSkipsEditorFiles(t *testing.T) {
	dir := t.TempDir()
	conftest.Connector(t, dir, "orders", nil)
	var log bytes.Buffer
	d := newDaemon(Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})), Config: dir}, nil, wiring.ProcessMemory{})
	before := configFingerprint(dir)
	if err := os.Symlink("someone@host.1234:1700000000", filepath.Join(dir, ".#orders.json")); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{".orders.json.swp": "b0VIM\x00", "orders.json~": "{", "#orders.json#": "{", ".draft.json": "{"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if configFingerprint(dir) != before {
		t.Error("editor files changed the fingerprint: a reload would follow every keystroke")
	}
	conns, err := d.loadForReload()
	if err != nil || len(conns) != 1 {
		t.Fatalf("reload = %v, %v\n%s", conns, err, log.String())
	}
	for _, name := range []string{".#orders.json", ".orders.json.swp", "orders.json~", "#orders.json#", ".draft.json"} {
		if !strings.Contains(log.String(), `level=DEBUG msg="config: skipped a hidden or editor file" file=`+filepath.Join(dir, name)) {
			t.Errorf("no debug line for %s:\n%s", name, log.String())
		}
	}
}

// TestReloadWatchesPropertiesFiles: the daemon loads the directory's
// .properties connector files too, so a change to one is a change of the
// files (a reload), and a PUT is checked with them.
func TestReloadWatchesPropertiesFiles(t *testing.T) {
	dir := t.TempDir()
	conftest.Connector(t, dir, "orders", nil)
	props := filepath.Join(dir, "clicks.properties")
	body := "name=clicks\ntopics=clicks\nstore.url=file://" + filepath.Join(dir, "clicks") + "\nflush.size=10\n" +
		"bootstrap.servers=127.0.0.1:1\nvalue.converter.schema.registry.url=http://127.0.0.1:1\n"
	if err := os.WriteFile(props, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := connectorFiles(dir)
	if err != nil || len(files) != 2 {
		t.Fatalf("connectorFiles = %v, %v; want orders.json and clicks.properties", files, err)
	}
	before := configFingerprint(dir)
	if err := os.WriteFile(props, []byte(strings.Replace(body, "flush.size=10", "flush.size=20", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if configFingerprint(dir) == before {
		t.Error("a changed .properties connector file is not a change: no reload would follow")
	}
}
