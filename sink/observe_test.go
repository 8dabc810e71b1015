package sink

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// recorder is an Observer that keeps what it heard.
type recorder struct {
	mu       sync.Mutex
	states   map[State]int
	steps    map[CommitStep]int
	written  int
	commits  []Commit
	released int
	bad      map[BadRecordOutcome]int
}

func newRecorder() *recorder {
	return &recorder{states: map[State]int{}, steps: map[CommitStep]int{}, bad: map[BadRecordOutcome]int{}}
}

func (r *recorder) do(f func()) { r.mu.Lock(); defer r.mu.Unlock(); f() }

func (r *recorder) Partition(string, int32) PartitionObserver { return recPartition{r} }
func (r *recorder) BadRecord(_ string, _ int32, o BadRecordOutcome) {
	r.do(func() { r.bad[o]++ })
}
func (r *recorder) DeadLetterFailed(string, error) {}
func (r *recorder) Tombstone(string, int32)        {}

type recPartition struct{ r *recorder }

func (p recPartition) Entered(s State) { p.r.do(func() { p.r.states[s]++ }) }
func (p recPartition) Written(n int)   { p.r.do(func() { p.r.written += n }) }
func (p recPartition) LogEnd(int64)    {}
func (p recPartition) Committed(c Commit) {
	p.r.do(func() { p.r.commits = append(p.r.commits, c) })
}
func (p recPartition) CommitStep(s CommitStep, _ time.Duration) { p.r.do(func() { p.r.steps[s]++ }) }
func (p recPartition) Recovered(int64, error)                   {}
func (p recPartition) Broken(error)                             {}
func (p recPartition) Fenced()                                  {}
func (p recPartition) MemoryRotation()                          {}
func (p recPartition) Buffered(int64, int)                      {}
func (p recPartition) Released()                                { p.r.do(func() { p.r.released++ }) }

func (r *recorder) writtenNow() (n int) { r.do(func() { n = r.written }); return n }

// TestObserverHearsStatesStepsCommitsAndRelease: the observer hears every
// state of both machines, each commit step, each commit with its records,
// and the release of each partition when the connector stops.
func TestObserverHearsStatesStepsCommitsAndRelease(t *testing.T) {
	k := newKafkaFixture(t, 2, testTopic)
	rec := newRecorder()
	cfg := k.config("observed")
	cfg.Observer = rec
	for seq := int64(0); seq < 120; seq++ {
		k.produce(k.good(int32(seq%2), seq/2))
	}
	r := start(t, cfg)
	waitFor(t, "all committed", func() bool { return committedRecords(k.fs) == 120 })
	r.stop()
	if _, ok := r.wait(30 * time.Second); !ok {
		t.Fatal("connector did not stop")
	}
	rec.do(func() {
		for s := RecoveryStarted; s <= FileCommitted; s++ {
			if rec.states[s] == 0 {
				t.Errorf("state %s never observed", s)
			}
		}
		var n int64
		for _, c := range rec.commits {
			n += c.Records
			if c.Files < 1 || c.Bytes <= 0 || c.Next <= 0 {
				t.Errorf("commit %+v: want files, bytes and the next offset", c)
			}
		}
		if n != 120 || rec.written != 120 {
			t.Errorf("observed %d records committed and %d written, want 120 and 120", n, rec.written)
		}
		for _, s := range []CommitStep{StepClose, StepPublish, StepRename} {
			if rec.steps[s] != len(rec.commits) {
				t.Errorf("step %s timed %d times for %d commits", s, rec.steps[s], len(rec.commits))
			}
		}
		if rec.released != 2 {
			t.Errorf("%d partitions released at stop, want 2", rec.released)
		}
	})
}

// TestPauseStopsFetchingAndCommitting: once paused, nothing more is written
// or committed, even with records waiting and rotate.interval.ms passing;
// after Resume every record is committed exactly once.
func TestPauseStopsFetchingAndCommitting(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	rec := newRecorder()
	cfg := k.config("paused")
	cfg.Observer = rec
	for seq := int64(0); seq < 30; seq++ {
		k.produce(k.good(0, seq))
	}
	r := start(t, cfg)
	waitFor(t, "the first records committed", func() bool { return committedRecords(k.fs) == 30 })
	r.Pause()
	waitFor(t, "the poll loop paused", r.Paused)
	written := rec.writtenNow()
	for seq := int64(30); seq < 80; seq++ {
		k.produce(k.good(0, seq))
	}
	time.Sleep(time.Second) // several ticks and rotation intervals
	if got := committedRecords(k.fs); got != 30 {
		t.Fatalf("%d records committed while paused, want 30", got)
	}
	if got := rec.writtenNow(); got != written {
		t.Fatalf("%d records written while paused", got-written)
	}
	r.Resume()
	waitFor(t, "all committed after resume", func() bool { return committedRecords(k.fs) == 80 })
	if r.Paused() {
		t.Fatal("still reported paused after Resume")
	}
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 80}, SeqField: "seq"}); err != nil {
		t.Fatalf("exactly once after pause and resume: %v", err)
	}
}

// panicFS panics on the first rename to a committed name: a bug deep in a
// partition worker.
type panicFS struct {
	storage.FS
	once sync.Once
}

func (f *panicFS) Rename(ctx context.Context, oldpath, newpath string) error {
	if strings.HasPrefix(newpath, "/topics/") && !strings.Contains(newpath, "+tmp") {
		f.once.Do(func() { panic("injected: rename") })
	}
	return f.FS.Rename(ctx, oldpath, newpath)
}

// TestPanicInPartitionWorkerFailsTheConnector: a panic in a partition
// worker goroutine does not kill the process: Run returns it as a
// *PanicError with its stack, having closed its client, and a new
// connector then commits every record exactly once.
func TestPanicInPartitionWorkerFailsTheConnector(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	cfg := k.config("panicky")
	cfg.FS = &panicFS{FS: k.fs}
	for seq := int64(0); seq < 20; seq++ {
		k.produce(k.good(0, seq))
	}
	r := start(t, cfg)
	err, ok := r.wait(30 * time.Second)
	var perr *PanicError
	if !ok || !errors.As(err, &perr) || !strings.Contains(string(perr.Stack), "Rename") {
		t.Fatalf("Run = %v (returned %v), want a *PanicError with the stack of the rename", err, ok)
	}
	cfg.FS = k.fs
	r2 := start(t, cfg)
	waitFor(t, "committed by the next connector", func() bool { return committedRecords(k.fs) == 20 })
	r2.stop()
	r2.wait(30 * time.Second)
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 20}, SeqField: "seq"}); err != nil {
		t.Fatalf("exactly once after a panic: %v", err)
	}
}

// slowRenameFS counts the renames to committed names in flight at once.
type slowRenameFS struct {
	storage.FS
	mu            sync.Mutex
	inFlight, max int
	slow          bool
}

func (f *slowRenameFS) Rename(ctx context.Context, oldpath, newpath string) error {
	f.mu.Lock()
	slow := f.slow && strings.HasPrefix(newpath, "/topics/") && !strings.Contains(newpath, "+tmp")
	if slow {
		f.inFlight++
		f.max = max(f.max, f.inFlight)
	}
	f.mu.Unlock()
	if slow {
		time.Sleep(50 * time.Millisecond)
		defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	}
	return f.FS.Rename(ctx, oldpath, newpath)
}

// TestShutdownCommitsPartitionsInParallel: at shutdown the open files of
// all partitions are committed together, not one partition after another
// (with hundreds of partitions the tail would be abandoned to recovery).
func TestShutdownCommitsPartitionsInParallel(t *testing.T) {
	k := newKafkaFixture(t, 8, testTopic)
	fs := &slowRenameFS{FS: k.fs}
	cfg := k.config("parallel")
	cfg.FS, cfg.RotateInterval = fs, 0
	for seq := int64(0); seq < 80; seq++ {
		k.produce(k.good(int32(seq%8), seq/8))
	}
	r := start(t, cfg)
	// flush.size is 100 and no timer rotates: every record is in an open file.
	waitFor(t, "every record written", func() bool { return r.Stats.Records.Load() == 80 })
	fs.mu.Lock()
	fs.slow = true
	fs.mu.Unlock()
	r.stop()
	r.wait(30 * time.Second)
	if got := committedRecords(k.fs); got != 80 {
		t.Fatalf("%d records committed at shutdown, want 80", got)
	}
	if fs.max < 2 {
		t.Fatalf("at most %d partition committed at once during shutdown, want several", fs.max)
	}
}
