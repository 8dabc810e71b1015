//go:build integration

package exactlyonce

import (
	"context"
	"os/exec"
	"path"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
)

// TestFrozenRecovererIsHarmless: a daemon freezes (SIGSTOP, by the
// fault-injection switch) inside recovery, right after publishing its claim
// and before cleaning up; a second daemon takes the partitions over and
// commits; then the first is thawed and finishes its recovery. Its late
// cleanup must not touch the newer owner's files (audit F1): every offset
// is on HDFS exactly once.
func TestFrozenRecovererIsHarmless(t *testing.T) {
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	// Time-based rotation commits whatever a partition holds, wherever the
	// rebalances after the thaw leave it: the final count does not depend
	// on how the partitions end up split.
	cfg := s.connector("frozen-recoverer", map[string]string{"flush.size": "300", "rotate.interval.ms": "2000"})
	first := s.start(cfg)
	s.produce(counts, 1000)
	s.waitCommitted(600, time.Minute)
	first.signal(syscall.SIGKILL)
	first.wait(10 * time.Second)
	frozen := s.start(cfg, "HDFS_SINK_FREEZE_AT=WAL_APPLIED")
	waitLog(t, frozen, "fault injection: SIGSTOP at WAL_APPLIED", time.Minute)
	owner := s.start(cfg)
	s.produce(counts, 1000)
	// The frozen daemon's session (6 s) expires; the owner recovers and
	// commits on its own, and holds a partly written file when the frozen
	// one wakes.
	s.waitCommitted(1800, 2*time.Minute)
	s.produce(counts, 200)
	time.Sleep(500 * time.Millisecond) // the owner holds these in open files
	frozen.signal(syscall.SIGCONT)
	time.Sleep(8 * time.Second) // the thawed daemon cleans up late, then finds itself fenced or its partitions gone
	s.produce(counts, 600)
	s.waitCommitted(total(counts), 2*time.Minute)
	owner.stop()
	frozen.stop()
	s.check(counts)
}

// TestRecreatedTopicUnderRunningDaemon (audit F6): the topic is deleted and
// re-created while the daemon runs, so Kafka's offsets restart below what
// HDFS holds. The partition stops, loudly, and nothing is written over the
// committed files; after the documented way out (move the old files aside,
// `hdfs-sink offsets reset`), the new topic's records land exactly once.
func TestRecreatedTopicUnderRunningDaemon(t *testing.T) {
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	cfg := s.connector("recreated", map[string]string{"flush.size": "100", "rotate.interval.ms": "1000"})
	d := s.start(cfg)
	s.produce(counts, 350)
	s.waitCommitted(350, time.Minute)
	recreate(t, s.topic, 1)
	fresh := map[int32]int64{}
	s.produce(fresh, 200)
	waitLog(t, d, "Kafka's offsets went below what HDFS holds: HDFS has committed up to offset 349", 2*time.Minute)
	s.check(counts) // the 350 old records, untouched; none of the new ones
	old := path.Join(s.base, "old-topics")
	if err := s.fs.MkdirAll(old); err != nil {
		t.Fatal(err)
	}
	if err := s.fs.Rename(path.Join(s.topicsDir(), s.topic), path.Join(old, s.topic)); err != nil {
		t.Fatal(err)
	}
	reset := exec.Command(binary(t), "offsets", "reset", "--config", cfg, "--topic", s.topic, "--partition", "0", "--to", "0")
	if out, err := reset.CombinedOutput(); err != nil {
		t.Fatalf("offsets reset: %v\n%s", err, out)
	}
	s.waitCommitted(200, 3*time.Minute)
	d.stop()
	s.check(fresh)
	if _, err := verify.Check(s.fs, verify.Options{TopicsDir: old, Topic: s.topic, Want: counts, SeqField: "seq"}); err != nil {
		t.Fatalf("the old topic's files, moved aside: %v", err)
	}
}

// recreate deletes topic and creates it again with as many partitions.
func recreate(t *testing.T, topic string, parts int32) {
	t.Helper()
	adm := kadm.NewClient(itest.KafkaClient(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := adm.DeleteTopics(ctx, topic); err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
	for ctx.Err() == nil {
		resp, err := adm.CreateTopic(ctx, parts, 1, nil, topic)
		if err == nil && resp.Err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("topic %s was not created again within a minute", topic)
}
