package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/hdfs-sink/hdfs-sink/daemon"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// cmdCheck is `hdfs-sink check`: everything run checks before consuming,
// and what it found (wiring.Check), secrets hidden; with --connect, then
// every service of every connector (cmdCheckConnect). Exit 1 when a file
// is refused or a service failed. --offline checks the files away from the
// daemon's host.
func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf configFlags
	cf.register(fs)
	fs.BoolVar(&cf.Offline, "offline", false, "check the files without the daemon's host: config providers are not resolved and "+
		"hadoop.conf.dir, hive.conf.dir, keytabs, krb5.conf, stores and token files are not read; check lists what it could not check")
	connect := fs.Bool("connect", false, "then connect to every service each connector needs (Kafka, the schema registry, the store, the Hive Metastore), all at once")
	bound := fs.Duration("timeout", defaultProbeBound, "with --connect: how long each service may take to answer (a refused connection answers at once)")
	var hf httpFlags // run's HTTP flags: check applies the same binding rule
	hf.register(fs)
	if err := fs.Parse(args); err != nil || cf.Config == "" {
		fmt.Fprintln(stderr, "hdfs-sink check: --config is required")
		return 2
	}
	if *connect && cf.Offline {
		fmt.Fprintln(stderr, "hdfs-sink check: --connect and --offline exclude each other (--connect reaches the services from this host)")
		return 2
	}
	if !wiring.Check(cf.Files, stdout, stderr) || !checkHTTP(cf.Files, hf.options(fs), stderr) {
		return 1
	}
	if *connect {
		return cmdCheckConnect(ctx, cf, *bound, stdout, stderr)
	}
	return 0
}

// checkHTTP reports what run would refuse of its HTTP flags, given the
// worker the files load (its listeners, CONNECT_LISTENERS): a setting run
// cannot honour safely is a check error.
func checkHTTP(files wiring.Files, h daemon.HTTPOptions, stderr io.Writer) bool {
	w, _, err := files.LoadWorker()
	if err == nil {
		err = daemon.CheckHTTP(h, w)
	}
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return false
	}
	return true
}
