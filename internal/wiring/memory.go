package wiring

import (
	"log/slog"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/sink/memory"
)

// ProcessMemory is run --memory-max-bytes: one memory ceiling for the whole
// process, however many connectors and partitions it runs. It is split as
// memory.NewPlan says: the open files of all connectors share one
// memory.Budget, the fetch share is divided evenly between connectors,
// and Go's garbage collector is governed by the plan (memory.Plan.Govern:
// a soft limit under the ceiling, GOGC raised). Each connector's own
// hdfs.sink.memory.max.bytes still applies within it.
type ProcessMemory struct {
	plan   memory.Plan // zero without --memory-max-bytes
	budget *memory.Budget
}

// NewProcessMemory plans a ceiling shared by conns connectors; 0: none.
func NewProcessMemory(ceiling int64, conns int, log *slog.Logger) ProcessMemory {
	plan := memory.NewPlan(ceiling, conns)
	if plan.Ceiling == 0 {
		return ProcessMemory{}
	}
	plan.Govern()
	log.Info("process memory ceiling", "memory_max_bytes", ceiling, "file_buffers_bytes", plan.FileBudget,
		"fetch_bytes_per_connector", plan.FetchBytes)
	return ProcessMemory{plan: plan, budget: memory.NewBudget(plan.FileBudget)}
}

// Connector is one connector's memory plan: its own
// hdfs.sink.memory.max.bytes, fetching no more than its share of the
// process ceiling.
func (m ProcessMemory) Connector(c *configs.Connector) memory.Plan {
	return memory.NewPlan(c.MemoryMaxBytes, 1).Within(m.plan)
}

// LimitBySum bounds the process by what its connectors' own ceilings add
// up to when run has no --memory-max-bytes: a connector's
// hdfs.sink.memory.max.bytes is resident memory, and without a Go soft
// limit the heap doubles past the live data (one Parquet connector at
// 256 MiB peaked at 336 MB resident without it). It is applied at start
// and after every reload; GOMEMLIMIT, when set, wins.
func LimitBySum(memMax int64, conns []*configs.Connector, m *metrics.Metrics, log *slog.Logger) {
	if memMax > 0 {
		m.SetMemory(memMax, memory.NewPlan(memMax, len(conns)).GoLimit)
		return
	}
	var sum int64
	for _, c := range conns {
		sum += c.MemoryMaxBytes
	}
	plan := memory.NewPlan(sum, 1)
	m.SetMemory(plan.Ceiling, plan.GoLimit)
	if !plan.Govern() {
		return
	}
	log.Info("process memory bounded by the sum of the connectors' hdfs.sink.memory.max.bytes", "sum_bytes", sum, "go_limit_bytes", plan.GoLimit)
}
