package main

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

// processMemory is run --memory-max-bytes: one memory ceiling for the whole
// process, however many connectors and partitions it runs. It is split as
// sink.FileBuffers and sink.FetchMemory say: the open files of all
// connectors share one sink.MemoryBudget, the fetch share is divided evenly
// between connectors, and Go's garbage collector is given a soft limit
// under the ceiling so the heap does not double past it.
// Each connector's own hdfs.sink.memory.max.bytes still applies within it.
type processMemory struct {
	max    int64
	budget *sink.MemoryBudget
	conns  int
}

func newProcessMemory(ceiling int64, conns int, log *slog.Logger) processMemory {
	if ceiling <= 0 {
		return processMemory{}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(sink.GoMemoryLimit(ceiling))
	}
	log.Info("process memory ceiling", "memory_max_bytes", ceiling, "file_buffers_bytes", sink.FileBuffers(ceiling),
		"fetch_bytes_per_connector", sink.FetchMemory(ceiling)/int64(max(conns, 1)))
	return processMemory{max: ceiling, budget: sink.NewMemoryBudget(sink.FileBuffers(ceiling)), conns: max(conns, 1)}
}

// apply bounds one connector's wiring by the process ceiling.
func (m processMemory) apply(c *configs.Connector, cfg *sink.Config, log *slog.Logger) {
	if m.budget == nil {
		return
	}
	cfg.Budget = m.budget
	// kafkaOpts gives fetching its share of what it is passed.
	share := min(c.MemoryMaxBytes, m.max/int64(m.conns))
	cfg.KafkaOpts = kafkaOpts(c, share, log)
}
