package sink

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// producedSeqs produces records with seq from..to-1 to partition 0.
func (k *kafkaFixture) producedSeqs(from, to int64) {
	var recs []*kgo.Record
	for seq := from; seq < to; seq++ {
		recs = append(recs, k.good(0, seq))
	}
	k.produce(recs...)
}

// headEntryRefusal is the refusal the WAL head of partition 0 carries.
func headRefusal(t *testing.T, k *kafkaFixture) string {
	t.Helper()
	log := wal.Open(k.fs, "/logs/"+testTopic+"/0")
	seqs, err := log.Segments(t.Context())
	if err != nil || len(seqs) == 0 {
		t.Fatalf("WAL segments: %v %v", seqs, err)
	}
	e, err := log.Read(t.Context(), seqs[len(seqs)-1])
	if err != nil {
		t.Fatal(err)
	}
	return e.Refused
}

// checkOldTopicOnly checks that the store holds offsets 0-349 exactly once
// and nothing else: nothing of a re-created topic was written.
func checkOldTopicOnly(t *testing.T, k *kafkaFixture) {
	t.Helper()
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 350}, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}

// TestRecreatedTopicWithLongerLogIsRefused (N1): the connector is stopped,
// the topic is deleted and re-created, and its new log grows past the old
// committed offset before the connector starts again. Its offsets are "in
// range", so only the topic id tells that they are another topic's: the
// partition is refused (counted, in Health, in the WAL head), nothing is
// written; after the runbook (old files moved aside, a reset to 0) every
// record of the new topic lands once.
func TestRecreatedTopicWithLongerLogIsRefused(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	k.producedSeqs(0, 350)
	first := start(t, k.config("n1"))
	waitFor(t, "350 committed", func() bool { return committedRecords(k.fs) == 350 })
	first.stop()
	if _, ok := first.wait(30 * time.Second); !ok {
		t.Fatal("connector did not stop")
	}
	recreateTopic(t, k)
	k.producedSeqs(0, 600)

	second := start(t, k.config("n1"))
	waitFor(t, "the re-created topic refused", func() bool { return second.Stats.Rewinds.Load() > 0 })
	waitFor(t, "the refusal in the WAL", func() bool { return headRefusal(t, k) != "" })
	time.Sleep(300 * time.Millisecond) // room for a wrong write to show
	checkOldTopicOnly(t, k)
	if got := second.Stats.Records.Load(); got != 0 {
		t.Fatalf("Stats.Records = %d; nothing of the re-created topic may be written", got)
	}
	pr, ok := second.Health().Broken[testTopic+"/0"]
	if !ok || !strings.Contains(pr.Err, "re-created") {
		t.Fatalf("Health = %+v; want the partition broken because the topic was re-created", second.Health())
	}

	runbookReset(t, k, 0)
	waitFor(t, "the new topic committed", func() bool { return committedRecords(k.fs) == 600 })
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 600}, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}

// runbookReset is docs/operations.md's way out: the old topic's files are
// moved out of topics.dir, then the partition is reset to next.
func runbookReset(t *testing.T, k *kafkaFixture, next int64) {
	t.Helper()
	mem := k.fs.(*storagetest.MemFS)
	if err := mem.Rename(t.Context(), "/topics/"+testTopic, "/archive-"+testTopic); err != nil {
		t.Fatal(err)
	}
	cfg := k.config("n1")
	if err := ResetOffset(context.Background(), cfg.WriteSettings, Reset{Connector: "n1", Topic: testTopic, Partition: 0, Next: next}, testLogger()); err != nil {
		t.Fatal(err)
	}
}

// TestRecreatedTopicUnderRunningConnectorIsRefused (N1, running): the topic
// is re-created under a running connector and its new log passes the old
// committed offset before the connector follows it: refused all the same.
func TestRecreatedTopicUnderRunningConnectorIsRefused(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	k.producedSeqs(0, 350)
	cfg := k.config("n1")
	cfg.KafkaOpts = append(cfg.KafkaOpts, kgo.MetadataMaxAge(time.Second), kgo.MetadataMinAge(100*time.Millisecond))
	c := start(t, cfg)
	waitFor(t, "350 committed", func() bool { return committedRecords(k.fs) == 350 })
	recreateTopic(t, k)
	k.producedSeqs(0, 600)
	waitFor(t, "the re-created topic refused", func() bool { return c.Stats.Rewinds.Load() > 0 })
	time.Sleep(300 * time.Millisecond)
	checkOldTopicOnly(t, k)
}

// TestRefusalOutlivesTheLogGrowing (N2): after a rewind is refused, the
// re-created topic's log grows past the committed offset. The partition
// must not resume on its own, in this process or another: only the
// operator's reset lifts the refusal.
func TestRefusalOutlivesTheLogGrowing(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	k.producedSeqs(0, 350)
	cfg := k.config("n1")
	cfg.KafkaOpts = append(cfg.KafkaOpts, kgo.MetadataMaxAge(time.Second), kgo.MetadataMinAge(100*time.Millisecond))
	c := start(t, cfg)
	waitFor(t, "350 committed", func() bool { return committedRecords(k.fs) == 350 })
	recreateTopic(t, k)
	k.producedSeqs(0, 100) // a shorter log: a rewind
	waitFor(t, "the refusal in the WAL", func() bool { return headRefusal(t, k) != "" })
	k.producedSeqs(100, 600) // now past the old committed offset
	// Several checks of the WAL head (every 6 retry backoffs: 600 ms).
	time.Sleep(2 * time.Second)
	checkOldTopicOnly(t, k)

	c.stop()
	if _, ok := c.wait(30 * time.Second); !ok {
		t.Fatal("connector did not stop")
	}
	again := start(t, k.config("n1"))
	waitFor(t, "the next owner recovered", func() bool { return again.Stats.Recoveries.Load() > 0 })
	time.Sleep(time.Second)
	checkOldTopicOnly(t, k)
	if _, ok := again.Health().Broken[testTopic+"/0"]; !ok {
		t.Fatalf("a new process resumed a refused partition: %+v", again.Health())
	}

	runbookReset(t, k, 0)
	waitFor(t, "the new topic committed", func() bool { return committedRecords(k.fs) == 600 })
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 600}, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}

// TestTruncationBelowCommittedIsRefused: franz-go reports a log that
// diverged (by leader epoch) at or below the committed offset: the
// partition is refused, and the refusal is published by the next claim.
// Above the committed offset only uncommitted records are gone: no
// refusal, and the partition resumes after what HDFS holds.
func TestTruncationBelowCommittedIsRefused(t *testing.T) {
	ctx := context.Background()
	f, _, p := ownerAfterHistory(t, 100)
	if err := p.truncated(120); err == nil || isRefusal(err) {
		t.Fatalf("divergence past the committed offset = %v; want an error that is no refusal", err)
	}
	if next, err := p.resume(ctx, nil); err != nil || next != 100 {
		t.Fatalf("after a divergence past the committed offset, resume = %d, %v; want 100", next, err)
	}
	var te *TruncatedError
	if err := p.truncated(60); !errors.As(err, &te) || te.DivergeAt != 60 {
		t.Fatalf("divergence below the committed offset = %v; want a TruncatedError (a refusal)", err)
	}
	var refused *RefusedError
	if _, err := p.resume(ctx, nil); !errors.As(err, &refused) {
		t.Fatalf("resume after the refusal = %v; want a RefusedError", err)
	}
	if _, err := f.partition(nil).resume(ctx, nil); !errors.As(err, &refused) {
		t.Fatalf("another owner's resume = %v; want the refusal it finds in the WAL", err)
	}
}

// TestRefusalIsPublishedOnlyOverOwnSegment: an owner that found a refusal
// publishes it only while its own segment is the head. When an operator
// reset the partition in between, the reset decides.
func TestRefusalIsPublishedOnlyOverOwnSegment(t *testing.T) {
	ctx := context.Background()
	_, mem, p := ownerAfterHistory(t, 100)
	_ = p.beginBatch(batchOf(0, 9)) // a rewind: refused, not yet published
	runbook(t, mem, p, 0)
	if next, err := p.resume(ctx, nil); err != nil || next != -1 {
		t.Fatalf("resume after the operator's reset = %d, %v; want -1 (nothing committed), no refusal", next, err)
	}
}

// TestConnectorsSharingAWALAreRefused (m6 across processes): a second
// connector whose logs.dir holds the first one's WAL for a topic refuses
// the partition before publishing anything, wherever it runs; a renamed
// connector takes the partition over with a reset that says so.
func TestConnectorsSharingAWALAreRefused(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, storagetest.NewMemFS())
	a := f.partition(nil)
	a.cfg.Connector = "orders-a"
	if err := f.run(a, 100); err != nil {
		t.Fatal(err)
	}
	seqs, _ := a.log.Segments(t.Context())
	b := f.partition(nil)
	b.cfg.Connector = "orders-b"
	var oe *OverlapError
	if _, err := b.resume(ctx, nil); !errors.As(err, &oe) || oe.Owner != "orders-a" {
		t.Fatalf("second connector's resume = %v; want an OverlapError naming orders-a", err)
	}
	if after, _ := a.log.Segments(t.Context()); len(after) != len(seqs) {
		t.Fatalf("the refused connector published: segments %v -> %v", seqs, after)
	}
	s := b.cfg.WriteSettings
	s.TopicsDir, s.LogsDir = func(string) string { return "/topics" }, func(string) string { return "/logs" }
	if err := ResetOffset(ctx, s, Reset{Connector: "orders-b", Topic: testTopic, KeepCommitted: true}, testLogger()); !errors.As(err, &oe) {
		t.Fatalf("a hand-over without --take-over = %v; want an OverlapError", err)
	}
	if err := ResetOffset(ctx, s, Reset{Connector: "orders-b", Topic: testTopic, KeepCommitted: true, TakeOver: true}, testLogger()); err != nil {
		t.Fatal(err)
	}
	if next, err := b.resume(ctx, nil); err != nil || next != 100 {
		t.Fatalf("after the hand-over, resume = %d, %v; want 100", next, err)
	}
	if _, err := a.resume(ctx, nil); !errors.As(err, &oe) {
		t.Fatalf("the old name's resume after the hand-over = %v; want an OverlapError", err)
	}
}

// TestRewindRefusalNeedsAReset (N2, in the partition): once a rewind is
// refused, no recovery resumes the partition, whatever Kafka's log does
// meanwhile, until an operator's reset; the reset's offset then decides.
func TestRewindRefusalNeedsAReset(t *testing.T) {
	ctx := context.Background()
	f, mem, p := ownerAfterHistory(t, 100)
	var re *RewindError
	if err := p.beginBatch(batchOf(0, 9)); !errors.As(err, &re) {
		t.Fatalf("beginBatch below the committed offset = %v; want a RewindError", err)
	}
	var refused *RefusedError
	for i := range 3 {
		if next, err := p.resume(ctx, nil); !errors.As(err, &refused) {
			t.Fatalf("recovery %d after the refusal = %d, %v; want a RefusedError", i, next, err)
		}
	}
	if next, err := f.partition(nil).resume(ctx, nil); !errors.As(err, &refused) {
		t.Fatalf("another owner's recovery = %d, %v; want the refusal", next, err)
	}
	runbook(t, mem, p, 40)
	if next, err := p.resume(ctx, nil); err != nil || next != 40 {
		t.Fatalf("after a reset to 40, resume = %d, %v", next, err)
	}
}

// TestRetriesShareTopicWalks (m7, retries): partitions without a WAL that
// broke together (a store outage) and are retried in one round walk the
// topic directory once, not once each.
func TestRetriesShareTopicWalks(t *testing.T) {
	k := newKafkaFixture(t, 4, testTopic)
	ofs := newOpFS(k.fs)
	walks := 0
	ofs.before = func(_ int, op, name string) {
		if op == "readdir" && name == "/topics/"+testTopic {
			walks++
		}
	}
	cfg := k.config("walks")
	cfg.FS, cfg.Partitioner = ofs, sweepCases(t)[2].part
	// The client joins its group in the background: subscribed to the
	// test's topic, its own assignment would recover (and walk) too.
	cfg.Topics = []string{"unrelated"}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for part := int32(0); part < 4; part++ {
		o := c.newOwned(tp{testTopic, part})
		o.broken, o.retryAt = errors.New("namenode in safe mode"), time.Now().Add(-time.Second)
		c.parts.put(o)
	}
	c.retryBroken(context.Background(), context.Background())
	for _, o := range c.parts.all() {
		if o.broken != nil {
			t.Fatalf("partition %d not recovered: %v", o.partition, o.broken)
		}
	}
	if walks != 1 {
		t.Fatalf("the topic directory was walked %d times for 4 partitions retried together", walks)
	}
}

// TestVersion1WALKeepsWorking: a WAL written before version 2 (no topic
// id, no epoch, no connector) is recovered from; the first batch's topic id
// is adopted and recorded by the next commit, in version 2.
func TestVersion1WALKeepsWorking(t *testing.T) {
	f := newFixture(t, storagetest.NewMemFS())
	old := wal.Open(f.fs, "/logs/"+testTopic+"/0")
	legacy := entry.Entry{Kind: entry.KindClaim, Epoch: "old", Owner: "h:1", Topic: testTopic, CommittedOffset: -1, LeaderEpoch: -1, Legacy: true}
	if err := old.Publish(t.Context(), 1, legacy); err != nil {
		t.Fatal(err)
	}
	f.topicID = [16]byte{7}
	p := f.partition(nil)
	p.cfg.Connector = "c"
	if err := f.run(p, 50); err != nil {
		t.Fatal(err)
	}
	seqs, _ := old.Segments(t.Context())
	head, err := old.Read(t.Context(), seqs[len(seqs)-1])
	if err != nil {
		t.Fatal(err)
	}
	if head.Legacy || head.TopicID != f.topicID || head.Connector != "c" || head.CommittedOffset != 49 || head.LeaderEpoch != 0 {
		t.Fatalf("head after the first commit = %+v; want version 2 with the adopted topic id and the connector", head)
	}
	f.check(50)
}

// ownerAfterHistory is a store where one owner committed offsets 0 to n-1,
// and a second owner that has recovered the partition.
func ownerAfterHistory(t *testing.T, n int64) (*fixture, *storagetest.MemFS, *partition) {
	t.Helper()
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	if err := f.run(f.partition(nil), n); err != nil {
		t.Fatal(err)
	}
	p := f.partition(nil)
	if _, err := p.resume(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return f, mem, p
}

// runbook moves the committed files aside and resets the partition to next,
// as docs/operations.md says after a refusal.
func runbook(t *testing.T, mem *storagetest.MemFS, p *partition, next int64) {
	t.Helper()
	if err := mem.Rename(t.Context(), "/topics/"+testTopic, "/archive"); err != nil {
		t.Fatal(err)
	}
	s := p.cfg.WriteSettings
	s.TopicsDir, s.LogsDir = func(string) string { return "/topics" }, func(string) string { return "/logs" }
	if err := ResetOffset(context.Background(), s, Reset{Topic: testTopic, Next: next}, testLogger()); err != nil {
		t.Fatal(err)
	}
}
