package wiring

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// Files are where a run, check or tool finds its settings: --config (a
// connector file or a directory of them) and --worker.
type Files struct {
	Config, Worker string
	// Offline reads the files away from the daemon's host (check
	// --offline): config provider placeholders are checked but not
	// resolved, and what only the host has (hadoop.conf.dir, hive.conf.dir,
	// keytabs, krb5.conf, stores and token files) is not read; check lists
	// each as not checked.
	Offline bool
}

// Loaded is everything a command reads before it acts.
type Loaded struct {
	Worker *configs.Worker // nil without a worker file or CONNECT_* variables
	Conns  []*configs.Connector
	Warns  []configs.Warning
	Redact *secret.Redactor
	// Skipped are the hidden and editor files of the config directory,
	// which are never read (a debug line each).
	Skipped []string
}

// Load reads the worker (--worker, else the CONNECT_* environment, as
// Confluent's image passes worker settings) and the connector files.
func (cf Files) Load() (Loaded, error) {
	var l Loaded
	w, warns, err := cf.loadWorker()
	l.Warns = warns
	if err != nil {
		return l, err
	}
	l.Worker = w
	_, l.Skipped, _ = configs.ConnectorFiles(cf.Config) // Load reports the error
	conns, cwarns, err := configs.Load(cf.Config, w)
	l.Warns = append(l.Warns, cwarns...)
	if err != nil {
		return l, err
	}
	l.Conns, l.Redact = conns, configs.NewRedactor(w, conns...)
	return l, nil
}

// LoadWorker reads the worker alone, as Load does (nil: none).
func (cf Files) LoadWorker() (*configs.Worker, []configs.Warning, error) { return cf.loadWorker() }

func (cf Files) loadWorker() (*configs.Worker, []configs.Warning, error) {
	opts := configs.ReadOptions{Offline: cf.Offline}
	if cf.Worker != "" {
		w, warns, err := configs.LoadWorkerWith(cf.Worker, opts)
		if n := connectEnvCount(); n > 0 && err == nil {
			warns = append(warns, configs.Warning{Source: "environment", Key: "CONNECT_*",
				Message: fmt.Sprintf("%d CONNECT_* variables ignored: --worker %s is given", n, cf.Worker)})
		}
		return w, warns, err
	}
	return configs.WorkerFromEnvWith(os.Environ(), opts)
}

func connectEnvCount() int {
	n := 0
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CONNECT_") {
			n++
		}
	}
	return n
}

// WorkerLines say which worker was read and what of it is not used, once.
func WorkerLines(w *configs.Worker) []string {
	if w == nil {
		return nil
	}
	out := []string{"worker: " + w.Source}
	if len(w.NotApplicable) > 0 {
		out = append(out, "worker: not applicable to hdfs-sink, ignored: "+strings.Join(w.NotApplicable, ", "))
	}
	return out
}

// hostRoot, when set, prefixes absolute paths of directories named in
// connector files (hadoop.conf.dir, hive.conf.dir): the corpus test checks
// published files, which name their authors' hosts, against a test root.
var hostRoot = ""

func hostPath(p string) string {
	if hostRoot == "" || p == "" || !filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(hostRoot, p)
}
