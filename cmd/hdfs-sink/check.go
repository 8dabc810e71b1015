package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// cmdCheck is `hdfs-sink check`: everything run checks before consuming,
// and what it found (wiring.Check), secrets hidden; with --connect, then
// every service of every connector (cmdCheckConnect). Exit 1 when a file
// is refused or a service failed.
func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf configFlags
	cf.register(fs)
	connect := fs.Bool("connect", false, "then connect to every service each connector needs (Kafka, the schema registry, the store, the Hive Metastore), all at once")
	bound := fs.Duration("timeout", defaultProbeBound, "with --connect: how long each service may take to answer (a refused connection answers at once)")
	if err := fs.Parse(args); err != nil || cf.Config == "" {
		fmt.Fprintln(stderr, "hdfs-sink check: --config is required")
		return 2
	}
	if !wiring.Check(cf.Files, stdout, stderr) {
		return 1
	}
	if *connect {
		return cmdCheckConnect(ctx, cf, *bound, stdout, stderr)
	}
	return 0
}
