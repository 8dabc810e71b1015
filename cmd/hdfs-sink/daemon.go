package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
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
	mem := newProcessMemory(*memMax, len(conns), log)
	return runConnectors(ctx, conns, faults, mem, board, log)
}

// runConnectors runs every connector until ctx ends. A connector that fails
// stops alone: the others go on. The exit code is 1 when all of them failed.
func runConnectors(ctx context.Context, conns []*configs.Connector, faults sink.Faults, mem processMemory, board *statusBoard, log *slog.Logger) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for _, c := range conns {
		clog := log.With("connector", c.Name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := runConnector(ctx, c, faults, mem, board, log)
			board.set(c.Name, func(cs *connStatus) { cs.state, cs.err = "stopped", err })
			if err != nil {
				board.set(c.Name, func(cs *connStatus) { cs.state = "failed" })
				clog.Error("connector FAILED; other connectors keep running", "err", err)
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		select {
		case <-done:
		case <-time.After(shutdownBound(conns)):
			log.Warn("shutdown took too long; exiting with work left for recovery")
		}
	}
	if failed > 0 && failed == len(conns) {
		return 1
	}
	return 0
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

func runConnector(ctx context.Context, c *configs.Connector, faults sink.Faults, mem processMemory, board *statusBoard, log *slog.Logger) error {
	board.set(c.Name, func(*connStatus) {})
	store, err := openStoreRetrying(ctx, c, log)
	if err != nil {
		return err
	}
	defer store.Close()
	reg, err := registryFor(c, log)
	if err != nil {
		return err
	}
	cfg, err := sinkConfig(c, store, reg, log, faults)
	if err != nil {
		return err
	}
	mem.apply(c, &cfg, log)
	syncer := hiveSyncer(c, store, cfg.Partitioner, log)
	syncDone := make(chan struct{})
	if syncer != nil {
		cfg.Catalog = syncer
		go func() { syncer.Run(ctx); close(syncDone) }()
	}
	conn, err := sink.New(cfg)
	if err != nil {
		return err
	}
	board.set(c.Name, func(cs *connStatus) { cs.state, cs.conn, cs.syncer = "running", conn, syncer })
	err = conn.Run(ctx)
	if syncer != nil && ctx.Err() != nil {
		<-syncDone
		if derr := syncer.Drain(hiveDrainTimeout); derr != nil {
			log.Warn("hive registrations still pending at shutdown; made at next start", "connector", c.Name, "err", derr)
		}
	}
	return err
}

// hiveDrainTimeout bounds the Hive work done at shutdown, after the last
// commit; it fits in shutdownBound's 15 s allowance for leaving the group.
const hiveDrainTimeout = 10 * time.Second

// openStoreRetrying waits out a store that is down at start: an outage is
// not a configuration error.
func openStoreRetrying(ctx context.Context, c *configs.Connector, log *slog.Logger) (storage.FS, error) {
	wait := c.RetryBackoff
	for attempt := 1; ; attempt++ {
		store, err := openStore(c)
		if err == nil {
			return store, nil
		}
		log.Error("store unreachable; retrying", "connector", c.Name, "attempt", attempt, "retry_in", wait, "err", err)
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
		return nil, errors.Join(fmt.Errorf("connector %q: schema registry", c.Name), err)
	}
	return reg, nil
}
