package wiring

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// logWithGap is a kfake cluster whose topic "orders" partition 0 holds
// offsets 3 to 9 (0-2 deleted, as retention would), and partition 1 none.
func logWithGap(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"), kfake.ClusterID("kc-test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	for range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 3})
	if _, err := kadm.NewClient(cl).DeleteRecords(ctx, o); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestResetChecks: a reset is refused for a topic the connector does not
// consume, a partition the topic does not have, and an offset outside the
// log (both ends allowed); Kafka that cannot be asked is an error, not a
// refusal.
func TestResetChecks(t *testing.T) {
	cluster := logWithGap(t)
	dir := t.TempDir()
	listed := conftest.Connector(t, dir, "orders", map[string]string{"bootstrap.servers": cluster.ListenAddrs()[0]})
	byRegex := conftest.Connector(t, dir, "byregex", map[string]string{"topics": "", "topics.regex": "ord.*", "bootstrap.servers": cluster.ListenAddrs()[0]})
	admin, err := NewKafkaAdmin(listed, nil, slog.New(slog.DiscardHandler), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, tt := range []struct {
		name   string
		topic  string
		p      int32
		next   int64
		refuse string // "": allowed
	}{
		{"log start", "orders", 0, 3, ""},
		{"log end", "orders", 0, 10, ""},
		{"inside", "orders", 0, 7, ""},
		{"empty partition at its end", "orders", 1, 0, ""},
		{"below the log start", "orders", 0, 2, `connector "orders" topic orders partition 0: offset 2 is below the log start 3 (the log holds offsets 3 to 9)`},
		{"past the log end", "orders", 0, 11, "offset 11 is past the log end 10"},
		{"past an empty log", "orders", 1, 5, "offset 5 is past the log end 0 (the log holds no records; its next offset is 0)"},
		{"no such partition", "orders", 7, 0, "has no such partition (the topic has 2)"},
		{"another topic", "payments", 0, 0, "the connector does not consume this topic: its topics are orders"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckConsumes(listed, tt.topic, tt.p)
			if err == nil {
				_, err = CheckInLog(context.Background(), admin, tt.topic, tt.p, tt.next)
			}
			var re *ResetRefusedError
			switch {
			case tt.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.refuse != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), tt.refuse)):
				t.Fatalf("%v, want a refusal saying %q", err, tt.refuse)
			}
		})
	}
	if err := CheckConsumes(byRegex, "payments", 0); err == nil || !strings.Contains(err.Error(), "does not match topics.regex ord.*") {
		t.Fatalf("a topic outside topics.regex: %v", err)
	}
	if err := CheckConsumes(byRegex, "orders", 0); err != nil {
		t.Fatalf("a topic topics.regex matches: %v", err)
	}
	if id, err := admin.ClusterID(context.Background()); err != nil || id != "kc-test" {
		t.Fatalf("cluster id %q, %v", id, err)
	}
}

// TestResetCheckWithKafkaDown: no broker answers; the check says it could
// not look, and is not taken for a refusal.
func TestResetCheckWithKafkaDown(t *testing.T) {
	c := conftest.Connector(t, t.TempDir(), "orders", nil) // bootstrap.servers 127.0.0.1:1
	admin, err := NewKafkaAdmin(c, nil, slog.New(slog.DiscardHandler), "test", kgo.RetryTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = CheckInLog(ctx, admin, "orders", 0, 5)
	var re *ResetRefusedError
	if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "cannot check offset 5 against the log of topic orders partition 0: Kafka at 127.0.0.1:1") {
		t.Fatalf("%v", err)
	}
}
