//go:build integration

package chaos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// ShortFaults are the faults `make test` runs (a minute each at most): one
// of each kind of service going away and coming back, one network
// partition, and on the HA nameservice (testenv's HA profile) a failover
// inside a WAL segment's publish and a DataNode killed under pipelines of
// three. (The active NameNode killed is integration/exactlyonce's
// TestHAFailoverGroupOfTwo, in make test too.) `make chaos` runs the whole
// catalogue.
var ShortFaults = []string{"namenode-sigkill", "namenode-safemode", "datanode-sigkill", "kafka-sigkill",
	"registry-sigstop", "partition-kafka", "ha-failover-publish", "ha-datanode-sigkill"}

// TestFaultsShort runs ShortFaults against the test environment with the
// daemon as a process in a network namespace of its own: each must leave
// every offset on HDFS exactly once and registered in Hive, be reported by
// the daemon while it lasts, and be recovered from without a restart
// within the bound. (Needs root for the namespace and iptables, like the
// rest of the test environment.)
func TestFaultsShort(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Netns: os.Getenv("HDFS_SINK_CHAOS_NETNS")} // "": one of this run's own
	cfg.Defaults()
	h, err := NewHarness(Options{Config: cfg, Bin: buildDaemon(t, dir), Dir: dir, Faults: ShortFaults,
		Hold: 15 * time.Second, Steady: 5 * time.Second, RecoverWithin: 3 * time.Minute, Rate: 100, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.RunFaults(context.Background())
	t.Logf("\n%s", Table(res))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(ShortFaults) {
		t.Fatalf("%d results for %d faults", len(res), len(ShortFaults))
	}
	for _, r := range res {
		if !r.Passed() {
			t.Errorf("%s: %s (daemon log %s)\n%s", r.Fault, r.Outcome, r.Log, TailFile(r.Log, 20))
		}
	}
}

// buildDaemon builds hdfs-sink with the race detector and the
// fault-injection switches, as the other integration tests run it.
func buildDaemon(t *testing.T, dir string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hdfs-sink")
	cmd := exec.Command("go", "build", "-race", "-tags", "faults", "-o", bin, "./cmd/hdfs-sink")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
