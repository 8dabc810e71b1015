// Package daemon is hdfs-sink's runtime as a library: New loads the worker
// and connector files as `hdfs-sink run` does, and Run runs every connector
// until its context ends. Each connector has a supervisor (supervisor.go:
// the restart policy, pause, panics) that runs it with its Hive syncer and
// health check as one group; reload.go applies SIGHUP and changes in the
// config directory; the status board (status.go) is what GET /status, the
// REST API and /readyz report; configdir.go changes connector files for
// the REST API (daemon/rest), which reaches the daemon only through the
// rest.Connectors methods the Daemon has (api.go). A connector file becomes
// the packages' options in internal/wiring, never here.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Daemon is what the connectors of one run share, and how it reaches the
// store, the registry and the metastore (tests put fakes there).
type Daemon struct {
	faults  *connectorFaults
	mem     wiring.ProcessMemory
	board   *statusBoard
	metrics *metrics.Metrics
	log     *slog.Logger
	// logins are the process's Kerberos logins, one per principal and
	// keytab, shared by every connector's HDFS, Metastore and Kafka clients.
	logins      *kerberos.Logins
	levels      *logLevels             // the process's loggers (loggers.go)
	files       wiring.Files           // --config and --worker, read again on reload
	hide        func(*secret.Redactor) // gives the log handler the secrets of a reload
	restart     RestartPolicy
	healthEvery time.Duration
	watchEvery  time.Duration              // 0: no directory watch
	hup         <-chan os.Signal           // Options.Reload
	http        HTTPOptions                // the server Run starts
	version     string                     // Options.Version
	build       rest.BuildInfo             // Options.Build
	conns       []*configs.Connector       // what New loaded: Run starts them
	loaded      [32]byte                   // configFingerprint of the files New loaded
	limitMemory func([]*configs.Connector) // nil: leave Go's memory limit alone
	reloads     chan struct{}

	edits sync.Mutex    // one Create or Patch at a time: each reads what is there, then writes
	pings chan struct{} // the loop's answer to Health

	mu         sync.Mutex
	clusterIDs map[string]string // Kafka cluster ids by bootstrapKey, once known
	sups       map[string]*supervisor
	initial    map[string]targetState // the target state a connector's next supervisor starts in (POST's initial_state, a revived one's)
	runCtx     context.Context        // runConnectors', for supervisors started later
	ended      chan struct{}          // told when a supervisor ends

	openStore func(*configs.Connector) (storage.FS, error)
	registry  func(*configs.Connector, *slog.Logger) (schema.Registry, error)
	dialHive  func(ctx context.Context, uris string) (hive.Metastore, error)
}

// newDaemon is a daemon of o that has loaded nothing (New loads).
func newDaemon(o Options, faults sink.Faults, mem wiring.ProcessMemory) *Daemon {
	o = withLevels(o)
	board := newStatusBoard()
	m := metrics.New(o.Version)
	board.metrics = m
	m.SetStates(board.states)
	d := &Daemon{faults: &connectorFaults{process: faults}, mem: mem, board: board, metrics: m, log: o.Logger, levels: o.levels, logins: kerberos.NewLogins(o.Logger),
		files: wiring.Files{Config: o.Config, Worker: o.Worker}, hide: o.Hide,
		restart: o.Restart, healthEvery: o.HealthInterval, watchEvery: o.WatchInterval, hup: o.Reload,
		http: o.HTTP, version: o.Version, build: o.Build,
		reloads: make(chan struct{}, 1), pings: make(chan struct{}), sups: map[string]*supervisor{}, initial: map[string]targetState{}, clusterIDs: map[string]string{},
		registry: wiring.RegistryFor, dialHive: wiring.DialHive}
	if d.restart == (RestartPolicy{}) {
		d.restart = DefaultRestart
	}
	if d.healthEvery == 0 {
		d.healthEvery = 10 * time.Second
	}
	d.openStore = func(c *configs.Connector) (storage.FS, error) { return wiring.OpenStore(c, d.logins) }
	return d
}

func (d *Daemon) startSupervisor(ctx context.Context, c *configs.Connector, ended chan<- struct{}) {
	d.mu.Lock()
	target := d.initial[c.Name]
	delete(d.initial, c.Name)
	d.mu.Unlock()
	s := newSupervisor(c, d.runConnector, d.restart, d.board, d.log, target)
	d.board.set(c.Name, func(cs *connStatus) {
		cs.paused = func() bool { _, effective := s.pauseState(); return effective }
	})
	d.mu.Lock()
	d.sups[c.Name] = s
	d.mu.Unlock()
	s.start(ctx)
	go func() {
		<-s.done
		select {
		case ended <- struct{}{}:
		default: // the loop is told already; allGaveUp looks at all of them
		}
	}()
}

// allGaveUp reports whether every supervisor has ended because the restart
// policy gave up (there is at least one).
func (d *Daemon) allGaveUp() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.sups {
		if s.gaveUp() == nil {
			return false
		}
	}
	return len(d.sups) > 0
}

// revive starts a new supervisor for a connector whose restart policy gave
// up, with cfg (a restart asked through the API, or a changed file) and in
// target state t.
func (d *Daemon) revive(cfg *configs.Connector, t targetState) {
	d.mu.Lock()
	ctx, ended := d.runCtx, d.ended
	d.initial[cfg.Name] = t
	d.mu.Unlock()
	if ctx != nil {
		d.startSupervisor(ctx, cfg, ended)
	}
}

func (d *Daemon) supervisor(name string) *supervisor {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sups[name]
}

// shutdown waits for every supervisor once ctx has ended, bound at most
// (shutdownBound). It says so first, with why (ctx's cause: the signal,
// for `hdfs-sink run`) and the bound, so that a stop is never silent.
func (d *Daemon) shutdown(ctx context.Context, bound time.Duration) int {
	d.log.Info("graceful shutdown started: connectors commit their open files and leave their groups",
		"cause", context.Cause(ctx).Error(), "timeout", bound)
	var wg sync.WaitGroup
	d.mu.Lock()
	for _, s := range d.sups {
		wg.Go(func() { <-s.done })
	}
	d.mu.Unlock()
	if !waitBounded(ctx, &wg, bound) {
		d.log.Warn("shutdown took too long; exiting with work left for recovery", "still_running", d.board.unfinished())
	} else {
		d.log.Info("shutdown complete")
	}
	if d.allGaveUp() {
		return 1
	}
	return 0
}

// waitBounded waits for wg, and once ctx has ended for bound more at most.
// It reports whether wg finished.
func waitBounded(ctx context.Context, wg *sync.WaitGroup, bound time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
	}
	select {
	case <-done:
		return true
	case <-time.After(bound):
		return false
	}
}

// shutdownBound is how long SIGTERM may take: the longest connector's
// shutdown.timeout plus time to leave the group.
func shutdownBound(conns []*configs.Connector) time.Duration {
	d := 10 * time.Second
	for _, c := range conns {
		d = max(d, c.ShutdownTimeout)
	}
	return d + 15*time.Second
}

// runConnector runs one connector once with its store and, with
// hive.integration, its Hive syncer; started learns the connector before
// it runs. The store is closed last, when nothing uses it any more. The
// Kafka security settings are parsed once, for the readiness probe and the
// client.
func (d *Daemon) runConnector(ctx context.Context, c *configs.Connector, started func(*sink.Connector)) error {
	sec, err := wiring.KafkaSecurity(c, d.logins)
	if err != nil {
		return err
	}
	if err := d.kafkaReady(ctx, c, sec); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while waiting for Kafka
		}
		return err
	}
	d.learnClusterID(ctx, c, sec)
	store, err := d.openStoreRetrying(ctx, c)
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := d.registry(c, d.log)
	if err != nil {
		return err
	}
	conn, syncer, err := d.newConnector(c, store, reg, sec)
	if err != nil {
		return err
	}
	comp, err := d.completenessOf(c, conn, store)
	if err != nil {
		return err
	}
	cmp, err := d.compactionOf(c, conn, store)
	if err != nil {
		return err
	}
	started(conn)
	d.board.set(c.Name, func(cs *connStatus) {
		cs.state, cs.err, cs.conn, cs.syncer, cs.registry, cs.completeness, cs.compaction = "running", nil, conn, syncer, reg, comp, cmp
	})
	defer d.board.set(c.Name, func(cs *connStatus) { cs.conn, cs.registry, cs.completeness, cs.compaction = nil, nil, nil, nil })
	d.metrics.SetHive(c.Name, hiveStats(syncer))
	h := &healthCheck{every: d.healthEvery, metrics: d.metrics, board: d.board, c: c, conn: conn, reg: reg, store: store}
	return runGroup(ctx, conn, syncer, h, comp, cmp, d.log.With("connector", c.Name))
}

// newConnector wires a connector and its syncer (nil without
// hive.integration); neither runs yet.
func (d *Daemon) newConnector(c *configs.Connector, store storage.FS, reg schema.Registry, sec *kafkaclient.Security) (*sink.Connector, *hive.Syncer, error) {
	faults, err := d.faults.of(c.Name)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := wiring.SinkConfig(c, wiring.ConnectorDeps{Store: store, Registry: reg, Mem: d.mem, Log: d.log, Faults: faults, Security: sec})
	if err != nil {
		return nil, nil, err
	}
	dial, err := d.hiveDialer(c)
	if err != nil {
		return nil, nil, fmt.Errorf("connector %q: %w", c.Name, err)
	}
	syncer, err := wiring.HiveSyncer(c, store, cfg.Partitioner, dial, d.log)
	if err != nil {
		return nil, nil, err
	}
	if syncer != nil {
		cfg.Catalog = syncer // not a nil *Syncer in a non-nil Catalog
	}
	cfg.Observer = d.metrics.Connector(c.Name)
	cfg.KafkaOpts = append(cfg.KafkaOpts, kafkaMetrics(c.Name, d.metrics))
	conn, err := sink.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return conn, syncer, nil
}

// runGroup runs a connector, its health check, its completeness markers,
// its compaction policy and its syncer (nil: none) as one group. When the connector returns, failed or shut down, the
// others are stopped and waited for, and what the syncer still has pending
// is registered within hiveDrainTimeout. Nothing of the group uses the
// store once it returns. A panic in any of them is recovered, logged with
// its stack, and is the connector's failure, not the process's.
func runGroup(parent context.Context, conn *sink.Connector, syncer *hive.Syncer, h *healthCheck, comp *completenessRun, cmp *compactionRun, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var g errgroup.Group
	g.Go(func() (err error) {
		defer cancel() // the syncer and the health check serve this connector only
		defer recoverPanic(&err, log, conn.Close)
		return conn.Run(ctx)
	})
	g.Go(func() (err error) {
		defer recoverPanic(&err, log, cancel)
		h.run(ctx)
		return nil
	})
	if comp != nil {
		g.Go(func() (err error) {
			defer recoverPanic(&err, log, cancel)
			comp.run(ctx)
			return nil
		})
	}
	if cmp != nil {
		g.Go(func() (err error) {
			defer recoverPanic(&err, log, cancel)
			cmp.run(ctx)
			return nil
		})
	}
	if syncer == nil {
		return g.Wait()
	}
	g.Go(func() (err error) {
		defer recoverPanic(&err, log, cancel)
		syncer.Run(ctx)
		return nil
	})
	err := g.Wait()
	if derr := syncer.Drain(hiveDrainTimeout); derr != nil {
		log.Warn("hive registrations still pending as the connector stops; made at next start", "err", derr)
	}
	return err
}

// recoverPanic, deferred, turns a panic into *errp, logs it with its stack
// and runs cleanup (which must not panic). A *sink.PanicError returned by
// the connector is logged the same way.
func recoverPanic(errp *error, log *slog.Logger, cleanup func()) {
	if v := recover(); v != nil {
		*errp = &sink.PanicError{Value: v, Stack: debug.Stack()}
		cleanup()
	}
	var perr *sink.PanicError
	if errors.As(*errp, &perr) {
		log.Error("PANIC in connector; it is stopped as failed, the process goes on", "panic", fmt.Sprint(perr.Value), "stack", string(perr.Stack))
	}
}

// hiveDrainTimeout bounds the Hive work done after a connector's last
// commit (at shutdown, or once it failed); it fits in shutdownBound's 15 s
// allowance for leaving the group.
const hiveDrainTimeout = 10 * time.Second

// hiveDialer is how the connector's syncer reaches its metastore: the
// daemon's dialHive, or with SASL a dial authenticated by the connector's
// Kerberos login.
func (d *Daemon) hiveDialer(c *configs.Connector) (func(context.Context, string) (hive.Metastore, error), error) {
	opts, err := wiring.HiveDialOptions(c, d.logins)
	if err != nil || opts == nil {
		return d.dialHive, err
	}
	return func(ctx context.Context, uris string) (hive.Metastore, error) {
		cl, err := hive.Dial(ctx, uris, opts...)
		if err != nil {
			return nil, err
		}
		return cl, nil
	}, nil
}

// openStoreRetrying waits out a store that is down at start: an outage is
// not a configuration error. The error of each attempt is in the status
// and readiness until the store answers. A Kerberos refusal is a
// configuration error (a wrong keytab, an unknown principal, clock skew):
// it stops the connector at once. An unreachable KDC is waited out like
// the store.
func (d *Daemon) openStoreRetrying(ctx context.Context, c *configs.Connector) (storage.FS, error) {
	wait := c.RetryBackoff
	for attempt := 1; ; attempt++ {
		store, err := d.openStore(c)
		if err == nil {
			d.board.setDep(c.Name, depStore, nil)
			return store, nil
		}
		if kerberos.IsKerberos(err) && !kerberos.Retryable(err) {
			return nil, err
		}
		d.board.setDep(c.Name, depStore, err)
		msg := "store unreachable; retrying"
		if kerberos.Retryable(err) {
			msg = "Kerberos KDC unreachable; retrying"
		}
		d.log.Error(msg, "connector", c.Name, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connector %q: store never became reachable: %w", c.Name, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Minute)
	}
}

// kafkaReady waits until a broker answers with the connector's security
// settings. A broker that is down is waited for; one that refuses the
// credentials or fails the TLS handshake stops the connector at once, with
// the broker's address and the reason (kafkaclient.AuthError). Each
// attempt is the Kafka health check until the connector runs: a Kafka down
// from the start is dependency_up 0 and a reason of /readyz from the first
// attempt, and the probes' connection errors are the connector's Kafka
// client series, so the shipped alerts fire for it.
func (d *Daemon) kafkaReady(ctx context.Context, c *configs.Connector, sec *kafkaclient.Security) error {
	sec.SetLogger(d.log.With("connector", c.Name))
	report := func(err error) { d.board.setDep(c.Name, depKafka, err) }
	if err := sec.WaitReadyReporting(ctx, c.Consumer.BootstrapServers, report,
		kgo.ClientID("hdfs-sink-"+c.Name), kafkaMetrics(c.Name, d.metrics)); err != nil {
		return fmt.Errorf("connector %q: %w", c.Name, err)
	}
	return nil
}
