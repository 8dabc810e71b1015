package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/storage/local"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// toolConnector writes a connector on a local store whose services are all
// unreachable (port 1).
func toolConnector(t *testing.T) (cfg, data string) {
	dir := t.TempDir()
	data = filepath.Join(dir, "data")
	cfg = filepath.Join(dir, "c.json")
	os.WriteFile(cfg, []byte(`{"name":"c","config":{"topics":"t","store.url":"file://`+data+`","flush.size":"10",
		"bootstrap.servers":"127.0.0.1:1","value.converter":"io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url":"http://127.0.0.1:1","hive.integration":"true","hive.metastore.uris":"thrift://127.0.0.1:1","schema.compatibility":"BACKWARD"}}`), 0o644)
	return cfg, data
}

func runTool(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := dispatch(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestWALInspectAndRepairCommands(t *testing.T) {
	cfg, data := toolConnector(t)
	walDir := filepath.Join(data, "logs", "t", "0")
	log := wal.Open(local.New("/"), walDir)
	if err := log.Publish(t.Context(), 1, entry.Entry{Kind: entry.KindClaim, Epoch: "e", Owner: "h:1", Topic: "t", CommittedOffset: 41, UnixMillis: 1}); err != nil {
		t.Fatal(err)
	}
	os.Truncate(log.SegmentPath(1), 20) // torn
	code, out, _ := runTool("wal", "inspect", "t", "0", "--config", cfg)
	if code != exitFinding || !strings.Contains(out, "UNREADABLE") || !strings.Contains(out, "FAILS") {
		t.Fatalf("inspect of a torn head: exit %d\n%s", code, out)
	}
	code, out, _ = runTool("wal", "repair", "--config", cfg, "--force", "t", "0")
	if code != exitFinding || !strings.Contains(out, "run again with --yes") || !strings.Contains(out, "resumes at 0") {
		t.Fatalf("repair without --yes: exit %d\n%s", code, out)
	}
	code, _, stderr := runTool("wal", "repair", "--config", cfg, "--min-age", "0s", "--yes", "--timeout", "3s", "t", "0")
	if code != exitFinding || !strings.Contains(stderr, "cannot tell whether a live owner") {
		t.Fatalf("repair with Kafka unreachable must refuse: exit %d\n%s", code, stderr)
	}
	code, out, stderr = runTool("wal", "repair", "--config", cfg, "--force", "--yes", "t", "0")
	if code != exitOK || !strings.Contains(out, "repaired: segment 2") {
		t.Fatalf("repair --force --yes: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = runTool("wal", "inspect", "--json", "--config", cfg, "t", "0")
	var rep struct {
		Stuck    bool
		Recovery []string
	}
	json.Unmarshal([]byte(out), &rep)
	if code != exitOK || rep.Stuck || !strings.Contains(fmt.Sprint(rep.Recovery), "nothing committed") {
		t.Fatalf("inspect after the repair: exit %d\n%s", code, out)
	}
}

func TestCheckConnectNamesEachFailedService(t *testing.T) {
	cfg, _ := toolConnector(t)
	code, out, stderr := runTool("check", "--connect", "--config", cfg, "--timeout", "2s")
	if code != exitFinding {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		`connector "c": Kafka 127.0.0.1:1: FAILED: `,
		`connector "c": Schema Registry http://127.0.0.1:1: FAILED: `,
		`connector "c": store file://`,
		`connector "c": Hive Metastore thrift://127.0.0.1:1: FAILED: `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "/data: OK") {
		t.Errorf("the local store is reachable:\n%s", out)
	}
}

func TestVersionJSON(t *testing.T) {
	code, out, _ := runTool("version", "--json")
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); code != 0 || err != nil || b.Version == "" || !strings.HasPrefix(b.GoVersion, "go") {
		t.Fatalf("version --json: exit %d %v\n%s", code, err, out)
	}
}

func TestOffsetsResetNeedsATarget(t *testing.T) {
	cfg, _ := toolConnector(t)
	code, _, stderr := runTool("offsets", "--reset-to", "yesterday", "--config", cfg, "--topic", "t", "--partition", "0")
	if code != exitFinding || !strings.Contains(stderr, `--to "yesterday": want an offset, earliest, latest, or an RFC 3339 time`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestVerifyWithoutKafkaCannotLook: verify never passes without the log
// offsets it compares against; it says so, naming Kafka, with exit 3.
func TestVerifyWithoutKafkaCannotLook(t *testing.T) {
	cfg, _ := toolConnector(t)
	code, _, stderr := runTool("verify", "--config", cfg, "--timeout", "3s")
	if code != exitCantLook || !strings.Contains(stderr, "Kafka at 127.0.0.1:1") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
