package sink

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// refusingRegistry answers its first lookup with a failure that the client
// does not retry and that is not the record's fault (an HTTP 400 from a
// proxy in between), then delegates. (A 401 or 403 is a refusal of the
// credentials, which stops the connector: refusal_test.go.)
type refusingRegistry struct {
	schema.Registry
	refused atomic.Bool
}

func (r *refusingRegistry) SchemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	if r.refused.CompareAndSwap(false, true) {
		return nil, &registry.Error{ID: id, URL: "http://registry", Status: 400, Message: "bad request"}
	}
	return r.Registry.SchemaByID(ctx, id)
}

// TestRegistryRefusalOnFreshPartitionLosesNothing (F5, with kfake): the very
// first batch of a partition HDFS knows nothing of fails on the registry;
// the batch is fetched again, and later commits cannot skip it.
func TestRegistryRefusalOnFreshPartitionLosesNothing(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	var recs []*kgo.Record
	for seq := int64(0); seq < 300; seq++ {
		recs = append(recs, k.good(0, seq))
	}
	k.produce(recs...)
	cfg := k.config("refused")
	cfg.Registry = &refusingRegistry{Registry: k.reg}
	start(t, cfg)
	waitFor(t, "300 committed", func() bool { return committedRecords(k.fs) == 300 })
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 300}, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}

// TestRecreatedTopicStopsThePartition (F6, with kfake): the topic is deleted
// and re-created under a running connector, so its offsets restart below
// what HDFS holds. The partition stops with a RewindError; nothing of the
// new topic is written and no committed file is replaced.
func TestRecreatedTopicStopsThePartition(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	var recs []*kgo.Record
	for seq := int64(0); seq < 350; seq++ {
		recs = append(recs, k.good(0, seq))
	}
	k.produce(recs...)
	cfg := k.config("recreated")
	cfg.KafkaOpts = append(cfg.KafkaOpts, kgo.MetadataMaxAge(time.Second), kgo.MetadataMinAge(100*time.Millisecond))
	c := start(t, cfg)
	waitFor(t, "350 committed", func() bool { return committedRecords(k.fs) == 350 })
	recreateTopic(t, k)
	k.produce(recs[:200]...)
	waitFor(t, "the rewind refused", func() bool { return c.Stats.Rewinds.Load() > 0 })
	time.Sleep(500 * time.Millisecond) // room for a wrong write to show
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 350}, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
	if got := c.Stats.Records.Load(); got != 350 {
		t.Fatalf("Stats.Records = %d; the re-created topic's records must not count as written", got)
	}
}

func recreateTopic(t *testing.T, k *kafkaFixture) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.DeleteTopics(ctx, testTopic); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "topic created again", func() bool {
		resp, err := adm.CreateTopics(ctx, 1, 1, nil, testTopic)
		return err == nil && resp[testTopic].Err == nil
	})
}

// TestFailedRecoveryAtAssignmentKeepsStartPolicy (m5): when recovery fails
// at assignment and then finds nothing committed, consumption starts where
// consumer.auto.offset.reset says, not at the log start.
func TestFailedRecoveryAtAssignmentKeepsStartPolicy(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	mem := k.fs.(*storagetest.MemFS)
	var old []*kgo.Record
	for seq := int64(0); seq < 10; seq++ {
		old = append(old, k.good(0, seq))
	}
	k.produce(old...)
	mem.FailNext(storagetest.OpReadDir, storagetest.PathContains("/logs/"), errors.New("namenode in safe mode"))
	cfg := k.config("latest")
	cfg.StartAtEnd = true
	c := start(t, cfg)
	waitFor(t, "the partition recovered", func() bool { return c.Stats.Recoveries.Load() >= 2 })
	time.Sleep(300 * time.Millisecond)
	var fresh []*kgo.Record
	for seq := int64(10); seq < 15; seq++ {
		fresh = append(fresh, k.good(0, seq))
	}
	k.produce(fresh...)
	waitFor(t, "the new records committed", func() bool { return committedRecords(k.fs) >= 5 })
	time.Sleep(500 * time.Millisecond)
	if n := committedRecords(k.fs); n != 5 {
		t.Fatalf("%d records committed; with consumer.auto.offset.reset=latest only the 5 produced after the start belong", n)
	}
}
