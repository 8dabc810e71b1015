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
	"github.com/hdfs-sink/hdfs-sink/wal"
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

// renameFreeze is HDFS_SINK_FREEZE_RENAME=<segment|final>[:N]: the process
// stops itself (SIGSTOP, until someone sends SIGCONT) just before the N-th
// rename of that kind: of a WAL segment's staging directory to its number
// (segment: inside a publish, the segment written and closed, its commit
// point not reached yet), or of a temp file to its committed name (final).
// N defaults to 1, and the renames of every store of the process count. It
// exists to fail a NameNode over at exactly that moment (tools/chaos:
// ha-failover-publish); HDFS_SINK_FREEZE_AT stops only between states.
type renameFreeze struct {
	kind string
	n    int64
	seen atomic.Int64
	stop func() // stops the process; a test counts instead
}

// freezeRenameFromEnv reads HDFS_SINK_FREEZE_RENAME; nil when unset.
func freezeRenameFromEnv() (*renameFreeze, error) {
	v := os.Getenv("HDFS_SINK_FREEZE_RENAME")
	if v == "" {
		return nil, nil
	}
	kind, nStr, hasN := strings.Cut(v, ":")
	f := &renameFreeze{kind: kind, n: 1, stop: sink.FreezeSelf}
	if kind != "segment" && kind != "final" {
		return nil, fmt.Errorf("HDFS_SINK_FREEZE_RENAME=%q: want segment or final, then :N", v)
	}
	if hasN {
		n, err := strconv.ParseInt(nStr, 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("HDFS_SINK_FREEZE_RENAME=%q: count %q must be an integer >= 1", v, nStr)
		}
		f.n = n
	}
	return f, nil
}

// before counts a rename about to be made and stops the process at the
// N-th of its kind, saying so first (a harness waits for the line).
func (f *renameFreeze) before(oldpath, newpath string) {
	if f.kind == "segment" && !wal.IsStaging(oldpath) {
		return
	}
	if _, final := layout.ParseFinalName(newpath); f.kind == "final" && !final {
		return
	}
	if n := f.seen.Add(1); n == f.n {
		fmt.Fprintf(os.Stderr, "hdfs-sink: fault injection: SIGSTOP before %s rename #%d %s -> %s\n", f.kind, n, oldpath, newpath)
		f.stop() // returns once continued
	}
}

type freezingRenames struct {
	storage.FS
	f *renameFreeze
}

func (s *freezingRenames) Rename(ctx context.Context, oldpath, newpath string) error {
	s.f.before(oldpath, newpath)
	return s.FS.Rename(ctx, oldpath, newpath)
}

// freezeRenames wraps open so that the stores it opens stop the process
// where f says; a nil f returns open as is.
func freezeRenames(open func(*configs.Connector) (storage.FS, error), f *renameFreeze) func(*configs.Connector) (storage.FS, error) {
	if f == nil {
		return open
	}
	return func(c *configs.Connector) (storage.FS, error) {
		store, err := open(c)
		if err != nil {
			return nil, err
		}
		return &freezingRenames{FS: store, f: f}, nil
	}
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
