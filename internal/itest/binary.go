package itest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

// oldBuild is one commit's binary, built once per test process.
type oldBuild struct {
	once sync.Once
	path string
	err  error
}

var oldBuilds struct {
	mu     sync.Mutex
	byHash map[string]*oldBuild
}

// BinaryAt is cmd/hdfs-sink as commit (of this repository's history)
// built it, once per test process: the upgrade tests run an earlier build
// on the store, then this one. Builds before issue 21 read
// HDFS_SINK_CRASH_AT without a build tag, so it is the release build of
// its time (no race detector: the old code's races are not what those
// tests look for).
// The source comes from `git archive`; the module files are this tree's,
// so the build needs only the module cache this tree's build fills (the
// test runs without a network, GOPROXY=off). For a commit with the same
// go.mod that is the commit's own build; for an older one only the
// dependencies' versions are newer. A commit this clone lacks (a shallow
// clone) fails the test with what to fetch.
func BinaryAt(t *testing.T, commit string) string {
	t.Helper()
	oldBuilds.mu.Lock()
	if oldBuilds.byHash == nil {
		oldBuilds.byHash = map[string]*oldBuild{}
	}
	b := oldBuilds.byHash[commit]
	if b == nil {
		b = &oldBuild{}
		oldBuilds.byHash[commit] = b
	}
	oldBuilds.mu.Unlock()
	b.once.Do(func() {
		start := time.Now()
		b.path, b.err = buildAt(RepoRoot(), commit)
		t.Logf("built cmd/hdfs-sink at %s in %v", commit, time.Since(start).Round(100*time.Millisecond))
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// buildAt extracts commit's tree from the repository at root into a new
// temporary directory, puts root's go.mod and go.sum over it, builds
// cmd/hdfs-sink offline and removes the source, returning the binary.
func buildAt(root, commit string) (string, error) {
	if out, err := run(root, nil, "git", "rev-parse", "--verify", "--quiet", commit+"^{commit}"); err != nil {
		return "", fmt.Errorf("commit %s is not in the repository at %s (a shallow clone? `git fetch --unshallow`): %v %s", commit, root, err, out)
	}
	dir, err := os.MkdirTemp("", "hdfs-sink-old-")
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "src")
	tarball := filepath.Join(dir, "src.tar")
	defer os.RemoveAll(src)
	defer os.Remove(tarball)
	if out, err := run(root, nil, "git", "archive", "--format=tar", "-o", tarball, commit); err != nil {
		return "", fmt.Errorf("git archive %s: %v\n%s", commit, err, out)
	}
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", err
	}
	if out, err := run(src, nil, "tar", "-xf", tarball); err != nil {
		return "", fmt.Errorf("extract %s: %v\n%s", commit, err, out)
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(src, f), b, 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "hdfs-sink")
	offline := []string{"GOPROXY=off", "GOFLAGS=-mod=readonly -buildvcs=false", "GOTOOLCHAIN=local"}
	// Built as `make static` builds (CGO_ENABLED=0, -trimpath), which
	// `make test` runs first: the dependencies' compiled packages are in
	// the build cache already, and the temporary source directory stays
	// out of the cache keys, so a second run reuses the first one's build.
	static := append(offline, "CGO_ENABLED=0")
	if out, err := run(src, static, "go", "build", "-trimpath", "-o", bin, "./cmd/hdfs-sink"); err != nil {
		return "", fmt.Errorf("go build of %s (offline, with this tree's go.mod): %v\n%s", commit, err, out)
	}
	return bin, nil
}

// run runs a command in dir with env added to this process's environment.
func run(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
