package kafkaclient

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Logger makes franz-go log through log, so that a failing handshake or a
// broker refusing the client shows in the daemon's log. franz-go's debug
// level (several lines per request) is never enabled: its info, warnings
// and errors are what an operator needs.
func Logger(log *slog.Logger) kgo.Logger { return slogLogger{log.With("component", "kafka-client")} }

type slogLogger struct{ log *slog.Logger }

func (l slogLogger) Level() kgo.LogLevel {
	for _, lv := range []struct {
		kgo  kgo.LogLevel
		slog slog.Level
	}{{kgo.LogLevelInfo, slog.LevelInfo}, {kgo.LogLevelWarn, slog.LevelWarn}, {kgo.LogLevelError, slog.LevelError}} {
		if l.log.Enabled(context.Background(), lv.slog) {
			return lv.kgo
		}
	}
	return kgo.LogLevelNone
}

func (l slogLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelInfo
	switch level {
	case kgo.LogLevelError:
		lv = slog.LevelError
	case kgo.LogLevelWarn:
		lv = slog.LevelWarn
	case kgo.LogLevelDebug:
		lv = slog.LevelDebug
	}
	l.log.Log(context.Background(), lv, msg, keyvals...)
}
