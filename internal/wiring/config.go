package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// configFlags are how run, check and offsets reset find their settings.
type configFlags struct {
	config, worker string
}

func (cf *configFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&cf.config, "config", "", "connector file or directory (*.json, *.properties)")
	fs.StringVar(&cf.worker, "worker", "", "Kafka Connect worker properties file (default: the CONNECT_* environment, if any)")
}

// loaded is everything a command reads before it acts.
type loaded struct {
	worker *configs.Worker // nil without a worker file or CONNECT_* variables
	conns  []*configs.Connector
	warns  []configs.Warning
	redact *configs.Redactor
}

// environ is os.Environ; tests replace it.
var environ = os.Environ

// load reads the worker (--worker, else the CONNECT_* environment, as
// Confluent's image passes worker settings) and the connector files.
func (cf configFlags) load() (loaded, error) {
	var l loaded
	w, warns, err := cf.loadWorker()
	l.warns = warns
	if err != nil {
		return l, err
	}
	l.worker = w
	conns, cwarns, err := configs.Load(cf.config, w)
	l.warns = append(l.warns, cwarns...)
	if err != nil {
		return l, err
	}
	l.conns, l.redact = conns, configs.NewRedactor(w, conns...)
	return l, nil
}

func (cf configFlags) loadWorker() (*configs.Worker, []configs.Warning, error) {
	if cf.worker != "" {
		w, warns, err := configs.LoadWorker(cf.worker)
		if n := connectEnvCount(); n > 0 && err == nil {
			warns = append(warns, configs.Warning{Source: "environment", Key: "CONNECT_*",
				Message: fmt.Sprintf("%d CONNECT_* variables ignored: --worker %s is given", n, cf.worker)})
		}
		return w, warns, err
	}
	return configs.WorkerFromEnv(environ())
}

func connectEnvCount() int {
	n := 0
	for _, kv := range environ() {
		if strings.HasPrefix(kv, "CONNECT_") {
			n++
		}
	}
	return n
}

// workerLines say which worker was read and what of it is not used, once.
func workerLines(w *configs.Worker) []string {
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
