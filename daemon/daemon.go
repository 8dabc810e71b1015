package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

func cmdRun(ctx context.Context, args []string, stderr io.Writer) int {
	// Caught first: SIGHUP's default action ends the process without
	// committing anything, and systemctl reload sends it.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var rf runFlags
	fs := rf.flagSet(stderr)
	if err := fs.Parse(args); err != nil || rf.cf.config == "" {
		fmt.Fprintln(stderr, "hdfs-sink run: --config is required")
		return 2
	}
	log, err := rf.log.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink run:", err)
		return 2
	}
	d, l, code := rf.daemon(log)
	if d == nil {
		return code
	}
	defer d.logins.Close()
	srv, err := rf.server(fs, d, l.worker, log)
	if err != nil {
		log.Error("cannot serve the REST API, metrics and health endpoints", "addr", rf.listenAddr(fs, l.worker), "err", err)
		return 2
	}
	if srv != nil {
		defer srv.shutdown()
	}
	go d.forwardReloads(ctx, hup)
	return d.runConnectors(ctx, l.conns)
}

// daemon builds the daemon from the flags and loads the worker and
// connector files; a nil daemon comes with the exit code.
func (rf *runFlags) daemon(log *slog.Logger) (*daemon, loaded, int) {
	faults, err := sink.FaultsFromEnv()
	if err != nil {
		log.Error("bad fault injection setting", "err", err)
		return nil, loaded{}, 2
	}
	fp := configFingerprint(rf.cf.config)
	l, err := loadChecked(rf.cf, log)
	rf.log.hide(l.redact)
	if err != nil {
		log.Error("invalid configuration; nothing consumed", "err", err)
		return nil, l, 2
	}
	for _, line := range workerLines(l.worker) {
		log.Info(line)
	}
	d := newDaemon(faults, newProcessMemory(rf.memMax, len(l.conns), log), newStatusBoard(), log)
	d.board.setLoaded(l)
	d.cf, d.loaded, d.restart, d.healthEvery, d.watchEvery = rf.cf, fp, rf.restartPolicy(), rf.healthEvery, rf.watchEvery
	d.hide = rf.log.hide
	d.limitMemory = func(conns []*configs.Connector) { limitBySum(rf.memMax, conns, d.metrics, log) }
	return d, l, 0
}

// loadChecked loads the worker and connector files as run and check do:
// configs, then what the wiring refuses; warnings go to log.
func loadChecked(cf configFlags, log *slog.Logger) (loaded, error) {
	l, err := cf.load()
	for _, w := range l.warns {
		log.Warn("config", "warning", w.String())
	}
	if err != nil {
		return l, err
	}
	reports, err := checkWiring(l.conns, l.redact)
	for i, r := range reports {
		for _, w := range r.warns {
			log.Warn("config", "connector", l.conns[i].Name, "warning", w)
		}
	}
	return l, err
}

// daemon is what the connectors of one `run` share, and how it reaches the
// store, the registry and the metastore (tests put fakes there).
type daemon struct {
	faults  sink.Faults
	mem     processMemory
	board   *statusBoard
	metrics *metrics.Metrics
	log     *slog.Logger
	// logins are the process's Kerberos logins, one per principal and
	// keytab, shared by every connector's HDFS, Metastore and Kafka clients.
	logins      *kerberos.Logins
	cf          configFlags             // --config and --worker, read again on reload
	hide        func(*configs.Redactor) // gives the log handler the secrets of a reload
	restart     restartPolicy
	healthEvery time.Duration
	watchEvery  time.Duration              // 0: no directory watch
	loaded      [32]byte                   // configFingerprint of the files run loaded
	limitMemory func([]*configs.Connector) // nil: leave Go's memory limit alone
	reloads     chan struct{}

	mu     sync.Mutex
	sups   map[string]*supervisor
	panics map[string]*panicAt // HDFS_SINK_PANIC_AT, by connector
	runCtx context.Context     // runConnectors', for supervisors started later
	ended  chan struct{}       // told when a supervisor ends

	openStore func(*configs.Connector) (storage.FS, error)
	registry  func(*configs.Connector, *slog.Logger) (schema.Registry, error)
	dialHive  func(ctx context.Context, uris string) (hive.Metastore, error)
}

func newDaemon(faults sink.Faults, mem processMemory, board *statusBoard, log *slog.Logger) *daemon {
	m := metrics.New(version)
	board.metrics = m
	m.SetStates(board.states)
	d := &daemon{faults: faults, mem: mem, board: board, metrics: m, log: log, logins: kerberos.NewLogins(log),
		restart: restartPolicy{initial: 5 * time.Second, max: 5 * time.Minute, attempts: -1}, healthEvery: 10 * time.Second,
		reloads: make(chan struct{}, 1), sups: map[string]*supervisor{},
		registry: registryFor, dialHive: dialHive}
	d.openStore = func(c *configs.Connector) (storage.FS, error) { return openStore(c, d.logins) }
	return d

}

// runConnectors runs every connector until ctx ends, and applies reloads
// meanwhile. A connector that fails is restarted by the policy; the others
// go on. The exit code is 1 when the policy gave up on all of them. Once
// ctx has ended it waits shutdownBound at most; connectors still running
// then are named in the log and left to the process's exit.
func (d *daemon) runConnectors(ctx context.Context, conns []*configs.Connector) int {
	if d.limitMemory != nil {
		d.limitMemory(conns)
	}
	ended := make(chan struct{}, len(conns)+1)
	d.mu.Lock()
	d.runCtx, d.ended = ctx, ended
	d.mu.Unlock()
	for _, c := range conns {
		d.startSupervisor(ctx, c, ended)
	}
	for {
		select {
		case <-ctx.Done():
			return d.shutdown(conns)
		case <-d.reloads:
			conns = d.reload(ctx, conns, ended)
		case <-ended:
			if d.allGaveUp() {
				return 1
			}
		}
	}
}

func (d *daemon) startSupervisor(ctx context.Context, c *configs.Connector, ended chan<- struct{}) {
	s := d.newSupervisor(c)
	d.board.set(c.Name, func(cs *connStatus) { cs.cfg, cs.sup = c, s })
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
func (d *daemon) allGaveUp() bool {
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
// up, with cfg: a restart asked through the API, or a changed file.
func (d *daemon) revive(cfg *configs.Connector) {
	d.mu.Lock()
	ctx, ended := d.runCtx, d.ended
	d.mu.Unlock()
	if ctx != nil {
		d.startSupervisor(ctx, cfg, ended)
	}
}

func (d *daemon) supervisor(name string) *supervisor {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sups[name]
}

// shutdown waits for every supervisor, shutdownBound at most.
func (d *daemon) shutdown(conns []*configs.Connector) int {
	var wg sync.WaitGroup
	d.mu.Lock()
	for _, s := range d.sups {
		wg.Go(func() { <-s.done })
	}
	d.mu.Unlock()
	if !waitBounded(context.Background(), &wg, shutdownBound(conns)) {
		d.log.Warn("shutdown took too long; exiting with work left for recovery", "still_running", d.board.unfinished())
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

// connector runs one connector once with its store and, with
// hive.integration, its Hive syncer. The store is closed last, when nothing
// uses it any more.
func (d *daemon) connector(ctx context.Context, c *configs.Connector, sup *supervisor) error {
	if err := d.kafkaReady(ctx, c); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while waiting for Kafka
		}
		return err
	}
	store, err := d.openStoreRetrying(ctx, c)
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := d.registry(c, d.log)
	if err != nil {
		return err
	}
	conn, syncer, err := d.newConnector(c, store, reg)
	if err != nil {
		return err
	}
	sup.running(conn)
	d.board.set(c.Name, func(cs *connStatus) {
		cs.state, cs.err, cs.conn, cs.syncer, cs.registry = "running", nil, conn, syncer, reg
	})
	defer d.board.set(c.Name, func(cs *connStatus) { cs.conn, cs.registry = nil, nil })
	d.metrics.SetHive(c.Name, hiveStats(syncer))
	h := &healthCheck{d: d, c: c, conn: conn, reg: reg, store: store}
	return runGroup(ctx, conn, syncer, h, d.log.With("connector", c.Name))
}

// newConnector wires a connector and its syncer (nil without
// hive.integration); neither runs yet.
func (d *daemon) newConnector(c *configs.Connector, store storage.FS, reg schema.Registry) (*sink.Connector, *hive.Syncer, error) {
	faults, err := d.connectorFaults(c.Name)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := sinkConfig(c, connectorDeps{store: store, reg: reg, mem: d.mem, log: d.log, faults: faults, logins: d.logins})
	if err != nil {
		return nil, nil, err
	}
	dial, err := d.hiveDialer(c)
	if err != nil {
		return nil, nil, fmt.Errorf("connector %q: %w", c.Name, err)
	}
	syncer, err := hiveSyncer(c, store, cfg.Partitioner, dial, d.log)
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

// runGroup runs a connector, its health check and its syncer (nil: none)
// as one group. When the connector returns, failed or shut down, the
// others are stopped and waited for, and what the syncer still has pending
// is registered within hiveDrainTimeout. Nothing of the group uses the
// store once it returns. A panic in any of them is recovered, logged with
// its stack, and is the connector's failure, not the process's.
func runGroup(parent context.Context, conn *sink.Connector, syncer *hive.Syncer, h *healthCheck, log *slog.Logger) error {
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
func (d *daemon) hiveDialer(c *configs.Connector) (func(context.Context, string) (hive.Metastore, error), error) {
	opts, err := hiveDialOptions(c, d.logins)
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
func (d *daemon) openStoreRetrying(ctx context.Context, c *configs.Connector) (storage.FS, error) {
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
// the broker's address and the reason (kafkaclient.AuthError).
func (d *daemon) kafkaReady(ctx context.Context, c *configs.Connector) error {
	sec, err := kafkaSecurity(c, d.logins)
	if err != nil {
		return err
	}
	sec.Opts(d.log.With("connector", c.Name))
	if err := sec.WaitReady(ctx, c.Consumer.BootstrapServers, kgo.ClientID("hdfs-sink-"+c.Name)); err != nil {
		return fmt.Errorf("connector %q: %w", c.Name, err)
	}
	return nil
}

func registryFor(c *configs.Connector, log *slog.Logger) (schema.Registry, error) {
	if c.Schemaless {
		return nil, nil // values are not Avro: no registry
	}
	cfg, err := registryConfig(c, log)
	if err != nil {
		return nil, err
	}
	reg, err := registry.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("connector %q: schema registry: %w", c.Name, err)
	}
	return reg, nil
}
