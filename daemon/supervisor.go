package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

// restartPolicy is what happens to a connector that failed: restarted after
// a wait that doubles from initial up to max, at most attempts times in a
// row (negative: without end). A connector that ran for resetAfter before
// failing starts counting anew.
type restartPolicy struct {
	initial, max time.Duration
	attempts     int
}

func (p restartPolicy) wait(attempt int) time.Duration {
	return min(p.initial<<min(attempt-1, 20), p.max)
}

func (p restartPolicy) resetAfter() time.Duration { return max(p.max, time.Minute) }

// supervisor runs one connector for as long as it is configured: it
// restarts it after a failure (restartPolicy) or when asked (the REST API,
// a changed file), keeps it paused across restarts when asked, and stops it
// when the connector is removed or the daemon stops.
type supervisor struct {
	d    *daemon
	name string
	done chan struct{} // closed when run returns
	stop context.CancelFunc

	mu         sync.Mutex
	cfg        *configs.Connector
	conn       *sink.Connector    // the running connector; nil between runs
	cancelRun  context.CancelFunc // ends the current run gracefully
	restartNow chan struct{}      // poked to skip a backoff or end a run
	restart    bool               // a restart was asked for
	paused     bool               // the target state, kept across restarts
	failed     error              // set when the policy gave up
}

func (d *daemon) newSupervisor(c *configs.Connector) *supervisor {
	return &supervisor{d: d, name: c.Name, cfg: c, done: make(chan struct{}), restartNow: make(chan struct{}, 1)}
}

// start runs the supervisor until parent ends or stop is called.
func (s *supervisor) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	s.stop = cancel
	go func() {
		defer close(s.done)
		defer cancel()
		s.run(ctx)
	}()
}

// run is the restart loop.
func (s *supervisor) run(ctx context.Context) {
	attempt := 0
	for {
		began := time.Now()
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			s.d.board.set(s.name, func(cs *connStatus) { cs.state, cs.err = "stopped", nil })
			return
		}
		if s.takeRestart() {
			attempt = 0
			continue
		}
		if time.Since(began) >= s.d.restart.resetAfter() {
			attempt = 0
		}
		attempt++
		if !s.backoff(ctx, attempt, err) {
			return
		}
	}
}

// runOnce runs the connector once, with the configuration it has now.
func (s *supervisor) runOnce(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	c := s.cfg
	s.cancelRun = cancel
	s.mu.Unlock()
	err := s.d.connector(ctx, c, s)
	s.mu.Lock()
	s.conn, s.cancelRun = nil, nil
	s.mu.Unlock()
	if err == nil && ctx.Err() == nil {
		err = errors.New("connector stopped by itself") // Kafka client closed under it
	}
	return err
}

// backoff records a failure and waits before the next attempt; false when
// the policy gives up or the supervisor stops meanwhile.
func (s *supervisor) backoff(ctx context.Context, attempt int, err error) bool {
	log := s.d.log.With("connector", s.name)
	if p := s.d.restart; p.attempts >= 0 && attempt > p.attempts {
		log.Error("connector FAILED; not restarted again (run --restart-max-attempts); other connectors keep running", "attempts", attempt-1, "err", err)
		s.d.board.set(s.name, func(cs *connStatus) { cs.state, cs.err, cs.nextRestart = "failed", err, time.Time{} })
		s.mu.Lock()
		s.failed = err
		s.mu.Unlock()
		return false
	}
	wait := s.d.restart.wait(attempt)
	log.Error("connector FAILED; restarting it after a backoff; other connectors keep running", "attempt", attempt, "restart_in", wait, "err", err)
	s.d.board.set(s.name, func(cs *connStatus) {
		cs.state, cs.err, cs.restarts, cs.nextRestart = "failed", err, cs.restarts+1, time.Now().Add(wait)
	})
	s.d.metrics.Restarting(s.name, wait)
	defer s.d.metrics.Restarting(s.name, 0)
	select {
	case <-ctx.Done():
		return false
	case <-s.restartNow:
		s.takeRestart()
	case <-time.After(wait):
	}
	s.d.board.set(s.name, func(cs *connStatus) { cs.state, cs.nextRestart = "restarting", time.Time{} })
	return true
}

// running records the connector of the current run and applies the
// target state to it before it runs.
func (s *supervisor) running(conn *sink.Connector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn = conn
	if s.paused {
		conn.Pause()
	}
}

// requestRestart ends the current run gracefully (its partitions commit
// and leave the group) and starts the connector again at once, with cfg
// when it is not nil (a changed file).
func (s *supervisor) requestRestart(cfg *configs.Connector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg != nil {
		s.cfg = cfg
	}
	s.restart = true
	if s.cancelRun != nil {
		s.cancelRun()
	}
	select {
	case s.restartNow <- struct{}{}:
	default:
	}
}

// takeRestart reports whether a restart was asked for and forgets it,
// poke included: a stale poke must not cut a later failure's backoff.
func (s *supervisor) takeRestart() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.restart
	s.restart = false
	select {
	case <-s.restartNow:
	default:
	}
	return r
}

// setPaused sets the target state and applies it to the running connector.
func (s *supervisor) setPaused(paused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = paused
	if s.conn == nil {
		return
	}
	if paused {
		s.conn.Pause()
	} else {
		s.conn.Resume()
	}
}

// pauseState reports the target state and whether the running connector
// has stopped fetching.
func (s *supervisor) pauseState() (wanted, effective bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused, s.conn != nil && s.conn.Paused()
}

func (s *supervisor) config() *configs.Connector {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// gaveUp is the error the policy gave up on; nil while it runs.
func (s *supervisor) gaveUp() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}
