package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
)

// leveled is a logger under fresh levels, root at root, writing every
// level its levels let through to buf.
func leveled(root slog.Level) (*slog.Logger, *logLevels, *bytes.Buffer) {
	var buf bytes.Buffer
	o := withLevels(Options{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.Level(-1 << 30)})), LogLevel: root})
	return o.Logger, o.levels, &buf
}

// TestConnectorLoggerLevels: a connector's logger lets through its
// records (bound with With, or naming the connector themselves) at its own
// level, the others at root's; setting root sets them all.
func TestConnectorLoggerLevels(t *testing.T) {
	log, levels, buf := leveled(slog.LevelInfo)
	if changed, err := levels.set("connector.orders", "debug", []string{"orders", "clicks"}); err != nil || strings.Join(changed, ",") != "connector.orders" {
		t.Fatalf("set: %v %v", changed, err)
	}
	orders := log.With("connector", "orders").With("component", "kafka-client")
	orders.Debug("orders bound debug")
	log.Debug("orders own debug", "connector", "orders")
	log.Debug("clicks debug", "connector", "clicks")
	log.Debug("process debug")
	log.Info("process info")
	log.With("connector", "clicks").Info("clicks info")
	got := buf.String()
	for _, want := range []string{"orders bound debug", "orders own debug", "process info", "clicks info"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q dropped:\n%s", want, got)
		}
	}
	for _, dropped := range []string{"clicks debug", "process debug"} {
		if strings.Contains(got, dropped) {
			t.Errorf("%q let through:\n%s", dropped, got)
		}
	}
	if !orders.Enabled(context.Background(), slog.LevelDebug) || log.With("connector", "clicks").Enabled(context.Background(), slog.LevelDebug) {
		t.Error("Enabled disagrees with the connectors' levels")
	}
	changed, err := levels.set("root", "WARN", []string{"orders", "clicks", "added"})
	if err != nil || strings.Join(changed, ",") != "connector.added,connector.clicks,connector.orders,root" {
		t.Fatalf("set root: %v %v", changed, err)
	}
	buf.Reset()
	orders.Info("orders info after root WARN")
	log.Warn("process warn")
	if got := buf.String(); strings.Contains(got, "orders info") || !strings.Contains(got, "process warn") {
		t.Fatalf("after root WARN:\n%s", got)
	}
}

// TestLoggerNamesAndLevels: what GET /admin/loggers lists, and what PUT
// refuses.
func TestLoggerNamesAndLevels(t *testing.T) {
	_, levels, _ := leveled(slog.LevelDebug - 4)
	all := levels.loggers([]string{"orders"})
	if len(all) != 2 || all["root"].Level != "TRACE" || all["connector.orders"].Level != "TRACE" || all["root"].LastModified != nil {
		t.Fatalf("loggers %+v", all)
	}
	if _, err := levels.set("connector.later", "ERROR", nil); err != nil {
		t.Fatal(err)
	}
	if l := levels.loggers(nil)["connector.later"]; l.Level != "ERROR" || l.LastModified == nil {
		t.Fatalf("a connector logger set before its connector is added: %+v", l)
	}
	var le *rest.LevelError
	for _, tt := range []struct {
		logger, level string
		want          func(error) bool
	}{
		{"root", "LOUD", func(err error) bool { return errors.As(err, &le) && le.Level == "LOUD" }},
		{"org.apache.kafka", "INFO", func(err error) bool { return errors.Is(err, rest.ErrNoLogger) }},
		{"connector.", "INFO", func(err error) bool { return errors.Is(err, rest.ErrNoLogger) }},
	} {
		if _, err := levels.set(tt.logger, tt.level, nil); !tt.want(err) {
			t.Errorf("set %s %s: %v", tt.logger, tt.level, err)
		}
	}
	for name, want := range map[string]slog.Level{"OFF": 1 << 30, "FATAL": slog.LevelError + 4, "ALL": -1 << 30, "info": slog.LevelInfo} {
		if _, err := levels.set("root", name, nil); err != nil || levels.view.Load().root != want {
			t.Errorf("level %s: %v, root at %v", name, err, levels.view.Load().root)
		}
	}
}

// TestRootLevelFromTheLogger: without LogLevel, root starts at the lowest
// level the given logger lets through, so an embedding program's logger
// keeps its level.
func TestRootLevelFromTheLogger(t *testing.T) {
	o := withLevels(Options{Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if got := o.levels.loggers(nil)["root"].Level; got != "WARN" {
		t.Fatalf("root %s, want WARN", got)
	}
	if withLevels(o).levels != o.levels {
		t.Fatal("the logger was put under levels twice")
	}
}
