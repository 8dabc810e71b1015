package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/hdfs-sink/hdfs-sink/daemon"
)

// cmdRun is `hdfs-sink run`: the daemon until SIGTERM. Exit 0 after a
// clean shutdown, 1 when every connector failed for good, 2 when the
// configuration or the listen address is refused (nothing consumed).
func cmdRun(ctx context.Context, args []string, stderr io.Writer) int {
	// Caught first: SIGHUP's default action ends the process without
	// committing anything, and systemctl reload sends it.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var rf runFlags
	fs := rf.flagSet(stderr)
	if err := fs.Parse(args); err != nil || rf.cf.Config == "" {
		fmt.Fprintln(stderr, "hdfs-sink run: --config is required")
		return 2
	}
	log, level, err := rf.log.daemonLogger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink run:", err)
		return 2
	}
	o := rf.options(fs, log, hup)
	o.LogLevel = level // the daemon's root logger; log lets every level through
	d, err := daemon.New(o)
	if err != nil {
		return 2 // logged, secrets hidden
	}
	switch err := d.Run(ctx); {
	case err == nil:
		return 0
	case errors.Is(err, daemon.ErrAllFailed):
		return 1
	}
	return 2 // the HTTP server could not listen; logged
}

// options are the daemon's options from the flags; the HTTP address
// depends on the worker file the daemon loads.
func (rf *runFlags) options(fs *flag.FlagSet, log *slog.Logger, hup <-chan os.Signal) daemon.Options {
	b := currentBuild()
	return daemon.Options{
		Config: rf.cf.Config, Worker: rf.cf.Worker, Logger: log, Hide: rf.log.hide,
		MemoryMax: rf.memMax, Restart: rf.restartPolicy(), HealthInterval: rf.healthEvery, WatchInterval: rf.watchEvery,
		Reload:  hup,
		HTTP:    rf.http.options(fs),
		Version: version, Build: daemon.BuildInfo{Version: b.Version, Commit: b.Commit},
	}
}
