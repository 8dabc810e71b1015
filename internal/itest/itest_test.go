package itest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadEnvFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "testenv.env")
	content := "# comment\n\nA=1\n B = two words \nNOEQUALS\nC=x=y\n"
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	got := readEnvFile(f)
	want := map[string]string{"A": "1", "B": "two words", "C": "x=y"}
	if len(got) != len(want) {
		t.Fatalf("readEnvFile = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if m := readEnvFile(filepath.Join(t.TempDir(), "missing")); len(m) != 0 {
		t.Errorf("missing file gave %v, want empty", m)
	}
}

func TestEnvOverridesDefault(t *testing.T) {
	t.Setenv(EnvRegistryURL, "http://127.0.0.1:1/prefix/")
	if got := RegistryURL(); got != "http://127.0.0.1:1/prefix" {
		t.Errorf("RegistryURL = %q, want the override without trailing slash", got)
	}
	t.Setenv(EnvMetastore, "thrift://127.0.0.2:9999")
	if got := MetastoreAddr(); got != "127.0.0.2:9999" {
		t.Errorf("MetastoreAddr = %q, want 127.0.0.2:9999", got)
	}
}

// closedAddr is a loopback address nothing listens on (port 1 needs root
// to bind, and no test environment service uses it).
const closedAddr = "127.0.0.1:1"

// Each check against a dead address must fail with a *ServiceError naming
// the service and the address, which is what Require* prints.
func TestChecksNameTheUnreachableService(t *testing.T) {
	addr := closedAddr
	cases := []struct {
		name, env, value, service, wantAddr string
	}{
		{"kafka", EnvKafka, addr, ServiceKafka, addr},
		{"hdfs", EnvNameNode, addr, ServiceHDFS, addr},
		{"hms", EnvMetastore, "thrift://" + addr, ServiceMetastore, addr},
		{"registry", EnvRegistryURL, "http://" + addr + "/apis/ccompat/v7", ServiceRegistry, "http://" + addr + "/apis/ccompat/v7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := Check(ctx, tc.name)
			var se *ServiceError
			if !errors.As(err, &se) {
				t.Fatalf("Check(%s) = %v, want *ServiceError", tc.name, err)
			}
			if se.Service != tc.service || se.Addr != tc.wantAddr {
				t.Errorf("ServiceError{%q, %q}, want {%q, %q}", se.Service, se.Addr, tc.service, tc.wantAddr)
			}
			wantPrefix := tc.service + " at " + tc.wantAddr + " is not reachable: "
			if !strings.HasPrefix(err.Error(), wantPrefix) {
				t.Errorf("message %q does not start with %q", err, wantPrefix)
			}
		})
	}
}

func TestCheckUnknownService(t *testing.T) {
	if err := Check(context.Background(), "zookeeper"); err == nil || !strings.Contains(err.Error(), "zookeeper") {
		t.Fatalf("Check(zookeeper) = %v, want an error naming it", err)
	}
}

func TestUniqueNameIsAnIdentifier(t *testing.T) {
	a, b := UniqueName(t, "p_"), UniqueName(t, "p_")
	if a == b {
		t.Fatalf("two calls gave the same name %q", a)
	}
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			t.Fatalf("name %q has %q, want only [a-z0-9_]", a, r)
		}
	}
}

func TestBuildAtNamesAMissingCommit(t *testing.T) {
	missing := strings.Repeat("0", 40)
	_, err := buildAt(RepoRoot(), missing)
	if err == nil || !strings.Contains(err.Error(), "commit "+missing+" is not in the repository") || !strings.Contains(err.Error(), "--unshallow") {
		t.Fatalf("buildAt(%s) = %v, want an error naming the missing commit and --unshallow", missing, err)
	}
}

// TestBuildAtReusesTheKeptBuild: a build kept from an earlier run (any
// worktree) is returned as it is, without building again.
func TestBuildAtReusesTheKeptBuild(t *testing.T) {
	// The Go build cache stays where it is (by default it moves with
	// XDG_CACHE_HOME): a regression builds, and fails, in seconds.
	gocache, err := run(RepoRoot(), nil, "go", "env", "GOCACHE")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", gocache)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	full, err := run(RepoRoot(), nil, "git", "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	kept, _, err := cachedBuild(RepoRoot(), full)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("kept"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := buildAt(RepoRoot(), "HEAD")
	if b, _ := os.ReadFile(kept); err != nil || got != kept || string(b) != "kept" {
		t.Fatalf("buildAt(HEAD) = %q, %v (kept file %q), want the kept build %s untouched", got, err, b, kept)
	}
}

// TestKeptBuildNamesItsModuleFiles: a build is kept under a name of its
// commit and of the go.mod and go.sum it was built with, so a change of
// either builds again.
func TestKeptBuildNamesItsModuleFiles(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := func(gomod, gosum string) string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644)
		os.WriteFile(filepath.Join(dir, "go.sum"), []byte(gosum), 0o644)
		return dir
	}
	// forked is a root whose go.mod replaces a module by ./fork (D46), the
	// fork holding one file with content.
	const replacing = "module m\nreplace example.com/x => ./fork\n"
	forked := func(content string) string {
		dir := root(replacing, "")
		os.Mkdir(filepath.Join(dir, "fork"), 0o755)
		os.WriteFile(filepath.Join(dir, "fork", "x.go"), []byte(content), 0o644)
		return dir
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	base := root("module m\n", "")
	paths := map[string]string{}
	for name, c := range map[string]struct{ root, commit string }{
		"base":         {base, commit},
		"commit":       {base, strings.Replace(commit, "0", "f", 1)},
		"go.mod":       {root("module m\ngo 1.24\n", ""), commit},
		"go.sum":       {root("module m\n", "x v1 h1:y\n"), commit},
		"split":        {root("module m", "\n"), commit}, // the same bytes, split otherwise
		"fork":         {forked("package x\n"), commit},
		"fork changed": {forked("package x // changed\n"), commit},
	} {
		p, _, err := cachedBuild(c.root, c.commit)
		if err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	for name, p := range paths {
		for other, q := range paths {
			if name != other && p == q {
				t.Errorf("%s and %s are kept under one name %s", name, other, p)
			}
		}
	}
	if again, _, _ := cachedBuild(base, commit); again != paths["base"] {
		t.Errorf("the same inputs are kept under %s, then %s", paths["base"], again)
	}
	if elsewhere, _, _ := cachedBuild(forked("package x\n"), commit); elsewhere != paths["fork"] {
		t.Errorf("the same tree in another directory is kept under %s, not %s: a clone would rebuild", elsewhere, paths["fork"])
	}
}
