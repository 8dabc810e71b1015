package wiring

import (
	"fmt"
	"io"
	"log/slog"
)

// Check is `hdfs-sink check`: everything run checks before consuming, and
// what it found (the worker read, each connector's store, NameNodes, Kafka
// consumer settings, registry and metastore), secrets hidden. The report
// goes to stdout, warnings and errors to stderr; false: a file was refused.
func Check(cf Files, stdout, stderr io.Writer) bool {
	l, err := cf.Load()
	for _, w := range l.Warns {
		fmt.Fprintln(stderr, "warning:", l.Redact.Text(w.String()))
	}
	var reports []report
	if err == nil {
		reports, err = checkWiring(l.Conns, l.Redact, cf.Offline)
	}
	if err != nil {
		fmt.Fprintln(stderr, l.Redact.Text(err.Error()))
		return false
	}
	for _, line := range WorkerLines(l.Worker) {
		fmt.Fprintln(stdout, line)
	}
	for i, c := range l.Conns {
		fmt.Fprintf(stdout, "ok: connector %q (%s)\n", c.Name, c.Source)
		for _, line := range reports[i].lines {
			fmt.Fprintln(stdout, "  "+line)
		}
		for _, w := range reports[i].warns {
			fmt.Fprintf(stderr, "warning: connector %q: %s\n", c.Name, l.Redact.Text(w))
		}
	}
	return true
}

// LoadChecked loads the worker and connector files as run and check do:
// configs, then what the wiring refuses; warnings go to log.
func LoadChecked(cf Files, log *slog.Logger) (Loaded, error) {
	l, err := cf.Load()
	for _, f := range l.Skipped {
		log.Debug("config: skipped a hidden or editor file", "file", f)
	}
	for _, w := range l.Warns {
		log.Warn("config", "warning", w.String())
	}
	if err != nil {
		return l, err
	}
	reports, err := checkWiring(l.Conns, l.Redact, cf.Offline)
	for i, r := range reports {
		for _, w := range r.warns {
			log.Warn("config", "connector", l.Conns[i].Name, "warning", w)
		}
	}
	return l, err
}
