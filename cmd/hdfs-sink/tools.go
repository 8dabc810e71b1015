package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Exit statuses of the operator tools (verify, wal, offsets, check
// --connect), so scripts can tell a finding from a tool that could not look.
const (
	exitOK       = 0
	exitFinding  = 1 // a violation, a refusal, a failed service
	exitUsage    = 2 // bad flags or connector files
	exitCantLook = 3 // the store or Kafka could not be asked
)

// toolUsage is appended to the main usage text.
const toolUsage = `  hdfs-sink verify  [--worker FILE] --config <file.json|dir> [--connector NAME] [--topic T] [--partition P] [--deep] [--json]
  hdfs-sink wal inspect [--worker FILE] --config <file.json|dir> [--connector NAME] [--json] TOPIC PARTITION
  hdfs-sink wal repair  [--worker FILE] --config <file.json|dir> [--connector NAME] [--to OFFSET] [--yes] [--force] TOPIC PARTITION
  hdfs-sink offsets [--worker FILE] --config <file.json|dir> [--connector NAME] [--topic T] [--json]
  hdfs-sink offsets reset [--worker FILE] --config <file.json|dir> [--connector NAME] --topic T --partition P --to <OFFSET|earliest|latest|RFC3339 time|committed> [--take-over] [--force] --yes
  hdfs-sink compact [--worker FILE] --config <file.json|dir> [--connector NAME] [--topic T] [--dir D] [--dry-run] [--target-bytes N] [--min-age 1h] [--grace 1h] [--json]
  hdfs-sink check --connect [--worker FILE] --config <file.json|dir> [--timeout 10s]   also reach every service of every connector, all at once
`

// configFlags are how run, check and the tools find their settings.
type configFlags struct {
	wiring.Files
}

func (cf *configFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&cf.Config, "config", "", "connector file or directory (*.json, *.properties)")
	fs.StringVar(&cf.Worker, "worker", "", "Kafka Connect worker properties file (default: the CONNECT_* environment, if any)")
}

// toolFlags are the flags every tool shares.
type toolFlags struct {
	cf        configFlags // --config, --worker
	connector string
	json      bool
	timeout   time.Duration
}

func (t *toolFlags) register(fs *flag.FlagSet) {
	t.cf.register(fs)
	fs.StringVar(&t.connector, "connector", "", "connector name (may be left out when the config holds one connector)")
	fs.BoolVar(&t.json, "json", false, "print JSON instead of a table")
	fs.DurationVar(&t.timeout, "timeout", 2*time.Minute, "give up after this long")
}

// parseTool parses flags that may come before or after the positional
// arguments (`wal inspect t 0 --config c` as well as `--config c t 0`).
func parseTool(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
}

// parseLoad parses a reading tool's flags and loads the connector they
// name; false means exitUsage, the reason said on stderr after name.
func (t *toolFlags) parseLoad(name string, fs *flag.FlagSet, args []string, stderr io.Writer) (*configs.Connector, bool) {
	if _, err := parseTool(fs, args); err != nil {
		return nil, false
	}
	c, err := t.load()
	if err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return nil, false
	}
	return c, true
}

// show prints a tool's report: as JSON with --json, else as table does.
func show[T any](w io.Writer, asJSON bool, rep T, table func(io.Writer, T)) {
	if asJSON {
		printJSON(w, rep)
		return
	}
	table(w, rep)
}

// load loads the config and picks the connector the flags name.
func (t *toolFlags) load() (*configs.Connector, error) {
	if t.cf.Config == "" {
		return nil, fmt.Errorf("--config is required")
	}
	conns, redact, err := loadConnectors(t.cf)
	if err != nil {
		return nil, errors.New(redact.Text(err.Error()))
	}
	return pickConnector(conns, t.connector)
}

// loadConnectors is how every tool reads the worker and connector files:
// as run does, refused where run would refuse them. The Redactor hides
// their secrets in whatever the tool prints.
func loadConnectors(cf configFlags) ([]*configs.Connector, *secret.Redactor, error) {
	l, err := cf.Load()
	if err != nil {
		return nil, l.Redact, err
	}
	if err := wiring.CheckWiring(l.Conns, l.Redact); err != nil {
		return nil, l.Redact, err
	}
	return l.Conns, l.Redact, nil
}

// pickConnector is the named connector, or the only one.
func pickConnector(conns []*configs.Connector, name string) (*configs.Connector, error) {
	for _, c := range conns {
		if c.Name == name || (name == "" && len(conns) == 1) {
			return c, nil
		}
	}
	if name == "" {
		return nil, fmt.Errorf("the config holds %d connectors: name one with --connector", len(conns))
	}
	return nil, fmt.Errorf("no connector %q in the config", name)
}

// toolLogger writes the tools' own log lines (warnings) to stderr.
func toolLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// writeSettings are the connector's store paths and partitioner, as the
// daemon wires them: what the tools read and what a repair claims with.
func writeSettings(c *configs.Connector, store storage.FS) (sink.WriteSettings, error) {
	part, err := wiring.OutputPartitioner(c)
	if err != nil {
		return sink.WriteSettings{}, err
	}
	return sink.WriteSettings{FS: store, Partitioner: part, TopicsDir: c.TopicsDir, LogsDir: c.LogsDir, Route: wiring.TopicRoute(c), Now: time.Now}, nil
}

// isDefaultPartitioner reports whether each Kafka partition has one directory.
func isDefaultPartitioner(s sink.WriteSettings) bool {
	_, ok := s.Partitioner.(partitioner.Default)
	return ok
}

// topicPartition parses the positional TOPIC PARTITION.
func topicPartition(pos []string) (string, int32, error) {
	if len(pos) != 2 {
		return "", 0, fmt.Errorf("want TOPIC PARTITION, got %d arguments", len(pos))
	}
	p, err := strconv.ParseInt(pos[1], 10, 32)
	if err != nil || p < 0 {
		return "", 0, fmt.Errorf("partition %q: want an integer >= 0", pos[1])
	}
	return pos[0], int32(p), nil
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// context bounds a tool's work by --timeout.
func (t *toolFlags) context(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, t.timeout)
}

// openToolStore opens a connector's store for a tool (one command, then
// exit) with Kerberos logins of its own, which closing the store ends.
func openToolStore(c *configs.Connector) (storage.FS, error) {
	logins := kerberos.NewLogins(slog.New(slog.DiscardHandler))
	store, err := wiring.OpenStore(c, logins)
	if err != nil {
		logins.Close()
		return nil, err
	}
	return storeWithLogins{store, logins}, nil
}

type storeWithLogins struct {
	storage.FS
	logins *kerberos.Logins
}

func (s storeWithLogins) Close() error {
	err := s.FS.Close()
	s.logins.Close()
	return err
}
