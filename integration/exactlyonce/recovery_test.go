//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"os/exec"
	"path"
	"strings"
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
	t.Parallel()
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

// TestRecreatedTopic (audit F6, issue 20's N1 and N2): the topic is deleted
// and re-created, with a new log shorter or longer than what HDFS holds,
// while the daemon runs or while it is stopped. Every case is refused,
// loudly, and nothing is written over the committed files or in place of
// the new records below the old committed offset; the refusal outlives the
// new log growing past the old committed offset (N2). After the documented
// way out (move the old files aside, `hdfs-sink offsets reset`), the new
// topic's records land exactly once.
func TestRecreatedTopic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		stopped bool // the daemon is stopped while the topic is re-created and refilled
		fresh   int  // records of the new topic before the daemon meets it (old: 350)
	}{
		{"RunningShorterLog", false, 200},
		{"RunningLongerLog", false, 600},
		{"StoppedLongerLog", true, 600},
		{"StoppedShorterLog", true, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 1)
			counts := map[int32]int64{}
			// A short retry backoff: a refused partition looks at its WAL every
			// 6 backoffs, so the growing log below meets several of those looks.
			cfg := s.connector("recreated", map[string]string{"flush.size": "100", "rotate.interval.ms": "1000", "retry.backoff.ms": "500"})
			d := s.start(cfg)
			s.produce(counts, 350)
			s.waitCommitted(350, time.Minute)
			if tc.stopped {
				d.stop()
			}
			recreate(t, s.topic, 1)
			fresh := map[int32]int64{}
			s.produce(fresh, tc.fresh)
			if tc.stopped {
				d = s.start(cfg)
			}
			waitLog(t, d, "partition refused; waiting for an operator's reset", 2*time.Minute)
			s.check(counts) // the 350 old records, untouched; none of the new ones
			s.produce(fresh, 900-tc.fresh)
			time.Sleep(10 * time.Second) // several looks at the WAL while the new log passes offset 350
			s.check(counts)
			if st := d.status(); !strings.Contains(fmt.Sprint(st), "re-created") && !strings.Contains(fmt.Sprint(st), "below what HDFS holds") {
				t.Errorf("/status does not say why the partition is refused: %v", st)
			}
			old := resetAfterRecreate(t, s, cfg)
			s.waitCommitted(900, 3*time.Minute)
			d.stop()
			s.check(fresh)
			if _, err := verify.Check(t.Context(), s.fs, verify.Options{TopicsDir: old, Topic: s.topic, Want: counts, SeqField: "seq"}); err != nil {
				t.Fatalf("the old topic's files, moved aside: %v", err)
			}
		})
	}
}

// TestTruncatedLogIsRefused (issue 20, KIP-320): while the daemon is
// stopped the partition's log is truncated below what HDFS holds (testenv's
// stand-in for an unclean leader election on a one-broker cluster: the same
// topic and topic id, its segments gone, the leader epoch bumped by the
// restart) and refilled past the old committed offset. Offsets and topic id
// look right; only the leader epoch of the last committed record tells the
// log apart. The partition is refused and writes nothing; after the
// runbook, the new records land exactly once.
func TestTruncatedLogIsRefused(t *testing.T) {
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	cfg := s.connector("truncated", map[string]string{"flush.size": "100", "rotate.interval.ms": "1000", "retry.backoff.ms": "500"})
	d := s.start(cfg)
	s.produce(counts, 350)
	s.waitCommitted(350, time.Minute)
	d.stop()
	startOnCleanup(t, "kafka")
	testenv(t, "truncate-kafka-log", s.topic, "0")
	fresh := map[int32]int64{}
	s.produce(fresh, 600)
	d = s.start(cfg)
	waitLog(t, d, "partition refused; waiting for an operator's reset", 2*time.Minute)
	if !d.logContains("truncated below what HDFS holds") {
		t.Error("the refusal does not say the log was truncated")
	}
	time.Sleep(5 * time.Second) // several looks at the WAL
	s.check(counts)
	old := resetAfterRecreate(t, s, cfg)
	s.waitCommitted(600, 3*time.Minute)
	d.stop()
	s.check(fresh)
	if _, err := verify.Check(t.Context(), s.fs, verify.Options{TopicsDir: old, Topic: s.topic, Want: counts, SeqField: "seq"}); err != nil {
		t.Fatalf("the old log's files, moved aside: %v", err)
	}
}

// resetAfterRecreate is docs/operations.md's runbook: the old topic's files
// are moved out of topics.dir, then `hdfs-sink offsets reset --to 0`. It
// returns where the old files went.
func resetAfterRecreate(t *testing.T, s *setup, cfg string) string {
	t.Helper()
	old := path.Join(s.base, "old-topics")
	if err := s.fs.MkdirAll(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	if err := s.fs.Rename(t.Context(), path.Join(s.topicsDir(), s.topic), path.Join(old, s.topic)); err != nil {
		t.Fatal(err)
	}
	reset := exec.Command(binary(t), "offsets", "reset", "--config", cfg, "--topic", s.topic, "--partition", "0", "--to", "0", "--yes")
	if out, err := reset.CombinedOutput(); err != nil {
		t.Fatalf("offsets reset: %v\n%s", err, out)
	}
	return old
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
