package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// infoLog is a logger at info level and what it wrote.
func infoLog() (*slog.Logger, func() string) {
	var mu sync.Mutex
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	return log, func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }
}

// TestShutdownSaysWhyAndHowLong: when the daemon's context ends, a line
// says that a graceful shutdown starts, why (the context's cause: the
// signal, for hdfs-sink run) and how long it may take; another that it
// completed.
func TestShutdownSaysWhyAndHowLong(t *testing.T) {
	f := newDaemonFixture(t, "stopping")
	log, logged := infoLog()
	f.d.log = log
	conns := []*configs.Connector{f.connector("stopping")}
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan int)
	go func() { done <- f.d.runConnectors(ctx, conns) }()
	f.waitFor("running", func() bool { return f.state("stopping") == "running" })
	cancel(errors.New("SIGTERM received"))
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the daemon did not stop:\n%s", logged())
	}
	out := logged()
	want := fmt.Sprintf(`msg="graceful shutdown started: connectors commit their open files and leave their groups" cause="SIGTERM received" timeout=%v`, shutdownBound(conns))
	if !strings.Contains(out, want) || !strings.Contains(out, `msg="shutdown complete"`) {
		t.Fatalf("log lacks\n%s\nor the completion:\n%s", want, out)
	}
}

// TestShutdownIsBounded: a connector that does not stop is waited for the
// bound, then named, and the process goes on to exit.
func TestShutdownIsBounded(t *testing.T) {
	log, logged := infoLog()
	d := newDaemon(Options{Logger: log}, nil, wiring.ProcessMemory{})
	stuck := make(chan struct{}) // done only when the test ends
	t.Cleanup(func() { close(stuck) })
	d.sups["stuck"] = &supervisor{name: "stuck", done: stuck}
	d.board.set("stuck", func(cs *connStatus) { cs.state = "running" })
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("SIGINT received"))
	returned := make(chan int)
	go func() { returned <- d.shutdown(ctx, 50*time.Millisecond) }()
	select {
	case <-returned:
	case <-time.After(20 * time.Second):
		t.Fatal("shutdown waited past its bound for a connector that does not stop")
	}
	if out := logged(); !strings.Contains(out, `msg="shutdown took too long; exiting with work left for recovery" still_running=[stuck]`) {
		t.Fatalf("log:\n%s", out)
	}
}
