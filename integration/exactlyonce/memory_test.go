//go:build integration

package exactlyonce

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestProcessMemoryCeiling: two connectors in one process, Parquet with
// rotation far away, under `run --memory-max-bytes` smaller than what
// either would buffer. Both must rotate early for memory (seen on GET
// /status), and every offset of both topics lands exactly once. mem-b has
// more partitions than the daemon's 8 workers, so its rotations run off
// the poll loop (D54); mem-a's run inline.
func TestProcessMemoryCeiling(t *testing.T) {
	t.Parallel()
	const ceiling = 4 << 20 // file buffers get 1.5 MiB for both connectors together
	dir := t.TempDir()
	var setups []*setup
	for _, c := range []struct {
		name  string
		parts int32
	}{{"mem-a", 4}, {"mem-b", 12}} {
		name, s := c.name, newSetup(t, c.parts)
		cfg := s.connector(name, map[string]string{
			"format.class": "io.confluent.connect.hdfs.parquet.ParquetFormat",
			"flush.size":   "1000000", "rotate.interval.ms": "600000",
		})
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		setups = append(setups, s)
	}
	counts := []map[int32]int64{{}, {}}
	for i, s := range setups {
		s.produce(counts[i], 12000) // more than 1.5 MiB per connector
	}
	d := setups[0].startWith(dir, []string{"--memory-max-bytes", strconv.Itoa(ceiling)})
	waitRotations(t, d, []string{"mem-a", "mem-b"}, 2*time.Minute)
	d.stop() // commits what is still open
	for i, s := range setups {
		s.check(counts[i])
	}
	if !d.logContains("process memory ceiling") {
		t.Fatal("the daemon did not log its process memory ceiling")
	}
}

// waitRotations waits until every named connector reports memory rotations.
func waitRotations(t *testing.T, d *daemon, names []string, within time.Duration) {
	t.Helper()
	waitLog(t, d, "status endpoint", 30*time.Second)
	deadline := time.Now().Add(within)
	for {
		rotated := map[string]bool{}
		conns, _ := d.status()["connectors"].([]any)
		for _, c := range conns {
			m, _ := c.(map[string]any)
			counters, _ := m["counters"].(map[string]any)
			if n, _ := counters["memory_rotations"].(float64); n > 0 {
				rotated[m["name"].(string)] = true
			}
		}
		if len(rotated) == len(names) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v only %v rotated early for memory; status: %v", within, rotated, d.status())
		}
		time.Sleep(time.Second)
	}
}
