package daemon

import (
	"log/slog"
	"os"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
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
	Hide func(*configs.Redactor)
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
	// Listen is the address given the worker file loaded (its listeners);
	// nil or "": no server.
	Listen            func(worker *configs.Worker) string
	ReadOnly          bool   // refuse every REST request that changes something
	AuthFile          string // user:password lines: basic authentication
	CertFile, KeyFile string // serve HTTPS
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
