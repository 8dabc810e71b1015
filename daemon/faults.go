package daemon

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

// panicAt is HDFS_SINK_PANIC_AT=<connector>/<STATE>: the named connector
// panics the first time one of its partitions enters STATE, inside the
// partition's worker goroutine, as a bug deep in the write path would. It
// exists to show that a panic stops only that connector.
type panicAt struct {
	state sink.State
	next  sink.Faults // the process's other fault injection, if any
	fired atomic.Bool
}

func (p *panicAt) Enter(s sink.State) {
	if p.next != nil {
		p.next.Enter(s)
	}
	if s == p.state && p.fired.CompareAndSwap(false, true) {
		panic(fmt.Sprintf("fault injection: HDFS_SINK_PANIC_AT at %s", s))
	}
}

// connectorFaults are the process's fault injection and the panics
// HDFS_SINK_PANIC_AT asks of connectors, by connector.
type connectorFaults struct {
	process sink.Faults // sink.FaultsFromEnv; nil: none
	mu      sync.Mutex
	panics  map[string]*panicAt
}

// of is the fault injection of connector name: the process's, plus the
// panic HDFS_SINK_PANIC_AT asks of this connector. The panic is once per
// process: the restarted connector runs normally.
func (d *connectorFaults) of(name string) (sink.Faults, error) {
	v := os.Getenv("HDFS_SINK_PANIC_AT")
	conn, state, ok := strings.Cut(v, "/")
	if v == "" || conn != name {
		return d.process, nil
	}
	if !ok {
		return nil, fmt.Errorf("HDFS_SINK_PANIC_AT=%q: want <connector>/<STATE>", v)
	}
	s, err := sink.ParseState(state)
	if err != nil {
		return nil, fmt.Errorf("HDFS_SINK_PANIC_AT: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.panics == nil {
		d.panics = map[string]*panicAt{}
	}
	if d.panics[name] == nil {
		d.panics[name] = &panicAt{state: s, next: d.process}
	}
	return d.panics[name], nil
}
