//go:build faults

package daemon

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
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

// failingRenames is HDFS_SINK_FAIL_RENAME_EVERY=<N>: every N-th rename of a
// temp file to a committed file name is refused, without taking effect, as
// a NameNode that fails the call would refuse it. The owner's commit then
// fails after its commit point and the partition's own recovery rolls it
// forward, in the same process. N >= 2, so the rename that follows a
// refused one, recovery's, is never refused too. It exists to show that
// such commits reach Hive without a restart (issue 20).
type failingRenames struct {
	storage.FS
	every int64
	seen  atomic.Int64
}

func (f *failingRenames) Rename(ctx context.Context, oldpath, newpath string) error {
	if _, final := layout.ParseFinalName(newpath); final {
		if n := f.seen.Add(1); n%f.every == 0 {
			fmt.Fprintf(os.Stderr, "hdfs-sink: fault injection: refusing rename #%d %s\n", n, newpath)
			return fmt.Errorf("fault injection: HDFS_SINK_FAIL_RENAME_EVERY=%d refused rename #%d %s -> %s", f.every, n, oldpath, newpath)
		}
	}
	return f.FS.Rename(ctx, oldpath, newpath)
}

// renameFaultsFromEnv reads HDFS_SINK_FAIL_RENAME_EVERY; 0 when unset.
func renameFaultsFromEnv() (int64, error) {
	v := os.Getenv("HDFS_SINK_FAIL_RENAME_EVERY")
	if v == "" {
		return 0, nil
	}
	every, err := strconv.ParseInt(v, 10, 64)
	if err != nil || every < 2 {
		return 0, fmt.Errorf("HDFS_SINK_FAIL_RENAME_EVERY=%q: want an integer >= 2", v)
	}
	return every, nil
}

// failRenames wraps open so that the stores it opens refuse every
// every-th rename to a committed name; every == 0 returns open as is.
func failRenames(open func(*configs.Connector) (storage.FS, error), every int64) func(*configs.Connector) (storage.FS, error) {
	if every == 0 {
		return open
	}
	return func(c *configs.Connector) (storage.FS, error) {
		store, err := open(c)
		if err != nil {
			return nil, err
		}
		return &failingRenames{FS: store, every: every}, nil
	}
}
