// Package kafkawatch hears from franz-go of every broker connection,
// request and group error, and keeps Kafka's failure streak: while brokers
// are unreachable or hung, franz-go retries by itself and polls just come
// back empty, so without it a dead broker made the daemon silent (no error
// logged, nothing in GET /status). sink installs a Watch as the client's
// hooks and reports its Down in Health.
package kafkawatch

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/health"
)

// Watch is one client's hooks (kgo.WithHooks) and the streak they keep.
type Watch struct {
	streak health.Streak
	log    *slog.Logger
	now    func() time.Time
	// After is how long failures must last before they count as an
	// outage (ReportAfter; shorter in tests).
	After time.Duration
}

// ReportAfter is how long failures must last before they are logged as an
// outage: brokers close idle connections, and a retried request that then
// succeeds is not worth an error line.
const ReportAfter = 10 * time.Second

var (
	_ kgo.HookBrokerConnect    = (*Watch)(nil)
	_ kgo.HookBrokerE2E        = (*Watch)(nil)
	_ kgo.HookGroupManageError = (*Watch)(nil)
)

// New is a watch that logs to log and reads the time from now.
func New(log *slog.Logger, now func() time.Time) *Watch {
	return &Watch{log: log, now: now, After: ReportAfter}
}

// OnBrokerConnect notes dial failures (a broker down or cut off).
func (k *Watch) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		k.fail(meta, err)
	}
}

// OnBrokerE2E notes each request's outcome: a success ends the streak.
func (k *Watch) OnBrokerE2E(meta kgo.BrokerMetadata, _ int16, e kgo.BrokerE2E) {
	if err := e.Err(); err != nil {
		k.fail(meta, err)
		return
	}
	if lasted, reported := k.streak.OK(k.now()); reported {
		k.log.Info("Kafka reachable again", "down_for", lasted.Round(time.Second))
	}
}

// OnGroupManageError notes a failed join, sync or heartbeat.
func (k *Watch) OnGroupManageError(err error) { k.fail(kgo.BrokerMetadata{NodeID: -1}, err) }

func (k *Watch) fail(meta kgo.BrokerMetadata, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed) {
		return // our own cancellations and shutdown
	}
	if lasted := k.streak.Fail(err, k.now()); lasted >= k.After && k.streak.Report() {
		attrs := []any{"for", lasted.Round(time.Second), "err", err}
		if meta.Host != "" {
			attrs = append(attrs, "broker", net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))))
		}
		k.log.Error("Kafka unreachable; consuming resumes by itself once it answers", attrs...)
	}
}

// Down is the outage under way, since when and its last error, if it has
// lasted long enough to count; a nil error otherwise.
func (k *Watch) Down() (since time.Time, err error) {
	since, err = k.streak.Down()
	if err == nil || k.now().Sub(since) < k.After {
		return time.Time{}, nil
	}
	return since, err
}
