package daemon

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
)

// The process's loggers, as GET and PUT /admin/loggers (KIP-495) show and
// set them. There are two kinds:
//
//   - "root": every record of the process;
//   - "connector.<name>": the records of one connector, those logged with
//     its "connector" attribute (its consumer and partitions, its Kafka,
//     registry and Hive clients, its supervisor). Without a level of its
//     own it has root's.
//
// Setting root sets every connector's logger too, as log4j sets the
// loggers below the one named. Levels are log4j's names, mapped onto
// slog's levels (logLevelNames).

// connectorLogger is the logger name of connector name's records.
func connectorLogger(name string) string { return "connector." + name }

// logLevelNames maps log4j's level names onto slog levels: TRACE is below
// DEBUG, FATAL above ERROR (nothing logs there), OFF and ALL the ends.
var logLevelNames = map[string]slog.Level{
	"OFF": slog.Level(1 << 30), "FATAL": slog.LevelError + 4, "ERROR": slog.LevelError, "WARN": slog.LevelWarn,
	"INFO": slog.LevelInfo, "DEBUG": slog.LevelDebug, "TRACE": slog.LevelDebug - 4, "ALL": slog.Level(-1 << 30),
}

// levelName is a slog level as log4j names it (slog's own name for a level
// between two of log4j's).
func levelName(l slog.Level) string {
	for name, v := range logLevelNames {
		if v == l {
			return name
		}
	}
	return l.String()
}

// levelSetting is one logger's level and when the API set it.
type levelSetting struct {
	level    slog.Level
	modified *int64 // Unix milliseconds; nil: never through the API
}

// logLevels are the levels of the process's loggers; levelHandler reads
// an immutable copy of them, without a lock, for every record.
type logLevels struct {
	mu    sync.Mutex
	root  levelSetting
	conns map[string]levelSetting // by connector name, those set through the API
	view  atomic.Pointer[levelView]
}

// levelView is a copy of the levels for the handler.
type levelView struct {
	root  slog.Level
	conns map[string]slog.Level
	min   slog.Level // the lowest level any logger lets through
}

func (v *levelView) of(connector string) slog.Level {
	if l, ok := v.conns[connector]; ok {
		return l
	}
	return v.root
}

// newLogLevels starts with root at root, or, when nil, at the lowest
// level log lets through.
func newLogLevels(root slog.Leveler, log *slog.Logger) *logLevels {
	l := &logLevels{conns: map[string]levelSetting{}}
	if root != nil {
		l.root.level = root.Level()
	} else {
		l.root.level = lowestEnabled(log)
	}
	l.publish()
	return l
}

// lowestEnabled is the lowest of log4j's levels log lets through.
func lowestEnabled(log *slog.Logger) slog.Level {
	for _, name := range []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR"} {
		if log.Enabled(context.Background(), logLevelNames[name]) {
			return logLevelNames[name]
		}
	}
	return logLevelNames["OFF"]
}

// publish gives the handler a copy of the levels; l.mu is held (or l is
// not shared yet).
func (l *logLevels) publish() {
	v := &levelView{root: l.root.level, conns: make(map[string]slog.Level, len(l.conns)), min: l.root.level}
	for name, s := range l.conns {
		v.conns[name] = s.level
		v.min = min(v.min, s.level)
	}
	l.view.Store(v)
}

// handler filters inner's records by these levels.
func (l *logLevels) handler(inner slog.Handler) slog.Handler {
	return levelHandler{inner: inner, levels: l}
}

// loggers are root and the logger of each connector in names or set
// through the API, with their levels.
func (l *logLevels) loggers(names []string) map[string]rest.LoggerLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]rest.LoggerLevel{"root": shown(l.root)}
	for _, n := range names {
		out[connectorLogger(n)] = shown(l.connector(n))
	}
	for n, s := range l.conns {
		out[connectorLogger(n)] = shown(s)
	}
	return out
}

// connector is connector name's setting: its own, else root's level
// (never set through the API itself).
func (l *logLevels) connector(name string) levelSetting {
	if s, ok := l.conns[name]; ok {
		return s
	}
	return levelSetting{level: l.root.level}
}

func shown(s levelSetting) rest.LoggerLevel {
	return rest.LoggerLevel{Level: levelName(s.level), LastModified: s.modified}
}

// set sets logger to level (a log4j name, any case) and returns the
// loggers it changed: root changes the connectors' loggers of names and
// those set before, too.
func (l *logLevels) set(logger, level string, names []string) ([]string, error) {
	lv, ok := logLevelNames[strings.ToUpper(level)]
	if !ok {
		return nil, &rest.LevelError{Level: level}
	}
	conn, isConn := strings.CutPrefix(logger, "connector.")
	if logger != "root" && (!isConn || conn == "") {
		return nil, rest.ErrNoLogger
	}
	now := time.Now().UnixMilli()
	s := levelSetting{level: lv, modified: &now}
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.publish()
	if isConn {
		l.conns[conn] = s
		return []string{logger}, nil
	}
	l.root = s
	changed := []string{"root"}
	seen := map[string]bool{}
	for _, n := range append(append([]string{}, names...), sortedKeys(l.conns)...) {
		if !seen[n] {
			seen[n] = true
			l.conns[n] = s
			changed = append(changed, connectorLogger(n))
		}
	}
	sort.Strings(changed)
	return changed, nil
}

func sortedKeys(m map[string]levelSetting) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// levelHandler lets through the records of inner whose level their
// logger allows: the logger of the connector named by a "connector"
// attribute (bound with With, or the record's own), else root.
type levelHandler struct {
	inner     slog.Handler
	levels    *logLevels
	connector string // bound with With; "": the record's own, if any
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	v := h.levels.view.Load()
	floor := v.min // the record may name any connector
	if h.connector != "" {
		floor = v.of(h.connector)
	}
	return l >= floor && h.inner.Enabled(ctx, l)
}

func (h levelHandler) Handle(ctx context.Context, r slog.Record) error {
	conn := h.connector
	if conn == "" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "connector" {
				conn = a.Value.String()
				return false
			}
			return true
		})
	}
	if r.Level < h.levels.view.Load().of(conn) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	conn := h.connector
	for _, a := range attrs {
		if a.Key == "connector" {
			conn = a.Value.String()
		}
	}
	return levelHandler{inner: h.inner.WithAttrs(attrs), levels: h.levels, connector: conn}
}

func (h levelHandler) WithGroup(name string) slog.Handler {
	return levelHandler{inner: h.inner.WithGroup(name), levels: h.levels, connector: h.connector}
}
