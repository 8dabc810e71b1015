package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "connector file or directory")
	if err := fs.Parse(args); err != nil || *path == "" {
		fmt.Fprintln(stderr, "hdfs-sink check: --config is required")
		return 2
	}
	conns, warns, err := configs.LoadPath(*path)
	for _, w := range warns {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if err == nil {
		err = checkWiring(conns)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, c := range conns {
		fmt.Fprintf(stdout, "ok: connector %q (%s)\n", c.Name, c.Source)
	}
	return 0
}

func cmdRun(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "connector file or directory")
	statusAddr := fs.String("status-addr", "127.0.0.1:8083", "where GET /status answers (empty: off)")
	memMax := fs.Int64("memory-max-bytes", 0, "memory ceiling for the whole process, shared by all connectors (0: only each connector's hdfs.sink.memory.max.bytes)")
	var lf logFlags
	lf.register(fs)
	if err := fs.Parse(args); err != nil || *path == "" {
		fmt.Fprintln(stderr, "hdfs-sink run: --config is required")
		return 2
	}
	log, err := lf.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink run:", err)
		return 2
	}
	faults, err := sink.FaultsFromEnv()
	if err != nil {
		log.Error("bad fault injection setting", "err", err)
		return 2
	}
	conns, warns, err := configs.LoadPath(*path)
	for _, w := range warns {
		log.Warn("connector config", "warning", w.String())
	}
	if err == nil {
		err = checkWiring(conns)
	}
	if err != nil {
		log.Error("invalid connector configuration; nothing consumed", "err", err)
		return 2
	}
	board := newStatusBoard()
	if *statusAddr != "" {
		if err := board.serve(ctx, *statusAddr, log); err != nil {
			// Not worth refusing to move data over: say so and go on.
			log.Error("status endpoint unavailable", "addr", *statusAddr, "err", err)
		}
	}
	d := newDaemon(faults, newProcessMemory(*memMax, len(conns), log), board, log)
	return d.runConnectors(ctx, conns)
}

// daemon is what the connectors of one `run` share, and how it reaches the
// store, the registry and the metastore (tests put fakes there).
type daemon struct {
	faults sink.Faults
	mem    processMemory
	board  *statusBoard
	log    *slog.Logger

	openStore func(*configs.Connector) (storage.FS, error)
	registry  func(*configs.Connector, *slog.Logger) (schema.Registry, error)
	dialHive  func(ctx context.Context, uris string) (hive.Metastore, error)
}

func newDaemon(faults sink.Faults, mem processMemory, board *statusBoard, log *slog.Logger) *daemon {
	return &daemon{faults: faults, mem: mem, board: board, log: log,
		openStore: openStore, registry: registryFor, dialHive: dialHive}
}

// runConnectors runs every connector until ctx ends. A connector that fails
// stops alone: the others go on. The exit code is 1 when all of them
// failed. Once ctx has ended it waits shutdownBound at most; connectors
// still running then are named in the log and left to the process's exit.
func (d *daemon) runConnectors(ctx context.Context, conns []*configs.Connector) int {
	var wg sync.WaitGroup
	var failed atomic.Int64
	for _, c := range conns {
		wg.Go(func() {
			if d.runConnector(ctx, c) != nil {
				failed.Add(1)
			}
		})
	}
	if !waitBounded(ctx, &wg, shutdownBound(conns)) {
		d.log.Warn("shutdown took too long; exiting with work left for recovery", "still_running", d.board.unfinished())
	}
	if n := failed.Load(); n > 0 && n == int64(len(conns)) {
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

// runConnector runs one connector until it stops and reports how it ended.
func (d *daemon) runConnector(ctx context.Context, c *configs.Connector) error {
	err := d.connector(ctx, c)
	state := "stopped"
	if err != nil {
		state = "failed"
		d.log.Error("connector FAILED; other connectors keep running", "connector", c.Name, "err", err)
	}
	d.board.set(c.Name, func(cs *connStatus) { cs.state, cs.err = state, err })
	return err
}

// connector runs one connector with its store and, with hive.integration,
// its Hive syncer. The store is closed last, when nothing uses it any more.
func (d *daemon) connector(ctx context.Context, c *configs.Connector) error {
	d.board.set(c.Name, func(*connStatus) {})
	store, err := d.openStoreRetrying(ctx, c)
	if err != nil {
		return err
	}
	defer store.Close()
	conn, syncer, reg, err := d.newConnector(c, store)
	if err != nil {
		return err
	}
	d.board.set(c.Name, func(cs *connStatus) { cs.state, cs.conn, cs.syncer, cs.registry = "running", conn, syncer, reg })
	return runGroup(ctx, conn, syncer, d.log.With("connector", c.Name))
}

// newConnector wires a connector, its syncer (nil without
// hive.integration) and its registry client; nothing runs yet.
func (d *daemon) newConnector(c *configs.Connector, store storage.FS) (*sink.Connector, *hive.Syncer, schema.Registry, error) {
	reg, err := d.registry(c, d.log)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := sinkConfig(c, store, reg, d.mem, d.log, d.faults)
	if err != nil {
		return nil, nil, nil, err
	}
	syncer := hiveSyncer(c, store, cfg.Partitioner, d.dialHive, d.log)
	if syncer != nil {
		cfg.Catalog = syncer // not a nil *Syncer in a non-nil Catalog
	}
	conn, err := sink.New(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return conn, syncer, reg, nil
}

// runGroup runs a connector and its syncer (nil: none) as one group. When
// the connector returns, failed or shut down, the syncer is stopped and
// waited for, and what it still has pending is registered within
// hiveDrainTimeout. Nothing of the group uses the store once it returns.
func runGroup(parent context.Context, conn *sink.Connector, syncer *hive.Syncer, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var g errgroup.Group
	g.Go(func() error {
		defer cancel() // the syncer serves this connector only
		return conn.Run(ctx)
	})
	if syncer == nil {
		return g.Wait()
	}
	g.Go(func() error { syncer.Run(ctx); return nil })
	err := g.Wait()
	if derr := syncer.Drain(hiveDrainTimeout); derr != nil {
		log.Warn("hive registrations still pending as the connector stops; made at next start", "err", derr)
	}
	return err
}

// hiveDrainTimeout bounds the Hive work done after a connector's last
// commit (at shutdown, or once it failed); it fits in shutdownBound's 15 s
// allowance for leaving the group.
const hiveDrainTimeout = 10 * time.Second

// openStoreRetrying waits out a store that is down at start: an outage is
// not a configuration error.
func (d *daemon) openStoreRetrying(ctx context.Context, c *configs.Connector) (storage.FS, error) {
	wait := c.RetryBackoff
	for attempt := 1; ; attempt++ {
		store, err := d.openStore(c)
		if err == nil {
			return store, nil
		}
		d.log.Error("store unreachable; retrying", "connector", c.Name, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connector %q: store never became reachable: %w", c.Name, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Minute)
	}
}

func registryFor(c *configs.Connector, log *slog.Logger) (schema.Registry, error) {
	if c.Schemaless {
		return nil, nil // values are not Avro: no registry
	}
	cfg := registry.ClientConfig{URLs: c.Registry.URLs, Logger: log.With("connector", c.Name)}
	if c.Registry.UserInfo != "" {
		u, p, err := registry.ParseUserInfo(c.Registry.UserInfo)
		if err != nil {
			return nil, fmt.Errorf("connector %q: %w", c.Name, err)
		}
		cfg.Username, cfg.Password = u, p
	}
	reg, err := registry.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("connector %q: schema registry: %w", c.Name, err)
	}
	return reg, nil
}
