//go:build integration

package exactlyonce

import (
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

// Test100kRecordsFourPartitions: the throughput path on real services.
func Test100kRecordsFourPartitions(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 4)
	counts := map[int32]int64{}
	s.produce(counts, 100_000)
	d := s.start(s.connector("bulk", map[string]string{"flush.size": "10000", "avro.codec": "snappy"}))
	s.waitCommitted(100_000, 5*time.Minute)
	d.stop()
	rep := s.check(counts)
	t.Logf("%d records in %d files on HDFS", rep.Records, len(rep.Files))
}

// crashes reports whether the process died of SIGKILL.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// TestCrashAtEveryState kills the daemon with SIGKILL (fault injection) on
// entering each state of both machines, restarts it, and checks HDFS.
func TestCrashAtEveryState(t *testing.T) {
	t.Parallel()
	for st := sink.RecoveryStarted; st <= sink.FileCommitted; st++ {
		hit := 1
		if st >= sink.ShouldRotate {
			hit = 2 // the second rotation: with one commit already behind it
		}
		t.Run(st.String(), func(t *testing.T) {
			s := newSetup(t, 2)
			counts := map[int32]int64{}
			s.produce(counts, 1500)
			cfg := s.connector("crash", nil)
			d := s.start(cfg, fmt.Sprintf("HDFS_SINK_CRASH_AT=%s:%d", st, hit))
			err, exited := d.wait(2 * time.Minute)
			if !exited || !killedBySIGKILL(err) {
				t.Fatalf("daemon did not die at %s#%d (exited=%v err=%v)", st, hit, exited, err)
			}
			s.produce(counts, 500)
			d2 := s.start(cfg)
			s.waitCommitted(total(counts), 2*time.Minute)
			d2.stop()
			s.check(counts)
		})
	}
}

// TestRandomKills SIGKILLs the daemon at 20 random moments while data flows.
func TestRandomKills(t *testing.T) {
	t.Parallel()
	randomKills(t, 20, map[string]string{"flush.size": "200", "rotate.interval.ms": "1000"})
}

// TestRandomKillsParquet: the same with Parquet, whose writer holds a whole
// row group in memory until the file is closed.
func TestRandomKillsParquet(t *testing.T) {
	t.Parallel()
	randomKills(t, 10, map[string]string{"flush.size": "200", "rotate.interval.ms": "1000",
		"format.class": "io.confluent.connect.hdfs.parquet.ParquetFormat"})
}

func randomKills(t *testing.T, kills int, config map[string]string) {
	s := newSetup(t, 3)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	counts := map[int32]int64{}
	cfg := s.connector("random", config)
	for range kills {
		s.produce(counts, 600)
		d := s.start(cfg)
		time.Sleep(time.Duration(500+rng.Intn(4000)) * time.Millisecond)
		d.signal(syscall.SIGKILL)
		d.wait(30 * time.Second)
	}
	d := s.start(cfg)
	s.waitCommitted(total(counts), 3*time.Minute)
	d.stop()
	rep := s.check(counts)
	t.Logf("after %d kills: %d records in %d files", kills, rep.Records, len(rep.Files))
}

// TestRebalanceTwoDaemons: the second daemon joins mid-stream, the first
// leaves later; data flows throughout.
func TestRebalanceTwoDaemons(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 4)
	counts := map[int32]int64{}
	cfg := s.connector("rebalance", map[string]string{"flush.size": "300", "rotate.interval.ms": "1000"})
	a := s.start(cfg)
	s.produce(counts, 2000)
	time.Sleep(3 * time.Second)
	b := s.start(cfg)
	for i := 0; i < 5; i++ {
		s.produce(counts, 800)
		time.Sleep(time.Second)
	}
	a.stop()
	for i := 0; i < 3; i++ {
		s.produce(counts, 800)
		time.Sleep(time.Second)
	}
	s.waitCommitted(total(counts), 2*time.Minute)
	b.stop()
	s.check(counts)
}

// TestFrozenOwnerIsFenced: the owner is frozen (SIGSTOP) past the session
// timeout holding open files, its partitions move to a second daemon, then it
// is thawed: it must not commit what the new owner re-read.
func TestFrozenOwnerIsFenced(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	// No time-based rotation: the frozen owner holds open files for sure.
	cfg := s.connector("fence", map[string]string{"flush.size": "400", "rotate.interval.ms": "-1"})
	a := s.start(cfg)
	s.produce(counts, 1000) // 500 per partition: one commit each, 100 held open
	s.waitCommitted(800, time.Minute)
	a.signal(syscall.SIGSTOP)
	b := s.start(cfg)
	s.produce(counts, 1000)
	// b owns everything once a's session (6 s) expires; it commits up to 800
	// per partition (two files of 400) on its own.
	s.waitCommitted(1600, 2*time.Minute)
	a.signal(syscall.SIGCONT)
	time.Sleep(8 * time.Second) // a wakes, finds itself fenced or its partitions lost
	s.produce(counts, 400)
	time.Sleep(5 * time.Second) // let whoever owns each partition now consume the rest
	// SIGTERM commits open files: after both stop, every offset is on HDFS.
	b.stop()
	a.stop()
	s.check(counts)
	if !a.logContains("fenced") && !a.logContains("partitions lost") && !a.logContains("partitions revoked") {
		t.Fatalf("the thawed owner neither was fenced nor lost its partitions:\n%s", tail(a.log, 40))
	}
}

// TestBadInputStopsWithToleranceNone: the daemon stops the connector with an
// error naming topic, partition and offset, and, told not to restart it,
// exits 1 (its only connector failed).
func TestBadInputStopsWithToleranceNone(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	s.produce(counts, 10)
	s.produceRaw(0, []byte("not avro at all"))
	d := s.startWith(s.connector("strict", nil), []string{"--restart-max-attempts", "0"})
	err, exited := d.wait(time.Minute)
	if !exited {
		t.Fatal("daemon kept running after a bad record with errors.tolerance=none")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want status 1", err)
	}
	want := fmt.Sprintf("bad record at topic %s partition 0 offset 10", s.topic)
	if !d.logContains(want) {
		t.Fatalf("log does not say %q:\n%s", want, tail(d.log, 20))
	}
}

// TestBadInputGoesToDLQWithToleranceAll: the bad records land in the
// dead-letter topic with Connect's error headers; good ones are committed.
func TestBadInputGoesToDLQWithToleranceAll(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	dlq := s.dlqTopic()
	counts := map[int32]int64{}
	s.produce(counts, 10)
	s.produceRaw(0, []byte("not avro at all"))
	s.produceRaw(0, append([]byte{0, 0, 0, 0x7f, 0x7f}, 1, 2, 3)) // unknown schema id
	d := s.start(s.connector("tolerant", map[string]string{
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq, "rotate.interval.ms": "1000",
		"errors.deadletterqueue.context.headers.enable": "true",
	}))
	s.waitCommitted(10, time.Minute)
	recs := s.consume(dlq, 2)
	for i, r := range recs {
		h := map[string]string{}
		for _, kv := range r.Headers {
			h[kv.Key] = string(kv.Value)
		}
		if h["__connect.errors.topic"] != s.topic || h["__connect.errors.offset"] != fmt.Sprint(10+i) || h["__connect.errors.exception.message"] == "" {
			t.Fatalf("DLQ record %d headers %v", i, h)
		}
	}
	d.stop()
}
