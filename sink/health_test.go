package sink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestBackoffRetriesAServiceAtLeastOnceAMinute: however long the store or
// the registry has been failing, a broken partition tries again within a
// minute, so it writes again at most a minute after the service is back;
// a committed file gone or a name too long for the store backs off to 5
// minutes; a refusal (only an
// operator's reset lifts it) is looked at every 30 s, which costs one WAL
// listing, so that a reset is picked up quickly.
func TestBackoffRetriesAServiceAtLeastOnceAMinute(t *testing.T) {
	c := &Connector{cfg: Config{RetryBackoff: 5 * time.Second}}
	store := errors.New("dial tcp 127.0.0.1:8020: connection refused")
	cases := []struct {
		n    int
		err  error
		want time.Duration
	}{
		{1, store, 5 * time.Second},
		{3, store, 20 * time.Second},
		{5, store, time.Minute},
		{40, store, time.Minute},
		{40, &RewindError{Topic: "t"}, refusedCheckEvery},
		{1, &RefusedError{Topic: "t"}, refusedCheckEvery},
		{40, errCommittedFileMissing, 5 * time.Minute},
		{40, &layout.NameError{Topic: "t"}, 5 * time.Minute},
	}
	for _, tc := range cases {
		if got := c.backoff(tc.n, tc.err); got != tc.want {
			t.Errorf("backoff(%d, %v) = %v, want %v", tc.n, tc.err, got, tc.want)
		}
	}
	slow := &Connector{cfg: Config{RetryBackoff: 2 * time.Minute}}
	if got := slow.backoff(1, store); got != 2*time.Minute {
		t.Errorf("a retry.backoff.ms above a minute is kept: got %v", got)
	}
}

// TestOutageShownInHealth: while the store refuses, the partition is
// reported broken with the error (GET /status shows it); once the store
// works again the report clears and every record is committed once.
func TestOutageShownInHealth(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	mem := k.fs.(*storagetest.MemFS)
	for seq := int64(0); seq < 50; seq++ {
		k.produce(k.good(0, seq))
	}
	boom := errors.New("injected: NameNode in safe mode")
	for i := 0; i < 4; i++ {
		mem.FailNext(storagetest.OpCreate, storagetest.PathContains("+tmp"), boom)
	}
	c := start(t, k.config("health"))
	waitFor(t, "the partition reported broken", func() bool {
		pr, ok := c.Health().Broken[testTopic+"/0"]
		return ok && strings.Contains(pr.Err, "safe mode") && !pr.Since.IsZero()
	})
	waitFor(t, "50 committed", func() bool { return committedRecords(k.fs) == 50 })
	waitFor(t, "the report cleared", func() bool { return len(c.Health().Broken) == 0 })
	if h := c.Health(); h.Assigned != 1 {
		t.Fatalf("Health().Assigned = %d, want 1", h.Assigned)
	}
}

// syncBuffer is a log sink the connector's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestKafkaOutageShownInHealth: with the broker gone, franz-go retries in
// silence; the connector logs the outage and reports it in Health.
func TestKafkaOutageShownInHealth(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	k.produce(k.good(0, 0))
	var logs syncBuffer
	cfg := k.config("kafka-health")
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	cfg.KafkaOpts = append(cfg.KafkaOpts, kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.kafka.After = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "1 committed", func() bool { return committedRecords(k.fs) == 1 })
	if c.Health().Kafka != nil {
		t.Fatal("Kafka reported down while it works")
	}
	k.cluster.Close()
	waitFor(t, "Kafka reported down", func() bool { return c.Health().Kafka != nil })
	waitFor(t, "the outage logged", func() bool { return strings.Contains(logs.String(), "Kafka unreachable") })
}

// stalledRegistry holds lookups of one schema id until release is closed:
// a registry that is down for that id (a new schema, not cached yet).
type stalledRegistry struct {
	schema.Registry
	stalled int32
	release chan struct{}
}

func (r *stalledRegistry) SchemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	if id == r.stalled {
		select {
		case <-r.release:
		case <-ctx.Done():
			return nil, fmt.Errorf("registry unreachable: %w", ctx.Err())
		}
	}
	return r.Registry.SchemaByID(ctx, id)
}

// TestRegistryOutageHoldsOnlyItsPartition: partition 0's records carry a
// schema id the registry cannot serve; partition 1's are known. Partition
// 1 must keep committing meanwhile (a lookup that waited in the poll loop
// held every partition of the connector), and once the registry answers,
// every offset of both is committed exactly once.
func TestRegistryOutageHoldsOnlyItsPartition(t *testing.T) {
	k := newKafkaFixture(t, 2, testTopic)
	v2, err := k.reg.Register(demodata.SchemaV2)
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(0); seq < 20; seq++ {
		v, err := demodata.ValueV2(v2, 0, seq)
		if err != nil {
			t.Fatal(err)
		}
		k.produce(&kgo.Record{Partition: 0, Value: v}, k.good(1, seq))
	}
	reg := &stalledRegistry{Registry: k.reg, stalled: v2, release: make(chan struct{})}
	cfg := k.config("registry-outage")
	cfg.Registry, cfg.SchemaLookupWait = reg, 200*time.Millisecond
	c := start(t, cfg)
	want1 := func(n int64) func() bool {
		return func() bool {
			rep, _ := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic})
			var got int64
			for _, f := range rep.Files {
				if f.Range.Partition == 1 {
					got += f.Records
				}
			}
			return got == n
		}
	}
	waitFor(t, "partition 1 committed while partition 0 waits for the registry", want1(20))
	waitFor(t, "partition 0 reported broken while its schema is unreachable", func() bool {
		pr, broken := c.Health().Broken[testTopic+"/0"]
		return broken && strings.Contains(pr.Err, "registry unreachable")
	})
	close(reg.release)
	waitFor(t, "40 committed", func() bool { return committedRecords(k.fs) == 40 })
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 20, 1: 20}, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}
