//go:build integration

package exactlyonce

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// image runs packaging/image.sh (podman from Debian's packages).
func image(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(itest.RepoRoot(), "packaging", "image.sh"), args...)
	cmd.Dir = itest.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("packaging/image.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("podman", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestContainerCommitsExactlyOnce builds the image as `make image` does,
// checks that it runs as non-root with a stamped version, then runs it
// against the test services (host network: the services are on loopback),
// stops it with SIGTERM as a container runtime does, and reads every
// committed file back; verify, run from the image, agrees.
func TestContainerCommitsExactlyOnce(t *testing.T) {
	t.Parallel()
	const tag = "localhost/hdfs-sink:itest"
	t0 := time.Now()
	image(t, "build", tag)
	t.Logf("image built in %v", time.Since(t0).Round(time.Second))
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", tag).Run() })
	if user := podman(t, "image", "inspect", "--format", "{{.Config.User}}", tag); user != "65532:65532" {
		t.Fatalf("the image runs as %q, want the non-root 65532:65532", user)
	}
	commit, _ := exec.Command("git", "-C", itest.RepoRoot(), "rev-parse", "HEAD").Output()
	if v := image(t, "run", "--rm", tag, "version"); !strings.Contains(v, strings.TrimSpace(string(commit))) {
		t.Fatalf("version in the image does not name commit %s: %s", commit, v)
	}
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	cfg := s.connector("container", map[string]string{"flush.size": "300"})
	mount := cfg + ":/etc/hdfs-sink/connectors/container.json:ro"
	name := itest.UniqueName(t, "hs_")
	image(t, "run", "-d", "--name", name, "--network", "host", "-v", mount, tag,
		"run", "--config", "/etc/hdfs-sink/connectors", "--status-addr", "127.0.0.1:0")
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command("podman", "logs", "--tail", "40", name).CombinedOutput()
			t.Logf("container log (tail):\n%s", out)
		}
		exec.Command("podman", "rm", "-f", name).Run()
	})
	s.produce(counts, 2000)
	s.waitCommitted(1800, 2*time.Minute)
	podman(t, "stop", "--time", "60", name)
	if code := podman(t, "inspect", "--format", "{{.State.ExitCode}}", name); code != "0" {
		t.Fatalf("the container exited %s after SIGTERM, want 0", code)
	}
	s.check(counts) // all 2000: the stop committed the open files
	out := image(t, "run", "--rm", "--network", "host", "-v", mount, tag, "verify", "--config", "/etc/hdfs-sink/connectors/container.json")
	t.Logf("hdfs-sink verify, run from the image:\n%s", out)
}
