package sink

import (
	"context"
	"sync"
	"sync/atomic"
)

// pollGate keeps the group callbacks' take of revoked or lost partitions
// apart from the poll loop's work on them, and nothing more: the poll loop
// holds it shared for one poll (from before PollFetches to the end of the
// poll's writes, timers, ceiling and recoveries), a callback holds it
// exclusively only while it takes its partitions out of the registry. The
// commits of the revoked partitions then run in the callback, beside the
// next polls of the partitions kept (docs/design.md §6, "The revocation's
// commits run beside the poll loop", D48).
//
// franz-go's BlockRebalanceOnPoll gave the same exclusion by stopping the
// poll loop for the whole callback, commits included: with 1,000
// partitions the kept ones went 4 s without a write when a member joined.
type pollGate struct {
	rw sync.RWMutex
	// waiting counts callbacks that want the gate; a poll that starts while
	// one waits does not wait for records (see interrupt).
	waiting  atomic.Int32
	cancelMu sync.Mutex
	cancel   context.CancelFunc // the PollFetches under way; nil: none
	// woken: a commit off the poll loop ended since the last poll began,
	// so a partition may have records waiting (wake).
	woken atomic.Bool
}

// enterPoll holds the gate for one poll and returns the context its
// PollFetches waits under, which a waiting callback cuts short.
func (g *pollGate) enterPoll(ctx context.Context) (context.Context, context.CancelFunc) {
	g.rw.RLock()
	pollCtx, cancel := context.WithCancel(ctx)
	g.cancelMu.Lock()
	g.cancel = cancel
	g.cancelMu.Unlock()
	// After publishing cancel: a callback that came before it is seen
	// here, one that comes after it finds cancel (interrupt).
	if g.waiting.Load() > 0 || g.woken.Swap(false) {
		cancel()
	}
	return pollCtx, cancel
}

// wake cuts short the PollFetches under way, or the next one: a commit
// off the poll loop ended, and its partition's records wait for a poll
// that an idle PollFetches would hold back up to TickInterval.
func (g *pollGate) wake() {
	g.woken.Store(true)
	g.interrupt()
}

// polled ends the wait for records: from here the poll only writes what
// PollFetches returned, and a callback need not cut anything short.
func (g *pollGate) polled(cancel context.CancelFunc) {
	g.cancelMu.Lock()
	g.cancel = nil
	g.cancelMu.Unlock()
	cancel()
}

// shared runs fn holding the gate as a poll does: no callback takes a
// partition meanwhile.
func (g *pollGate) shared(fn func()) {
	g.rw.RLock()
	defer g.rw.RUnlock()
	fn()
}

// leavePoll lets a waiting callback take its partitions.
func (g *pollGate) leavePoll() { g.rw.RUnlock() }

// exclusive runs take while no poll is under way: every partition it
// takes out of the registry is then out of the poll loop's reach, since
// the poll loop finds partitions only in the registry and only while it
// holds the gate. A poll waiting for records is cut short rather than
// waited for (an idle PollFetches waits TickInterval).
func (g *pollGate) exclusive(take func()) {
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
	g.interrupt()
	g.rw.Lock()
	defer g.rw.Unlock()
	take()
}

func (g *pollGate) interrupt() {
	g.cancelMu.Lock()
	defer g.cancelMu.Unlock()
	if g.cancel != nil {
		g.cancel()
	}
}
