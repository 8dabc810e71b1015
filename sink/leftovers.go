package sink

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/wal"
)

// leftovers is what owners a claim fenced left in a partition's
// directories: temp files under older claims, WAL staging directories and
// the WAL segments below the claim. Nothing reads them again, and nothing
// may publish them (the claim fences their writers), so removing them is
// housekeeping that may run at any time after the claim, even after a
// newer owner has claimed in turn: it touches only names below its own
// claim, which a newer owner never uses (docs/design.md §5).
type leftovers struct {
	fs       storage.FS
	log      *wal.Log
	logger   *slog.Logger
	tempRoot string
	claim    uint64      // the claim's sequence number
	listing  wal.Listing // the WAL directory as the claim saw it stand
}

// leftovers describes what this partition's claim fenced; take it right
// after the claim, before any commit moves p.seq on.
func (p *partition) leftovers() *leftovers {
	return &leftovers{fs: p.cfg.FS, log: p.log, logger: p.cfg.Logger,
		tempRoot: p.cfg.Layout.TempRoot(p.cfg.Partition), claim: p.seq, listing: p.claimListing}
}

// remove deletes the leftovers. Failures are logged: whatever stays is
// removed by the partition's next recovery or prune.
func (l *leftovers) remove(ctx context.Context) {
	l.removeTemp(ctx)
	if err := l.log.RemoveStagingListed(ctx, l.listing); err != nil {
		l.logger.Warn("remove WAL staging directories", "err", err)
	}
	if err := l.log.PruneListed(ctx, l.listing, l.claim); err != nil {
		l.logger.Warn("prune WAL after claiming", "err", err)
	}
}

// removeTemp deletes what lies in the temp root apart from the directories
// of this claim and newer ones.
func (l *leftovers) removeTemp(ctx context.Context) {
	infos, err := l.fs.ReadDir(ctx, l.tempRoot)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.logger.Warn("list temp files for cleanup", "dir", l.tempRoot, "err", err)
	}
	for _, fi := range infos {
		if seq, ok := layout.ParseClaimDir(fi.Name()); ok && fi.IsDir() && seq >= l.claim {
			continue
		}
		if err := l.fs.RemoveAll(ctx, l.tempRoot+"/"+fi.Name()); err != nil {
			l.logger.Warn("remove orphaned temp files", "path", l.tempRoot+"/"+fi.Name(), "err", err)
		}
	}
}

// janitor removes the leftovers of the recoveries of an assignment after
// the assignment (it is held meanwhile), a few at a time, so that fetching
// starts once every partition has claimed: at 10,000 partitions the removals were a third
// of a restart's NameNode calls (docs/benchmarks.md, "Recovery
// housekeeping after the assignment"). A stop drops what is still queued
// and waits only for the removals under way.
type janitor struct {
	ctx     context.Context
	cancel  context.CancelFunc
	workers int

	mu      sync.Mutex
	queue   []*leftovers
	running int
	held    int // holds under way: no removal starts while one is
	stopped bool
	wg      sync.WaitGroup
}

// janitorWorkers bounds the removals under way at once: they share the
// NameNode connections with the commits.
const janitorWorkers = 2

// newJanitor starts a janitor whose removals run under a context of its
// own, which stop ends.
func newJanitor(workers int) *janitor {
	ctx, cancel := context.WithCancel(context.Background())
	return &janitor{ctx: ctx, cancel: cancel, workers: workers}
}

// add queues l; a janitor that has stopped removes nothing.
func (j *janitor) add(l *leftovers) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stopped {
		return
	}
	j.queue = append(j.queue, l)
	j.startWorkers()
}

// startWorkers starts workers for the queue, up to j.workers, unless held
// or stopped. j.mu is held.
func (j *janitor) startWorkers() {
	for j.running < min(j.workers, len(j.queue)) && j.held == 0 && !j.stopped {
		j.running++
		j.wg.Add(1)
		go j.work()
	}
}

// hold keeps removals from starting until release: an assignment's
// recoveries hold the janitor, so that its removals do not take the
// NameNode's round trips from them (they share its connections). A
// removal under way finishes.
func (j *janitor) hold() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.held++
}

// release ends a hold.
func (j *janitor) release() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.held--
	j.startWorkers()
}

func (j *janitor) work() {
	defer j.wg.Done()
	for {
		l := j.next()
		if l == nil {
			return
		}
		l.remove(j.ctx)
	}
}

// next pops the oldest queued leftovers; nil ends the worker.
func (j *janitor) next() *leftovers {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.queue) == 0 || j.stopped || j.held > 0 {
		j.running--
		return nil
	}
	l := j.queue[0]
	j.queue[0] = nil
	j.queue = j.queue[1:]
	return l
}

// stop drops the queue, ends the removals under way and waits for them.
// Stopping twice is harmless.
func (j *janitor) stop() {
	j.mu.Lock()
	j.stopped, j.queue = true, nil
	j.mu.Unlock()
	j.cancel()
	j.wg.Wait()
}
