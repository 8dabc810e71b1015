package itest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var daemon struct {
	once sync.Once
	path string
	err  error
}

// Binary is cmd/hdfs-sink built with the race detector and the fault
// injection switches (`-tags faults`: HDFS_SINK_CRASH_AT and friends, which
// a release build lacks), once per test process: the integration tests run
// the daemon as users do, as a process, and a race in it fails the test
// that saw it.
func Binary(t *testing.T) string {
	t.Helper()
	daemon.once.Do(func() {
		dir, err := os.MkdirTemp("", "hdfs-sink-it-")
		if err != nil {
			daemon.err = err
			return
		}
		daemon.path = filepath.Join(dir, "hdfs-sink")
		cmd := exec.Command("go", "build", "-race", "-tags", "faults", "-o", daemon.path, "./cmd/hdfs-sink")
		cmd.Dir = RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			daemon.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if daemon.err != nil {
		t.Fatal(daemon.err)
	}
	return daemon.path
}
