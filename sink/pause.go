package sink

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// pauseControl is a connector's pause switch. Pause and Resume are called
// from outside (the REST API); only the poll loop acts on them, so a pause
// takes effect between two polls, after the batch being written.
type pauseControl struct {
	want   atomic.Bool   // asked for
	active atomic.Bool   // the poll loop has stopped fetching and committing
	wake   chan struct{} // poked by Resume
	mu     sync.Mutex
	topics []string // what the poll loop paused, to resume them
}

func newPauseControl() pauseControl { return pauseControl{wake: make(chan struct{}, 1)} }

func (pc *pauseControl) requested() bool { return pc.want.Load() }

// Pause stops the connector fetching and committing until Resume: the poll
// loop stops polling, every consumed topic is paused in the Kafka client
// (so nothing is prefetched either), and no timer rotates a file. Open
// files stay open; exactly-once holds as through any other stop, since
// nothing is committed and nothing is skipped. The connector stays in its
// group: a partition revoked while paused commits what it holds, as it
// always does when released. The pause lasts until Resume or the end of
// the connector (a new Connector starts unpaused).
func (c *Connector) Pause() { c.pause.want.Store(true) }

// Resume undoes Pause.
func (c *Connector) Resume() {
	c.pause.want.Store(false)
	select {
	case c.pause.wake <- struct{}{}:
	default:
	}
}

// Paused reports whether the poll loop has stopped fetching and committing
// (Pause asked for it and the batch that was being written is done).
func (c *Connector) Paused() bool { return c.pause.active.Load() }

// whilePaused holds the poll loop until Resume or ctx ends. Topics are
// paused again every tick: a topics.regex can bring in new ones.
func (c *Connector) whilePaused(ctx context.Context) {
	c.pauseTopics()
	c.pause.active.Store(true)
	c.cfg.Logger.Info("connector paused: not fetching, not committing")
	defer func() {
		c.pause.active.Store(false)
		c.pause.resumeTopics(c)
	}()
	for c.pause.requested() {
		select {
		case <-ctx.Done():
			return
		case <-c.pause.wake:
		case <-time.After(c.cfg.TickInterval):
			c.pauseTopics()
		}
	}
	c.cfg.Logger.Info("connector resumed")
}

func (c *Connector) pauseTopics() {
	topics := c.cl.GetConsumeTopics()
	c.cl.PauseFetchTopics(topics...)
	c.pause.mu.Lock()
	c.pause.topics = topics // all consumed topics: a superset of the last tick's
	c.pause.mu.Unlock()
}

func (pc *pauseControl) resumeTopics(c *Connector) {
	pc.mu.Lock()
	topics := pc.topics
	pc.topics = nil
	pc.mu.Unlock()
	c.cl.ResumeFetchTopics(topics...)
}
