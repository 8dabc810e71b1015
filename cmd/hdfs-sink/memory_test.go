package main

import (
	"log/slog"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

func TestProcessMemory(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	c := &configs.Connector{Name: "a", MemoryMaxBytes: 256 << 20}

	var off sink.Config
	newProcessMemory(0, 2, log).apply(c, &off, log)
	if off.Budget != nil || off.KafkaOpts != nil {
		t.Fatalf("no --memory-max-bytes must leave the wiring alone: %+v", off)
	}

	mem := newProcessMemory(1<<30, 2, log)
	var a, b sink.Config
	mem.apply(c, &a, log)
	mem.apply(c, &b, log)
	if a.Budget == nil || a.Budget != b.Budget {
		t.Fatal("connectors of one process must share one budget")
	}
	if len(a.KafkaOpts) == 0 {
		t.Fatal("fetch bounds not applied")
	}
}
