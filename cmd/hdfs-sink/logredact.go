package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// redactHandler hides secrets in every log record: the message and each
// attribute, errors included (a client library's error may quote a URL
// with credentials or a password). Its redactor is set once the
// configuration is loaded; before, only URL user info is hidden.
type redactHandler struct {
	inner slog.Handler
	r     *atomic.Pointer[secret.Redactor]
}

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	red := h.r.Load()
	out := slog.NewRecord(rec.Time, rec.Level, red.Text(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(red, a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := h.r.Load()
	for i, a := range attrs {
		attrs[i] = redactAttr(red, a)
	}
	return redactHandler{inner: h.inner.WithAttrs(attrs), r: h.r}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{inner: h.inner.WithGroup(name), r: h.r}
}

// redactAttr hides secrets in a: strings and anything printed as text
// (errors, Stringers) are rewritten only when they held a secret, so that
// other values keep their type in JSON logs.
func redactAttr(red *secret.Redactor, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, red.Text(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = redactAttr(red, g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		s := fmt.Sprint(v.Any())
		if r := red.Text(s); r != s {
			return slog.String(a.Key, r)
		}
	}
	return a
}

// logFlags are shared by the commands that log.
type logFlags struct {
	level, format string
	redact        *atomic.Pointer[secret.Redactor] // set by logger, filled by hide
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.level, "log-level", "info", "debug shows every state transition")
	fs.StringVar(&l.format, "log-format", "text", "text or json")
}

func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	lvl, err := l.parsedLevel()
	if err != nil {
		return nil, err
	}
	return l.loggerAt(w, lvl)
}

// daemonLogger is the daemon's logger, which lets every level through:
// the daemon filters by the levels of its loggers (GET/PUT
// /admin/loggers), the root one starting at --log-level, returned.
func (l *logFlags) daemonLogger(w io.Writer) (*slog.Logger, slog.Level, error) {
	lvl, err := l.parsedLevel()
	if err != nil {
		return nil, lvl, err
	}
	log, err := l.loggerAt(w, slog.Level(-1<<30))
	return log, lvl, err
}

func (l *logFlags) parsedLevel() (slog.Level, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.level)); err != nil {
		return lvl, fmt.Errorf("--log-level %q: want debug, info, warn or error", l.level)
	}
	return lvl, nil
}

func (l *logFlags) loggerAt(w io.Writer, lvl slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch l.format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", l.format)
	}
	l.redact = new(atomic.Pointer[secret.Redactor])
	return slog.New(redactHandler{inner: h, r: l.redact}), nil
}

// hide makes the loggers of l hide r's secrets from now on.
func (l *logFlags) hide(r *secret.Redactor) {
	if l.redact != nil {
		l.redact.Store(r)
	}
}
