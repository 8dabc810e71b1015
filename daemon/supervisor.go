package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

func (p RestartPolicy) wait(attempt int) time.Duration {
	return min(p.Initial<<min(attempt-1, 20), p.Max)
}

// resetAfter is how long a connector must have run before failing to
// start counting its attempts anew.
func (p RestartPolicy) resetAfter() time.Duration { return max(p.Max, time.Minute) }

// runFunc runs connector c once, until ctx ends or it fails; it hands
// started the connector it built, before that runs.
type runFunc func(ctx context.Context, c *configs.Connector, started func(*sink.Connector)) error

// statusSink is where a supervisor reports its connector's state: the
// status board.
type statusSink interface {
	set(name string, update func(*connStatus))
	// restarting is how long a failed connector waits; 0: not waiting.
	restarting(name string, wait time.Duration)
}

// targetState is what the connector should be doing, as Kafka Connect's
// target states: running, paused (it runs, owns its partitions and fetches
// nothing), or stopped (it does not run at all: its partitions are
// committed and released, and its offsets may be changed).
type targetState int

const (
	targetRunning targetState = iota
	targetPaused
	targetStopped
)

// supervisor runs one connector for as long as it is configured: it
// restarts it after a failure (restartPolicy) or when asked (the REST API,
// a changed file), keeps its target state (paused, stopped) across
// restarts, and stops it when the connector is removed or the daemon stops.
type supervisor struct {
	name   string
	run    runFunc
	policy RestartPolicy
	status statusSink
	log    *slog.Logger
	done   chan struct{} // closed when run returns
	stop   context.CancelFunc

	mu         sync.Mutex
	cfg        *configs.Connector
	conn       *sink.Connector    // the running connector; nil between runs
	cancelRun  context.CancelFunc // ends the current run gracefully
	restartNow chan struct{}      // poked to skip a backoff or end a run
	wake       chan struct{}      // poked when a stopped connector may run again
	restart    bool               // a restart was asked for
	target     targetState        // kept across restarts
	halted     bool               // stopped: no run, none starts until the target changes
	held       int                // offset changes under way: the connector stays halted until they end
	failed     error              // set when the policy gave up
}

func newSupervisor(c *configs.Connector, run runFunc, p RestartPolicy, status statusSink, log *slog.Logger, target targetState) *supervisor {
	return &supervisor{name: c.Name, run: run, policy: p, status: status, log: log, cfg: c, done: make(chan struct{}),
		restartNow: make(chan struct{}, 1), wake: make(chan struct{}, 1), target: target}
}

// start runs the supervisor until parent ends or stop is called.
func (s *supervisor) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	s.stop = cancel
	go func() {
		defer close(s.done)
		defer cancel()
		s.loop(ctx)
	}()
}

// loop is the restart loop.
func (s *supervisor) loop(ctx context.Context) {
	attempt := 0
	for {
		if !s.waitWhileStopped(ctx) {
			s.status.set(s.name, func(cs *connStatus) { cs.state, cs.err = "stopped", nil })
			return
		}
		began := time.Now()
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			s.status.set(s.name, func(cs *connStatus) { cs.state, cs.err = "stopped", nil })
			return
		}
		if s.takeRestart() {
			attempt = 0
			continue
		}
		if time.Since(began) >= s.policy.resetAfter() {
			attempt = 0
		}
		attempt++
		if !s.backoff(ctx, attempt, err) {
			return
		}
	}
}

// waitWhileStopped holds the loop while the target state is stopped (or
// an offset change holds the connector), and reports false when ctx ends
// meanwhile. The connector is halted only here: no run is under way, its
// partitions were committed and released when the last run ended.
func (s *supervisor) waitWhileStopped(ctx context.Context) bool {
	for waited := false; ; waited = true {
		s.mu.Lock()
		stop := s.target == targetStopped || s.held > 0
		s.halted = stop
		s.mu.Unlock()
		if !stop {
			if waited {
				s.takeRestart() // a restart asked while stopped is done by this start
			}
			return true
		}
		s.status.set(s.name, func(cs *connStatus) { cs.state, cs.err, cs.nextRestart = "stopped", nil, time.Time{} })
		select {
		case <-ctx.Done():
			return false
		case <-s.wake:
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
	err := s.run(ctx, c, s.running)
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
	log := s.log.With("connector", s.name)
	if p := s.policy; p.Attempts >= 0 && attempt > p.Attempts {
		log.Error("connector FAILED; not restarted again (run --restart-max-attempts); other connectors keep running", "attempts", attempt-1, "err", err)
		s.status.set(s.name, func(cs *connStatus) { cs.state, cs.err, cs.nextRestart = "failed", err, time.Time{} })
		s.mu.Lock()
		s.failed = err
		s.mu.Unlock()
		return false
	}
	wait := s.policy.wait(attempt)
	log.Error("connector FAILED; restarting it after a backoff; other connectors keep running", "attempt", attempt, "restart_in", wait, "err", err)
	s.status.set(s.name, func(cs *connStatus) {
		cs.state, cs.err, cs.restarts, cs.nextRestart = "failed", err, cs.restarts+1, time.Now().Add(wait)
	})
	s.status.restarting(s.name, wait)
	defer s.status.restarting(s.name, 0)
	select {
	case <-ctx.Done():
		return false
	case <-s.restartNow:
		s.takeRestart()
	case <-time.After(wait):
	}
	s.status.set(s.name, func(cs *connStatus) { cs.state, cs.nextRestart = "restarting", time.Time{} })
	return true
}

// running records the connector of the current run and applies the
// target state to it before it runs.
func (s *supervisor) running(conn *sink.Connector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn = conn
	if s.target == targetPaused {
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

// setTarget sets the target state and applies it: to the running
// connector (pause, resume), by ending its run gracefully (stop: its
// partitions commit and leave the group), or by waking a stopped loop.
func (s *supervisor) setTarget(t targetState) {
	s.mu.Lock()
	s.target = t
	conn := s.conn
	s.mu.Unlock()
	switch {
	case t == targetStopped:
		s.requestRestart(nil) // ends the run; the loop then waits while stopped
	case conn == nil:
		poke(s.wake)
	case t == targetPaused:
		conn.Pause()
	default:
		conn.Resume()
	}
}

// pauseState reports whether the target state is paused and whether the
// running connector has stopped fetching.
func (s *supervisor) pauseState() (wanted, effective bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.target == targetPaused, s.conn != nil && s.conn.Paused()
}

// targetState is what the connector should be doing.
func (s *supervisor) targetState() targetState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.target
}

// errNotHalted refuses an offset change while the connector runs or its
// last run is still ending.
var errNotHalted = errors.New("the connector is not stopped")

// hold keeps a halted connector halted, whatever its target state becomes,
// until release is called: an offset change runs while nothing of the
// connector does. It fails with errNotHalted unless the connector is
// halted.
func (s *supervisor) hold() (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.halted {
		return nil, errNotHalted
	}
	s.held++
	return func() {
		s.mu.Lock()
		s.held--
		s.mu.Unlock()
		poke(s.wake)
	}, nil
}

// poke wakes whoever waits on c, once.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
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
