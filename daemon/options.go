package daemon

import (
	"log/slog"
	"os"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
)

// Options are what a daemon is run with: `hdfs-sink run`'s flags.
type Options struct {
	// Config is a connector file or a directory of them (a directory the
	// daemon can write lets the REST API add, change and delete
	// connectors); Worker is the Kafka Connect worker file ("": the
	// CONNECT_* environment, if any).
	Config, Worker string
	Logger         *slog.Logger // nil: discard
	// LogLevel is the root logger's level at start, which PUT
	// /admin/loggers changes (nil: the lowest level Logger lets through).
	// Logger's handler must let through every level that may be set:
	// cmd/hdfs-sink gives one that lets all through, and --log-level here.
	LogLevel slog.Leveler
	// Hide, when set, is told the secrets of every load and reload, so a
	// log handler can hide them (cmd/hdfs-sink's does).
	Hide func(*secret.Redactor)
	// MemoryMax is one memory ceiling for the whole process (0: the sum
	// of the connectors' hdfs.sink.memory.max.bytes).
	MemoryMax int64
	Restart   RestartPolicy // the zero policy is DefaultRestart
	// HealthInterval is how often each connector checks Kafka, the
	// registry and the store (0: 10 s); WatchInterval how often the config
	// directory is checked for changes (0: only Reload reloads).
	HealthInterval, WatchInterval time.Duration
	// Reload asks for a reload at each value (SIGHUP); nil: none.
	Reload <-chan os.Signal
	HTTP   HTTPOptions
	// Version names the binary in hdfs_sink_build_info and the plugin
	// list; Build is what GET / reports.
	Version string
	Build   BuildInfo

	levels *logLevels // set by withLevels
}

// withLevels puts o.Logger under the levels of the process's loggers
// (GET/PUT /admin/loggers), once.
func withLevels(o Options) Options {
	if o.levels != nil {
		return o
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.levels = newLogLevels(o.LogLevel, o.Logger)
	o.Logger = slog.New(o.levels.handler(o.Logger.Handler()))
	return o
}

// BuildInfo is the version and commit GET / reports.
type BuildInfo = rest.BuildInfo

// HTTPOptions are the daemon's HTTP server: the REST API, /status,
// /metrics, /healthz and /readyz.
type HTTPOptions struct {
	// Listen is the address given the worker file loaded (its listeners),
	// and where it came from, for messages ("--listen", "listeners in
	// worker file …"); nil or "": no server.
	Listen            func(worker *configs.Worker) (addr, origin string)
	ReadOnly          bool   // refuse every REST request that changes something
	AuthFile          string // user:password lines: basic authentication
	CertFile, KeyFile string // serve HTTPS
	// ClientCAFile is PEM CA certificates: every request but the probes
	// needs a client certificate one of them signed (with CertFile).
	ClientCAFile string
	// InsecureListen lets the server listen where other hosts can reach it
	// without authentication or ReadOnly; a WARN says so at every start.
	// Without it such an address is refused (docs/security.md).
	InsecureListen bool
	// AllowedHosts are host names (".domain": every name under it) that a
	// changing request's Host header may name besides localhost, IP
	// addresses and this machine's name: a Kubernetes Service's names.
	AllowedHosts []string
}

// serverConfig is the HTTP server of h given the worker loaded; false: no
// server.
func (h HTTPOptions) serverConfig(w *configs.Worker) (rest.ServerConfig, bool) {
	if h.Listen == nil {
		return rest.ServerConfig{}, false
	}
	addr, origin := h.Listen(w)
	if addr == "" {
		return rest.ServerConfig{}, false
	}
	return rest.ServerConfig{Addr: addr, Origin: origin, AuthFile: h.AuthFile, CertFile: h.CertFile, KeyFile: h.KeyFile,
		ClientCAFile: h.ClientCAFile, InsecureListen: h.InsecureListen, AllowedHosts: h.AllowedHosts}, true
}

// CheckHTTP checks h as run does before anything starts, given the worker
// the files load (nil: none): the files it names, the TLS flags that go
// together, and the binding rule (an address other hosts can reach needs
// authentication or ReadOnly, or InsecureListen). `hdfs-sink check`
// reports its error; New refuses with it.
func CheckHTTP(h HTTPOptions, w *configs.Worker) error {
	cfg, on := h.serverConfig(w)
	if !on {
		return nil
	}
	return rest.CheckServer(cfg, h.ReadOnly)
}

// RestartPolicy is what happens to a connector that failed: restarted
// after a wait that doubles from Initial up to Max, at most Attempts times
// in a row (negative: without end; 0: never).
type RestartPolicy struct {
	Initial, Max time.Duration
	Attempts     int
}

// DefaultRestart is `hdfs-sink run`'s restart policy.
var DefaultRestart = RestartPolicy{Initial: 5 * time.Second, Max: 5 * time.Minute, Attempts: -1}
