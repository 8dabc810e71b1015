package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemdUnitVerifies runs systemd-analyze verify on the unit, with
// the binary path pointed at an executable that exists here (verify
// checks it). systemd-analyze reports bad settings on its output while
// still exiting 0, so any output fails the test.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze is needed to check the unit (Debian package systemd): %v", err)
	}
	unit, err := os.ReadFile("systemd/hdfs-sink.service")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "hdfs-sink")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hdfs-sink.service")
	os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/hdfs-sink", bin)), 0o644)
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestSystemdUnitSettings: what the unit must say, beyond being valid.
func TestSystemdUnitSettings(t *testing.T) {
	unit, err := os.ReadFile("systemd/hdfs-sink.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Restart=on-failure", "ExecReload=/bin/kill -HUP $MAINPID", "KillSignal=SIGTERM", "TimeoutStopSec=60",
		"NoNewPrivileges=yes", "ProtectSystem=strict", "DynamicUser=yes", "CapabilityBoundingSet=\n",
		// The dynamic user cannot read the root-only secrets the unit tells
		// operators to keep in /etc/hdfs-sink/secrets: systemd hands them over.
		"LoadCredential=secrets:/etc/hdfs-sink/secrets\n",
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q", strings.TrimSpace(want))
		}
	}
}
