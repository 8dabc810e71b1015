package itest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
// built it, once per test process and kept between runs (buildAt): the upgrade tests run an earlier build
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
		t.Logf("cmd/hdfs-sink at %s: %s (%v)", commit, b.path, time.Since(start).Round(100*time.Millisecond))
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// buildAt returns cmd/hdfs-sink as commit (of the repository at root)
// builds it with root's go.mod and go.sum. The binary is kept in the
// user's cache directory under a name from the commit, those two files
// and the Go version, so a later run (any worktree, any clone) reuses it
// instead of building again, and nothing is left in the temporary
// directory. A build extracts the commit's tree into a temporary
// directory, puts root's module files over it, builds offline, and
// renames the binary into place: a run that stops half-way, or two that
// build at once, never leave a partial binary under that name.
func buildAt(root, commit string) (string, error) {
	full, err := run(root, nil, "git", "rev-parse", "--verify", "--quiet", commit+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("commit %s is not in the repository at %s (a shallow clone? `git fetch --unshallow`): %v %s", commit, root, err, full)
	}
	bin, modFiles, err := cachedBuild(root, full)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	dir := filepath.Dir(bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	src := filepath.Join(work, "src")
	tarball := filepath.Join(work, "src.tar")
	if out, err := run(root, nil, "git", "archive", "--format=tar", "-o", tarball, full); err != nil {
		return "", fmt.Errorf("git archive %s: %v\n%s", commit, err, out)
	}
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", err
	}
	if out, err := run(src, nil, "tar", "-xf", tarball); err != nil {
		return "", fmt.Errorf("extract %s: %v\n%s", commit, err, out)
	}
	for f, b := range modFiles {
		if err := os.WriteFile(filepath.Join(src, f), b, 0o644); err != nil {
			return "", err
		}
	}
	if err := pointReplacementsAt(root, src); err != nil {
		return "", err
	}
	built := filepath.Join(work, "hdfs-sink")
	if out, err := run(src, buildEnv, "go", slices.Concat(buildArgs, []string{built, "./cmd/hdfs-sink"})...); err != nil {
		return "", fmt.Errorf("go build of %s (offline, with this tree's go.mod): %v\n%s", commit, err, out)
	}
	if err := os.Rename(built, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// An earlier build is built as `make static` builds (CGO_ENABLED=0,
// -trimpath), which `make test` runs first: the dependencies' compiled
// packages are in the build cache already, and the temporary source
// directory stays out of the cache keys. Offline: the module cache is all
// there is.
var (
	buildEnv  = []string{"GOPROXY=off", "GOFLAGS=-mod=readonly -buildvcs=false", "GOTOOLCHAIN=local", "CGO_ENABLED=0"}
	buildArgs = []string{"build", "-trimpath", "-o"} // then the output and ./cmd/hdfs-sink
)

// cachedBuild is where the build of commit full with root's module files
// is kept (named from the commit, those files, the Go version and how it
// is built), and those files.
func cachedBuild(root, full string) (string, map[string][]byte, error) {
	key := sha256.New()
	fmt.Fprintf(key, "%s\n%s\n%q\n%q\n", full, runtime.Version(), buildEnv, buildArgs)
	modFiles := map[string][]byte{}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", nil, err
		}
		modFiles[f] = b
		fmt.Fprintf(key, "%s %d\n", f, len(b))
		key.Write(b)
	}
	reps, err := localReplacements(root)
	if err != nil {
		return "", nil, err
	}
	for _, r := range reps {
		fmt.Fprintf(key, "tree %s\n", r.dir)
		if err := hashTree(key, filepath.Join(root, r.dir)); err != nil {
			return "", nil, err
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "hdfs-sink-itest", fmt.Sprintf("hdfs-sink-%.12s-%x", full, key.Sum(nil)[:8])), modFiles, nil
}

// run runs a command in dir with env added to this process's environment.
func run(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// replacement is a replace directive of go.mod whose target is a directory
// of the tree (the colinmarc/hdfs fork, D46).
type replacement struct {
	module string // path, or path@version
	dir    string // relative to the module root
}

// localReplacements lists root's go.mod replacements by a relative
// directory.
func localReplacements(root string) ([]replacement, error) {
	out, err := run(root, nil, "go", "mod", "edit", "-json")
	if err != nil {
		return nil, fmt.Errorf("go mod edit -json: %v\n%s", err, out)
	}
	var mod struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal([]byte(out), &mod); err != nil {
		return nil, fmt.Errorf("go mod edit -json: %w", err)
	}
	var reps []replacement
	for _, r := range mod.Replace {
		if !strings.HasPrefix(r.New.Path, "./") && !strings.HasPrefix(r.New.Path, "../") {
			continue
		}
		module := r.Old.Path
		if r.Old.Version != "" {
			module += "@" + r.Old.Version
		}
		reps = append(reps, replacement{module: module, dir: r.New.Path})
	}
	return reps, nil
}

// pointReplacementsAt points the replacements by a relative directory of
// the go.mod copied into src at root's directories: an earlier commit's
// tree may not have them.
func pointReplacementsAt(root, src string) error {
	reps, err := localReplacements(root)
	if err != nil {
		return err
	}
	for _, r := range reps {
		abs := filepath.Join(root, r.dir)
		if out, err := run(src, nil, "go", "mod", "edit", "-replace", r.module+"="+abs); err != nil {
			return fmt.Errorf("go mod edit -replace %s=%s: %v\n%s", r.module, abs, err, out)
		}
	}
	return nil
}

// hashTree adds every file's path (relative to dir: the same tree in
// another clone keeps its builds) and content under dir to h: a build that
// uses dir is stale once any of it changes.
func hashTree(h interface{ Write([]byte) (int, error) }, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		_, err = h.Write(b)
		return err
	})
}
