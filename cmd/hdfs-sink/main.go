// Command hdfs-sink moves records from Kafka to HDFS and the Hive Metastore
// exactly once. It reads
// Kafka Connect HDFS sink connector files and worker files unchanged.
//
//	hdfs-sink run   [--worker <file>] --config <file | directory>  run the daemon
//	hdfs-sink check [--worker <file>] --config <file | directory>  validate and report, then exit (--offline: away from the daemon's host)
//	hdfs-sink demo                                    the whole pipeline in one process, nothing installed (built with -tags demo only)
//	hdfs-sink offsets [reset]                         where partitions stand; resume one at an offset (a fenced WAL claim)
//	hdfs-sink verify                                  committed files against Kafka and the WAL
//	hdfs-sink wal inspect|repair TOPIC PARTITION      read a partition's WAL; repair a damaged head (fenced)
//	hdfs-sink health [--addr host:port]               exit 0 when the daemon is ready (a probe without curl)
//	hdfs-sink version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	ctx, stop := signalContext(context.Background())
	defer stop()
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(ctx, rest, stderr)
	case "check":
		return cmdCheck(ctx, rest, stdout, stderr)
	case "demo":
		return cmdDemo(ctx, rest, stdout, stderr)
	case "offsets":
		return cmdOffsets(ctx, rest, stdout, stderr)
	case "verify":
		return cmdVerify(ctx, rest, stdout, stderr)
	case "wal":
		return cmdWAL(ctx, rest, stdout, stderr)
	case "compact":
		return cmdCompact(ctx, rest, stdout, stderr)
	case "health":
		return cmdHealth(rest, stdout, stderr)
	case "version":
		return cmdVersion(rest, stdout, stderr)
	case "-h", "--help", "help":
		printUsage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "hdfs-sink: unknown command %q\n", cmd)
	printUsage(stderr)
	return 2
}

// signalContext is parent ended by SIGTERM or SIGINT, with a cause that
// names the signal: `run` logs it as the reason its graceful shutdown
// starts. Once one has arrived, later ones are ignored until stop: the
// shutdown is bounded by itself (daemon.Run).
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		select {
		case s := <-ch:
			cancel(fmt.Errorf("%s received", signalName(s)))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// signalName is the signal as kill(1) and systemd name it.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return s.String()
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `usage:
  hdfs-sink run   [--worker FILE] --config <file|dir> [--listen 127.0.0.1:8083] [--read-only] [--log-level debug|info|warn] [--log-format text|json]
                  (hdfs-sink run -h lists the REST, TLS, restart and reload flags)
  hdfs-sink health [--addr 127.0.0.1:8083] [--live] [--tls [--insecure]]
  hdfs-sink check [--worker FILE] --config <file|dir> [--connect [--timeout 10s] | --offline]
`+demoUsage+`  hdfs-sink version [--json]

  --worker is a Kafka Connect worker properties file; without it, CONNECT_* variables
  (Confluent's image convention) are the worker, if set. Every command that reads
  connector files takes it.
`+toolUsage)
}
