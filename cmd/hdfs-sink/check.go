package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// defaultStatusAddr is where GET /status answers without --status-addr
// and without listeners in the worker: loopback, unlike Connect's REST
// port, which listens on every interface.
const defaultStatusAddr = "127.0.0.1:8083"

// cmdCheck is `hdfs-sink check`: everything run checks before consuming,
// and what it found (the worker read, each connector's store, NameNodes,
// Kafka consumer settings, registry and metastore), secrets hidden.
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf configFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil || cf.config == "" {
		fmt.Fprintln(stderr, "hdfs-sink check: --config is required")
		return 2
	}
	l, err := cf.load()
	for _, w := range l.warns {
		fmt.Fprintln(stderr, "warning:", l.redact.Text(w.String()))
	}
	var reports []report
	if err == nil {
		reports, err = checkWiring(l.conns, l.redact)
	}
	if err != nil {
		fmt.Fprintln(stderr, l.redact.Text(err.Error()))
		return 1
	}
	for _, line := range workerLines(l.worker) {
		fmt.Fprintln(stdout, line)
	}
	for i, c := range l.conns {
		fmt.Fprintf(stdout, "ok: connector %q (%s)\n", c.Name, c.Source)
		for _, line := range reports[i].lines {
			fmt.Fprintln(stdout, "  "+line)
		}
		for _, w := range reports[i].warns {
			fmt.Fprintf(stderr, "warning: connector %q: %s\n", c.Name, l.redact.Text(w))
		}
	}
	return 0
}

// statusAddrFor is --status-addr when given, else the worker's HTTP
// address (listeners, rest.host.name/rest.port), else the default.
func statusAddrFor(fs *flag.FlagSet, flagValue string, w *configs.Worker) string {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "status-addr" })
	if given || w == nil || w.HTTPAddr == "" {
		return flagValue
	}
	return w.HTTPAddr
}
