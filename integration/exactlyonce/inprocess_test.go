//go:build integration

package exactlyonce

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	daemonlib "github.com/hdfs-sink/hdfs-sink/daemon"
)

// TestDaemonInProcess runs the daemon as a library, in the test's own
// process, against the real services: New loads a config directory as
// `hdfs-sink run --config` does, Run commits, the connector is paused,
// resumed and given a new file through the Daemon's own methods (those the
// REST API calls), and when the context ends Run returns after a clean
// shutdown. Every record is on HDFS exactly once.
func TestDaemonInProcess(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 4)
	counts := map[int32]int64{}
	s.produce(counts, 2000)
	dir := t.TempDir()
	s.connectorIn(dir, "inproc", map[string]string{"flush.size": "250"})
	d, logFile := startInProcess(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("daemon log %s (tail):\n%s", logFile, tail(logFile, 40))
		}
	}()
	s.waitCommitted(2000, 2*time.Minute)
	waitState(t, d, "inproc", "RUNNING")

	if err := d.Pause("inproc"); err != nil {
		t.Fatal(err)
	}
	waitState(t, d, "inproc", "PAUSED")
	if err := d.Resume("inproc"); err != nil {
		t.Fatal(err)
	}
	waitState(t, d, "inproc", "RUNNING")
	s.produce(counts, 1000)
	s.waitCommitted(3000, 2*time.Minute)

	putFlushSize(t, d, s.config, "100")
	waitUntil(t, "the new file's connector running", func() bool {
		c, ok := d.Connector("inproc")
		return ok && c.Config.FlushSize == 100 && c.State == "RUNNING"
	})
	s.produce(counts, 1000)
	s.waitCommitted(4000, 2*time.Minute)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after the context ended: %v", err)
		}
		done <- nil // for the deferred wait
	case <-time.After(time.Minute):
		t.Fatal("Run did not return within a minute of the context's end")
	}
	s.check(counts)
}

// startInProcess is daemon.New over the config directory dir, logging to a
// file, serving HTTP on a port of its own.
func startInProcess(t *testing.T, dir string) (*daemonlib.Daemon, string) {
	t.Helper()
	logf, err := os.CreateTemp(t.TempDir(), "daemon-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	log := slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d, err := daemonlib.New(daemonlib.Options{Config: dir, Logger: log, Version: "test",
		HTTP: daemonlib.HTTPOptions{Listen: func(*configs.Worker) (string, string) { return "127.0.0.1:0", "the test" }}})
	if err != nil {
		t.Fatalf("daemon.New: %v\n%s", err, tail(logf.Name(), 20))
	}
	return d, logf.Name()
}

// putFlushSize changes flush.size of the connector file as PUT
// /connectors/<name>/config does.
func putFlushSize(t *testing.T, d *daemonlib.Daemon, file, size string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc.Config["flush.size"] = size
	body, _ := json.Marshal(doc.Config)
	if _, created, err := d.Put(doc.Name, bytes.NewReader(body)); err != nil || created {
		t.Fatalf("Put: created %v, %v", created, err)
	}
}

func waitState(t *testing.T, d *daemonlib.Daemon, name, state string) {
	t.Helper()
	waitUntil(t, name+" "+state, func() bool {
		c, ok := d.Connector(name)
		return ok && c.State == state
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
