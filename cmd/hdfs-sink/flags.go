package main

import (
	"flag"
	"io"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon"
)

// runFlags are the flags of `hdfs-sink run`.
type runFlags struct {
	cf          configFlags // --config, --worker
	listen      string
	statusAddr  string // the flag before --listen; kept so existing units keep working
	memMax      int64
	readOnly    bool
	authFile    string
	tlsCert     string
	tlsKey      string
	restart     daemon.RestartPolicy
	healthEvery time.Duration
	watchEvery  time.Duration
	log         logFlags
}

const defaultListen = "127.0.0.1:8083"

func (rf *runFlags) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rf.cf.register(fs) // a writable config directory lets the REST API add, change and delete connectors
	fs.StringVar(&rf.listen, "listen", defaultListen, "address of the REST API, /metrics, /healthz and /readyz (empty: off)")
	fs.StringVar(&rf.statusAddr, "status-addr", "", "old name of --listen; wins when set")
	fs.Int64Var(&rf.memMax, "memory-max-bytes", 0, "memory ceiling for the whole process, shared by all connectors (0: the sum of their hdfs.sink.memory.max.bytes)")
	fs.BoolVar(&rf.readOnly, "read-only", false, "refuse every REST request that changes something (pause, resume, restart, config, delete)")
	fs.StringVar(&rf.authFile, "rest-basic-auth-file", "", "file of user:password lines; when set, the REST API and /metrics need HTTP basic authentication (not /healthz, /readyz)")
	fs.StringVar(&rf.tlsCert, "rest-tls-cert", "", "PEM certificate chain: serve HTTPS (with --rest-tls-key)")
	fs.StringVar(&rf.tlsKey, "rest-tls-key", "", "PEM private key of --rest-tls-cert")
	fs.DurationVar(&rf.restart.Initial, "restart-backoff", daemon.DefaultRestart.Initial, "wait before restarting a failed connector; doubles per failure in a row")
	fs.DurationVar(&rf.restart.Max, "restart-backoff-max", daemon.DefaultRestart.Max, "the longest wait between restarts")
	fs.IntVar(&rf.restart.Attempts, "restart-max-attempts", daemon.DefaultRestart.Attempts, "restarts in a row before a failed connector stays failed (-1: no limit; 0: never restart)")
	fs.DurationVar(&rf.healthEvery, "health-interval", 10*time.Second, "how often each connector checks Kafka, the registry and the store (readiness, lag)")
	fs.DurationVar(&rf.watchEvery, "watch-interval", 5*time.Second, "how often the config directory is checked for changes (0: only SIGHUP reloads)")
	rf.log.register(fs)
	return fs
}

// listenAddr is --status-addr (the old name) or --listen when given, else
// the worker file's HTTP address (listeners, rest.host.name/rest.port),
// else the default.
func (rf *runFlags) listenAddr(fs *flag.FlagSet, w *configs.Worker) string {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "listen" })
	switch {
	case rf.statusAddr != "":
		return rf.statusAddr
	case !given && w != nil && w.HTTPAddr != "":
		return w.HTTPAddr
	}
	return rf.listen
}

func (rf *runFlags) restartPolicy() daemon.RestartPolicy {
	p := rf.restart
	p.Initial = max(p.Initial, 10*time.Millisecond)
	p.Max = max(p.Max, p.Initial)
	return p
}
