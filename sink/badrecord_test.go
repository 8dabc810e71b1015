package sink

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDeadLetterHeadersOnlyWhenEnabled: errors.deadletterqueue.context.headers.enable
// is false by default in Connect; then the dead-lettered record keeps its
// own headers and gets none of Connect's.
func TestDeadLetterHeadersOnlyWhenEnabled(t *testing.T) {
	const dlq = "orders-dlq"
	k := newKafkaFixture(t, 1, testTopic, dlq)
	k.produce(k.good(0, 0), &kgo.Record{Partition: 0, Value: []byte("plain text"),
		Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte("app-1")}}})
	cfg := k.config("plain-dlq")
	cfg.Tolerance, cfg.DLQTopic = ToleranceAll, dlq
	start(t, cfg)
	got := consumeAll(t, k, dlq, 1)
	h := headers(got[0])
	if len(got[0].Headers) != 1 || h["origin"] != "app-1" {
		t.Fatalf("DLQ record headers = %v, want only the record's own", h)
	}
}

// TestDeadLetterTopicCreatedWhenMissing: like Connect, the sink creates a
// missing dead-letter topic (one partition, the configured replication
// factor) instead of retrying a produce to a topic that does not exist.
func TestDeadLetterTopicCreatedWhenMissing(t *testing.T) {
	const dlq = "created-dlq"
	k := newKafkaFixture(t, 1, testTopic)
	k.produce(k.good(0, 0), &kgo.Record{Partition: 0, Value: []byte("plain text")})
	cfg := k.config("creates-dlq")
	cfg.Tolerance, cfg.DLQTopic, cfg.DLQReplication = ToleranceAll, dlq, 1
	c := start(t, cfg)
	waitFor(t, "the bad record dead-lettered", func() bool { return c.Stats.DeadLettered.Load() == 1 })
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	topics, err := kadm.NewClient(cl).ListTopics(ctx, dlq)
	if err != nil || topics[dlq].Err != nil || len(topics[dlq].Partitions) != 1 {
		t.Fatalf("dead-letter topic: %v %+v", err, topics[dlq])
	}
	if got := consumeAll(t, k, dlq, 1); string(got[0].Value) != "plain text" {
		t.Fatalf("DLQ record %q", got[0].Value)
	}
}

// logBuffer collects log lines for the assertions below.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) lines(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), substr)
}

// TestBadRecordLogging: errors.log.enable=false logs the first tolerated
// bad record once and counts the rest; true logs each, and
// errors.log.include.messages adds the record's key and value.
func TestBadRecordLogging(t *testing.T) {
	for _, tc := range []struct {
		name            string
		enable, content bool
		lines           int
		value           bool
	}{
		{"off: the first only", false, false, 1, false},
		{"on: each", true, false, 3, false},
		{"on with messages", true, true, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKafkaFixture(t, 1, testTopic)
			var bad []*kgo.Record
			for range 3 {
				bad = append(bad, &kgo.Record{Partition: 0, Key: []byte("k1"), Value: []byte("secret-free payload")})
			}
			k.produce(bad...)
			var logs logBuffer
			cfg := k.config("logging")
			cfg.Tolerance, cfg.LogBadRecords, cfg.LogRecordContent = ToleranceAll, tc.enable, tc.content
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			c := start(t, cfg)
			waitFor(t, "3 bad records counted", func() bool { return c.Stats.DeadLettered.Load() == 3 })
			if n := logs.lines("bad record skipped"); n != tc.lines {
				t.Fatalf("%d log lines of bad records, want %d", n, tc.lines)
			}
			if got := logs.lines(`value="\"secret-free payload\""`) > 0; got != tc.value {
				t.Fatalf("record value logged = %v, want %v", got, tc.value)
			}
		})
	}
}

// TestDeadLetterTopicThatCannotBeCreated: a replication factor the cluster
// cannot have stops the connector with the broker's reason, as in Connect,
// instead of retrying the bad record for ever.
func TestDeadLetterTopicThatCannotBeCreated(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	k.produce(&kgo.Record{Partition: 0, Value: []byte("plain text")})
	cfg := k.config("rf3")
	cfg.Tolerance, cfg.DLQTopic, cfg.DLQReplication = ToleranceAll, "rf3-dlq", 3
	err, stopped := start(t, cfg).wait(30 * time.Second)
	if !stopped || err == nil || !strings.Contains(err.Error(), "create dead-letter topic rf3-dlq (replication factor 3") {
		t.Fatalf("stopped=%v err=%v", stopped, err)
	}
}
