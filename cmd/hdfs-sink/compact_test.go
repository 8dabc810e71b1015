package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompactDryRunListsWhatWouldBeMerged: the dry run lists each
// directory with its files and how many it would hold after, changes
// nothing and needs no metastore.
func TestCompactDryRunListsWhatWouldBeMerged(t *testing.T) {
	cfg, data := toolConnector(t)
	dir := filepath.Join(data, "topics", "t", "partition=0")
	os.MkdirAll(dir, 0o755)
	for _, name := range []string{"t+0+0000000000+0000000004.avro", "t+0+0000000005+0000000009.avro", "t+0+0000000010+0000000014.avro"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	code, out, stderr := runTool("compact", "--dry-run", "--min-age", "0s", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "partition=0") || !strings.Contains(out, "none   3      3      1 ") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = runTool("compact", "--dry-run", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "younger than the minimum age") {
		t.Fatalf("dry run of young files: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "topics", "t", "+compacted")); !os.IsNotExist(err) {
		t.Fatalf("the dry run created a generation: %v", err)
	}
}

// TestCompactRefusesWithoutHive: without hive.integration there is no
// switch for readers, so nothing is compacted.
func TestCompactRefusesWithoutHive(t *testing.T) {
	cfg, _ := toolConnector(t)
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), `"hive.integration":"true"`, `"hive.integration":"false"`, 1)), 0o644)
	code, _, stderr := runTool("compact", "--dry-run", "--config", cfg)
	if code != exitUsage || !strings.Contains(stderr, "hive.integration is false") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}
