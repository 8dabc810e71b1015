package wiring

import (
	"bytes"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/sink/memory"
)

func TestProcessMemory(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	c := conftest.Connector(t, t.TempDir(), "a", map[string]string{"hdfs.sink.memory.max.bytes": "268435456"})

	off := NewProcessMemory(0, 2, log)
	if off.budget != nil || off.Connector(c) != memory.NewPlan(256<<20, 1) {
		t.Fatalf("no --memory-max-bytes must leave the connector's own plan alone: %+v", off.Connector(c))
	}

	mem := NewProcessMemory(1<<30, 8, log) // 1 GiB / 8 connectors: 24 MiB fetch each
	got := mem.Connector(c)
	if got.FetchBytes != 24<<20 || got.FileBudget != 80<<20 {
		t.Fatalf("connector plan %+v: want its own 80 MiB for files and the process's 24 MiB fetch share", got)
	}
	sec := kafkaSecurity(t, c)
	a, err := SinkConfig(c, ConnectorDeps{Mem: mem, Log: log, Security: sec})
	if err != nil {
		t.Fatal(err)
	}
	b, err := SinkConfig(c, ConnectorDeps{Mem: mem, Log: log, Security: sec})
	if err != nil {
		t.Fatal(err)
	}
	if a.Budget == nil || a.Budget != b.Budget {
		t.Fatal("connectors of one process must share one budget")
	}
}

// TestKafkaOptionsBuiltOnce: with --memory-max-bytes the client options
// were built twice, and each build logged its warnings.
func TestKafkaOptionsBuiltOnce(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	c := conftest.Connector(t, t.TempDir(), "a", map[string]string{"consumer.override.fetch.min.bytes": "1"})
	if _, err := SinkConfig(c, ConnectorDeps{Mem: NewProcessMemory(1<<30, 1, log), Log: log, Security: kafkaSecurity(t, c)}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "no franz-go equivalent"); n != 1 {
		t.Fatalf("override warning logged %d times, want once:\n%s", n, out.String())
	}
}

// TestConnectorCeilingsBoundTheProcess: without --memory-max-bytes the Go
// soft limit is the plan of the sum of the connectors' ceilings.
func TestConnectorCeilingsBoundTheProcess(t *testing.T) {
	// A GOMEMLIMIT of this machine's would win, by design; the limit the
	// runtime took from it is restored below.
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	dir := t.TempDir()
	a := conftest.Connector(t, dir, "a", map[string]string{"hdfs.sink.memory.max.bytes": "268435456"})
	b := conftest.Connector(t, dir, "b", map[string]string{"hdfs.sink.memory.max.bytes": "134217728"})
	m := metrics.New("test")
	LimitBySum(0, []*configs.Connector{a, b}, m, slog.New(slog.DiscardHandler))
	if got, want := debug.SetMemoryLimit(-1), memory.NewPlan(384<<20, 1).GoLimit; got != want {
		t.Fatalf("Go memory limit %d, want %d (the plan of 384 MiB)", got, want)
	}
	if got := debug.SetGCPercent(100); got != 400 {
		t.Fatalf("GC percent %d, want 400: the heap grows toward the limit between collections", got)
	}
}

// kafkaSecurity is the connector's Kafka security, which must parse.
func kafkaSecurity(t *testing.T, c *configs.Connector) *kafkaclient.Security {
	t.Helper()
	sec, err := KafkaSecurity(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sec
}
