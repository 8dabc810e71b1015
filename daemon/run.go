package daemon

import (
	"context"
	"errors"
	"sync"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

// ErrAllFailed is Run's error when the restart policy gave up on every
// connector.
var ErrAllFailed = errors.New("every connector failed and the restart policy gave up")

// New loads the worker and connector files as `hdfs-sink check` checks
// them; a refusal is logged (nothing is consumed) and returned, secrets
// hidden. Nothing runs before Run.
func New(o Options) (*Daemon, error) {
	o = withLevels(o)
	log := o.Logger
	faults, err := sink.FaultsFromEnv()
	if err != nil {
		log.Error("bad fault injection setting", "err", err)
		return nil, err
	}
	renameEvery, err := renameFaultsFromEnv()
	if err != nil {
		log.Error("bad fault injection setting", "err", err)
		return nil, err
	}
	renameFreeze, err := freezeRenameFromEnv()
	if err != nil {
		log.Error("bad fault injection setting", "err", err)
		return nil, err
	}
	files := wiring.Files{Config: o.Config, Worker: o.Worker}
	fp := configFingerprint(files.Config)
	l, err := wiring.LoadChecked(files, log)
	if o.Hide != nil {
		o.Hide(l.Redact)
	}
	if err != nil {
		err = errors.New(l.Redact.Text(err.Error()))
		log.Error("invalid configuration; nothing consumed", "err", err)
		return nil, err
	}
	for _, line := range wiring.WorkerLines(l.Worker) {
		log.Info(line)
	}
	if err := CheckHTTP(o.HTTP, l.Worker); err != nil {
		log.Error("the REST API cannot start as configured; nothing consumed", "err", err)
		return nil, err
	}
	o.Logger = log
	d := newDaemon(o, faults, wiring.NewProcessMemory(o.MemoryMax, len(l.Conns), log))
	d.openStore = freezeRenames(failRenames(d.openStore, renameEvery), renameFreeze)
	d.board.setLoaded(l)
	d.conns, d.loaded = l.Conns, fp
	d.limitMemory = func(conns []*configs.Connector) { wiring.LimitBySum(o.MemoryMax, conns, d.metrics, log) }
	return d, nil
}

// Run runs every connector until ctx ends, serving the HTTP API meanwhile
// and applying reloads. A connector that fails is restarted by the policy;
// the others go on. Once ctx has ended Run waits for the connectors to
// commit and leave their groups, shutdownBound at most (those still
// running then are named in the log and left to recovery), and returns
// nil. It returns ErrAllFailed when the policy gave up on every connector,
// and the HTTP server's error when it cannot listen, before anything runs.
// A Daemon runs once.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.logins.Close()
	srv, err := d.serve()
	if err != nil {
		return err
	}
	if srv != nil {
		defer srv.Shutdown()
	}
	reloadCtx, stopReloads := context.WithCancel(ctx)
	var reloads sync.WaitGroup
	reloads.Go(func() { d.forwardReloads(reloadCtx, d.hup) })
	defer reloads.Wait()
	defer stopReloads()
	if d.runConnectors(ctx, d.conns) != 0 {
		return ErrAllFailed
	}
	return nil
}

// serve starts the HTTP server, or returns nil when it is off.
func (d *Daemon) serve() (*rest.Server, error) {
	cfg, on := d.http.serverConfig(d.board.loadedWorker())
	if !on {
		return nil, nil
	}
	srv, err := rest.Serve(cfg, d.restAPI(""), d.log)
	if err != nil {
		d.log.Error("cannot serve the REST API, metrics and health endpoints", "addr", cfg.Addr, "err", err)
		return nil, err
	}
	return srv, nil
}

// restAPI is the REST API over d, with its status document and metrics;
// workerID is the listener's host:port (Serve sets it).
func (d *Daemon) restAPI(workerID string) *rest.API {
	return rest.New(d, rest.Options{ReadOnly: d.http.ReadOnly, WorkerID: workerID, Version: d.version, Build: d.build,
		Status: d.board.handler(d.log), Metrics: d.metrics.Handler(), Log: d.log})
}

// runConnectors runs every connector until ctx ends, and applies reloads
// meanwhile. A connector that fails is restarted by the policy; the others
// go on. The exit code is 1 when the policy gave up on all of them. Once
// ctx has ended it waits shutdownBound at most; connectors still running
// then are named in the log and left to the process's exit.
func (d *Daemon) runConnectors(ctx context.Context, conns []*configs.Connector) int {
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
			return d.shutdown(ctx, shutdownBound(conns))
		case <-d.reloads:
			conns = d.reload(ctx, conns, ended)
		case <-d.pings: // Health: the loop answers
		case <-ended:
			if d.allGaveUp() {
				return 1
			}
		}
	}
}
