// Command hdfs-sink moves Avro data from Kafka to HDFS exactly once. It reads
// Kafka Connect HDFS sink connector files and worker files unchanged.
//
//	hdfs-sink run   [--worker <file>] --config <file | directory>  run the daemon
//	hdfs-sink check [--worker <file>] --config <file | directory>  validate and report, then exit
//	hdfs-sink demo                                    the whole pipeline in one process, nothing installed
//	hdfs-sink offsets [reset]                         where partitions stand; resume one at an offset (a fenced WAL claim)
//	hdfs-sink verify                                  committed files against Kafka and the WAL
//	hdfs-sink wal inspect|repair TOPIC PARTITION      read a partition's WAL; repair a damaged head (fenced)
//	hdfs-sink health [--addr host:port]               exit 0 when the daemon is ready (a probe without curl)
//	hdfs-sink version
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(ctx, rest, stderr)
	case "check":
		if wantsConnect(rest) {
			return cmdCheckConnect(ctx, rest, stdout, stderr)
		}
		return cmdCheck(rest, stdout, stderr)
	case "demo":
		return cmdDemo(ctx, rest, stdout, stderr)
	case "offsets":
		return cmdOffsets(ctx, rest, stdout, stderr)
	case "verify":
		return cmdVerify(ctx, rest, stdout, stderr)
	case "wal":
		return cmdWAL(ctx, rest, stdout, stderr)
	case "health":
		return cmdHealth(rest, stdout, stderr)
	case "version":
		return cmdVersion(rest, stdout, stderr)
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "hdfs-sink: unknown command %q\n", cmd)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  hdfs-sink run   [--worker FILE] --config <file|dir> [--listen 127.0.0.1:8083] [--read-only] [--log-level debug|info|warn] [--log-format text|json]
                  (hdfs-sink run -h lists the REST, TLS, restart and reload flags)
  hdfs-sink health [--addr 127.0.0.1:8083] [--live] [--tls [--insecure]]
  hdfs-sink check [--worker FILE] --config <file|dir> [--connect]
  hdfs-sink demo  [--records N] [--partitions N] [--dir DIR]
  hdfs-sink version [--json]

  --worker is a Kafka Connect worker properties file; without it, CONNECT_* variables
  (Confluent's image convention) are the worker, if set. Every command that reads
  connector files takes it.
`+toolUsage)
}

// logFlags are shared by the commands that log.
type logFlags struct {
	level, format string
	redact        *atomic.Pointer[configs.Redactor] // set by logger, filled by hide
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.level, "log-level", "info", "debug shows every state transition")
	fs.StringVar(&l.format, "log-format", "text", "text or json")
}

func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", l.level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch l.format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", l.format)
	}
	l.redact = new(atomic.Pointer[configs.Redactor])
	return slog.New(redactHandler{inner: h, r: l.redact}), nil
}

// hide makes the loggers of l hide r's secrets from now on.
func (l *logFlags) hide(r *configs.Redactor) {
	if l.redact != nil {
		l.redact.Store(r)
	}
}
