package sink

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

// kafkaHealth hears from franz-go of every broker connection, request and
// group error. While brokers are unreachable or hung, franz-go retries by
// itself and polls just come back empty: without this, a dead broker made
// the daemon silent (no error logged, nothing in GET /status).
type kafkaHealth struct {
	streak health.Streak
	log    *slog.Logger
	now    func() time.Time
	after  time.Duration // kafkaReportAfter; shorter in tests
}

// kafkaReportAfter is how long failures must last before they are logged
// as an outage: brokers close idle connections, and a retried request that
// then succeeds is not worth an error line.
const kafkaReportAfter = 10 * time.Second

var (
	_ kgo.HookBrokerConnect    = (*kafkaHealth)(nil)
	_ kgo.HookBrokerE2E        = (*kafkaHealth)(nil)
	_ kgo.HookGroupManageError = (*kafkaHealth)(nil)
)

// OnBrokerConnect notes dial failures (a broker down or cut off).
func (k *kafkaHealth) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		k.fail(meta, err)
	}
}

// OnBrokerE2E notes each request's outcome: a success ends the streak.
func (k *kafkaHealth) OnBrokerE2E(meta kgo.BrokerMetadata, _ int16, e kgo.BrokerE2E) {
	if err := e.Err(); err != nil {
		k.fail(meta, err)
		return
	}
	if lasted, reported := k.streak.OK(k.now()); reported {
		k.log.Info("Kafka reachable again", "down_for", lasted.Round(time.Second))
	}
}

// OnGroupManageError notes a failed join, sync or heartbeat.
func (k *kafkaHealth) OnGroupManageError(err error) { k.fail(kgo.BrokerMetadata{NodeID: -1}, err) }

func (k *kafkaHealth) fail(meta kgo.BrokerMetadata, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed) {
		return // our own cancellations and shutdown
	}
	if lasted := k.streak.Fail(err, k.now()); lasted >= k.after && k.streak.Report() {
		attrs := []any{"for", lasted.Round(time.Second), "err", err}
		if meta.Host != "" {
			attrs = append(attrs, "broker", net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))))
		}
		k.log.Error("Kafka unreachable; consuming resumes by itself once it answers", attrs...)
	}
}

// Problem is the outage under way, if it has lasted long enough to count.
func (k *kafkaHealth) problem() *Problem {
	since, err := k.streak.Down()
	if err == nil || k.now().Sub(since) < k.after {
		return nil
	}
	return &Problem{Err: err.Error(), Since: since}
}
