// Command hdfs-sink moves Avro data from Kafka to HDFS exactly once. It reads
// Kafka Connect HDFS sink connector files unchanged.
//
//	hdfs-sink run --config <file.json | directory>   run the daemon
//	hdfs-sink check --config <file.json | directory> validate connector files and exit
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
	"syscall"
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
  hdfs-sink run   --config <file.json|dir> [--listen 127.0.0.1:8083] [--read-only] [--log-level debug|info|warn] [--log-format text|json]
                  (hdfs-sink run -h lists the REST, TLS, restart and reload flags)
  hdfs-sink health [--addr 127.0.0.1:8083] [--live] [--tls [--insecure]]
  hdfs-sink check --config <file.json|dir>
  hdfs-sink demo  [--records N] [--partitions N] [--dir DIR]
  hdfs-sink version [--json]
`+toolUsage)
}

// logFlags are shared by the commands that log.
type logFlags struct{ level, format string }

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
	switch l.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", l.format)
}
