package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// TestRunAndCheckRefuseAnOpenListener: a Connect worker file with
// listeners=http://0.0.0.0:8083 and no authentication stops run (exit 2,
// nothing consumed) and fails check (exit 1), both naming the worker's key
// and the ways out; the same flags that make run accept it make check
// accept it.
func TestRunAndCheckRefuseAnOpenListener(t *testing.T) {
	conftest.NoConnectEnv(t)
	dir := conftest.WriteFiles(t, map[string]string{"orders.json": bareConnector, "users": "ops:pw\n",
		"worker.properties": "bootstrap.servers=127.0.0.1:1\nvalue.converter=io.confluent.connect.avro.AvroConverter\nvalue.converter.schema.registry.url=http://127.0.0.1:1\nlisteners=http://0.0.0.0:8083\n"})
	worker := filepath.Join(dir, "worker.properties")
	base := []string{"--worker", worker, "--config", filepath.Join(dir, "orders.json")}
	want := "the REST API would listen on 0.0.0.0:8083 (from listeners in worker file " + worker + "), which other hosts can reach, without authentication"
	var out, errOut bytes.Buffer
	if code := dispatch(append([]string{"run"}, base...), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), want) {
		t.Fatalf("run: exit %d, want 2 with %q; stderr:\n%s", code, want, errOut.String())
	}
	for _, tt := range []struct {
		flags []string
		code  int
	}{
		{nil, 1},
		{[]string{"--read-only"}, 0},
		{[]string{"--rest-basic-auth-file", filepath.Join(dir, "users")}, 0},
		{[]string{"--insecure-listen"}, 0},
		{[]string{"--listen", "127.0.0.1:8083"}, 0},
		{[]string{"--rest-tls-client-ca", filepath.Join(dir, "users")}, 1}, // no certificate to serve HTTPS with
	} {
		out.Reset()
		errOut.Reset()
		code := dispatch(append(append([]string{"check"}, base...), tt.flags...), &out, &errOut)
		if code != tt.code || (tt.code == 1) != strings.Contains(errOut.String(), "error: ") {
			t.Errorf("check %v: exit %d, want %d; stderr:\n%s", tt.flags, code, tt.code, errOut.String())
		}
		if tt.flags == nil && !strings.Contains(errOut.String(), want) {
			t.Errorf("check: stderr lacks %q:\n%s", want, errOut.String())
		}
	}
}

// TestImageCommandIsSecure: the image's default command listens where
// the container's port mapping reaches it, and passes the binding rule
// with any worker (its --listen wins over a worker's listeners).
func TestImageCommandIsSecure(t *testing.T) {
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CMD (\[.*\])$`).FindSubmatch(dockerfile)
	if m == nil {
		t.Fatal("no CMD [...] line in the Dockerfile")
	}
	var cmd []string
	if err := json.Unmarshal(m[1], &cmd); err != nil || len(cmd) == 0 || cmd[0] != "run" {
		t.Fatalf("CMD %s: %v", m[1], err)
	}
	var rf runFlags
	fs := rf.flagSet(io.Discard)
	if err := fs.Parse(cmd[1:]); err != nil {
		t.Fatalf("CMD %v: %v", cmd, err)
	}
	h := rf.http.options(fs)
	open := &configs.Worker{HTTPAddr: ":8083", HTTPOrigin: "CONNECT_LISTENERS in the environment"}
	for _, w := range []*configs.Worker{nil, open} {
		if addr, _ := h.Listen(w); addr != "0.0.0.0:8083" {
			t.Errorf("the image listens on %q, want 0.0.0.0:8083 (probes and port mappings)", addr)
		}
		if err := daemon.CheckHTTP(h, w); err != nil {
			t.Errorf("the image's default command is refused: %v", err)
		}
	}
	if !rf.http.readOnly && rf.http.authFile == "" && rf.http.clientCA == "" {
		t.Errorf("the image's default command %v is neither read-only nor authenticated", cmd)
	}
}
