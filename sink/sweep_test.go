package sink

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// The sweeps try every storage call of the commit and recovery paths as a
// crash point or a freeze point, and check exactly-once after each run.
// `go test ./sink` runs a sample (every sweepStride-th point); `make sweep`
// passes -sweep.full and tries all of them (docs/design.md §10 has the
// figures of its last run).
var sweepFull = flag.Bool("sweep.full", false, "run the crash and zombie sweeps over every storage call, not a sample")

const sweepStride = 5

// stride is how far apart the sampled points of a sweep are.
func stride() int {
	if *sweepFull {
		return 1
	}
	return sweepStride
}

// sweepCase is one configuration the sweeps run under.
type sweepCase struct {
	name  string
	part  partitioner.Partitioner // nil: default
	prune uint64
	// dlq mixes schema versions so that some records are bad (BACKWARD):
	// each offset must end in exactly one of the store and the
	// dead-letter topic, wherever the crashes fall (issue 20, N4).
	dlq bool
}

func sweepCases(t *testing.T) []sweepCase {
	hourly, err := partitioner.New(partitioner.Config{Kind: partitioner.KindHourly, Locale: "en", Location: time.UTC, Extractor: partitioner.RecordTime})
	if err != nil {
		t.Fatal(err)
	}
	return []sweepCase{
		{name: "default/prune1", prune: 1},
		{name: "default/prune8", prune: 8},
		{name: "hourly/prune1", part: hourly, prune: 1},
		{name: "default/prune1/dead-letters", prune: 1, dlq: true},
	}
}

// sweepFixture is a fresh store with a history: an owner has committed
// offsets 0-39 (two commits with flush.size 20) and left.
func sweepFixture(t *testing.T, c sweepCase) (*fixture, *storagetest.MemFS) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	f.part, f.pruneEvery, f.flushSize = c.part, c.prune, 20
	if c.dlq {
		f.mixed, f.dlq = newMixedSchemas(t, f.reg), newDeadLetters()
	}
	if err := f.run(f.owner(mem, "history", nil), 40); err != nil {
		t.Fatal(err)
	}
	return f, mem
}

// run is one owner's life: recover, write from where it resumes up to n in
// batches of 25 (committing every flush.size on the way), then commit the
// tail as a graceful release does.
func (f *fixture) run(p *partition, n int64) error {
	ctx := context.Background()
	next, err := p.resume(ctx, nil)
	if err != nil {
		return err
	}
	for off := max(next, 0); off < n; off += 25 {
		last := min(off+25, n) - 1
		b := batchOf(off, last)
		b.TopicID = f.topicID
		if err := p.beginBatch(b); err != nil {
			return err
		}
		for o := off; o <= last; o++ {
			if err := f.writeOrDeadLetter(ctx, p, o); err != nil {
				return err
			}
		}
		if err := p.endBatch(ctx); err != nil {
			return err
		}
	}
	return p.commitNow(ctx, "released")
}

// runUntilCrash is run, reporting whether a hook crashed the owner.
func (f *fixture) runUntilCrash(p *partition, n int64) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	_ = f.run(p, n) // errors are part of what a crashing owner may meet
	return false
}

// crashAt arms o to crash just before (after=false) or just after call n.
func crashAt(o *opFS, n int, after bool) *opFS {
	hook := func(k int, _, _ string) {
		if k == n {
			panic(crash{})
		}
	}
	if after {
		o.after = hook
	} else {
		o.before = hook
	}
	return o
}

// exactlyOnce checks the store after a sweep run without failing the test,
// so one sweep reports every violating point.
func (f *fixture) exactlyOnce(n int64) error {
	if f.dlq != nil {
		return f.exactlyOnceOrDeadLettered(n)
	}
	rep, err := verify.Check(context.Background(), f.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: n}, SeqField: "seq"})
	if err == nil && len(rep.TempFiles) > 0 {
		err = fmt.Errorf("temp files left after a clean finish: %v", rep.TempFiles)
	}
	return err
}

// sweepTally counts runs and violations and reports the first few.
type sweepTally struct {
	t                *testing.T
	runs, violations int
}

func (s *sweepTally) record(err error, point string) {
	s.runs++
	if err == nil {
		return
	}
	s.violations++
	if s.violations <= 10 {
		s.t.Errorf("%s: %v", point, err)
	}
}

func (s *sweepTally) report(what string) {
	s.t.Logf("%s: %d runs, %d violations", what, s.runs, s.violations)
}

// TestCrashSweep crashes an owner before and after each of its storage
// calls (recovery, writes, commits), and, for each of those, the next
// owner's recovery and commits again before and after each of its calls;
// a third owner finishes. Every run must end exactly once.
func TestCrashSweep(t *testing.T) {
	for _, c := range sweepCases(t) {
		t.Run(c.name, func(t *testing.T) {
			tally := &sweepTally{t: t}
			for k := 1; ; k += stride() {
				if !crashPoint(t, c, k, tally) {
					break
				}
			}
			tally.report("crash sweep " + c.name)
		})
	}
}

// crashPoint runs the sweep's runs for the first crash at call k; false
// when the owner makes fewer than k calls.
func crashPoint(t *testing.T, c sweepCase, k int, tally *sweepTally) bool {
	for _, after := range []bool{false, true} {
		f, mem := sweepFixture(t, c)
		if !f.runUntilCrash(f.owner(crashAt(newOpFS(mem), k, after), "A", nil), 100) {
			return false
		}
		mem.Crash()
		tally.record(finish(f, mem), fmt.Sprintf("crash at call %d (after=%v)", k, after))
		for m := 1; ; m += stride() {
			if !secondCrash(t, c, k, after, m, tally) {
				break
			}
		}
	}
	return true
}

// secondCrash repeats a first crash at k, then crashes the recovering
// owner at its call m, before and after; false when it makes fewer.
func secondCrash(t *testing.T, c sweepCase, k int, afterK bool, m int, tally *sweepTally) bool {
	for _, after := range []bool{false, true} {
		f, mem := sweepFixture(t, c)
		f.runUntilCrash(f.owner(crashAt(newOpFS(mem), k, afterK), "A", nil), 100)
		mem.Crash()
		if !f.runUntilCrash(f.owner(crashAt(newOpFS(mem), m, after), "B", nil), 130) {
			return false
		}
		mem.Crash()
		tally.record(finish(f, mem), fmt.Sprintf("crash at call %d (after=%v), then at call %d (after=%v)", k, afterK, m, after))
	}
	return true
}

// finish lets a last owner write everything up to 200 and checks the store.
func finish(f *fixture, mem *storagetest.MemFS) error {
	if err := f.run(f.owner(mem, "last", nil), 200); err != nil {
		return fmt.Errorf("last owner: %w", err)
	}
	return f.exactlyOnce(200)
}

// freeze stops an owner just before its call at, until thawed.
type freeze struct {
	at      int
	reached chan struct{}
	thaw    chan struct{}
}

func freezeAt(o *opFS, at int) *freeze {
	z := &freeze{at: at, reached: make(chan struct{}), thaw: make(chan struct{})}
	o.before = func(n int, _, _ string) {
		if n == z.at {
			close(z.reached)
			<-z.thaw
		}
	}
	return z
}

// goRun runs an owner on its own goroutine; the channel says when it is done.
func (f *fixture) goRun(p *partition, n int64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f.run(p, n) }()
	return done
}

// frozen waits until the owner froze (true) or finished without reaching
// the freeze point (false).
func frozen(t *testing.T, z *freeze, done <-chan error) (bool, error) {
	select {
	case <-z.reached:
		return true, nil
	case err := <-done:
		return false, err
	case <-time.After(10 * time.Second):
		t.Fatalf("owner neither froze at call %d nor finished", z.at)
	}
	return false, nil
}

func waitDone(t *testing.T, done <-chan error, who string) {
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not finish after thawing", who)
	}
}

// TestZombieSweep freezes owner Z before its i-th storage call while owner
// C runs until just before its j-th; then Z thaws and runs to its end, C
// goes on, and a last owner finishes. Every (i, j) must end exactly once.
// In the "same process" cases C shares the epoch of the owner before Z: a
// partition reassigned back to the process that wrote the WAL head.
func TestZombieSweep(t *testing.T) {
	for _, c := range sweepCases(t) {
		for _, sameEpoch := range []bool{false, true} {
			name := c.name
			if sameEpoch {
				name += "/same-process"
			}
			t.Run(name, func(t *testing.T) {
				tally := &sweepTally{t: t}
				for i := 1; zombieRow(t, c, sameEpoch, i, tally); i += stride() {
				}
				tally.report("zombie sweep " + name)
			})
		}
	}
}

// zombieRow runs every j for a zombie frozen at its call i; false when Z
// makes fewer than i calls.
func zombieRow(t *testing.T, c sweepCase, sameEpoch bool, i int, tally *sweepTally) bool {
	for j := 1; ; j += stride() {
		zReached, cReached := zombieRun(t, c, sameEpoch, i, j, tally)
		if !zReached {
			return false
		}
		if !cReached {
			return true
		}
	}
}

// zombieRun is one interleaving; it reports whether Z and C reached their
// freeze points (a run where either did not is still checked).
func zombieRun(t *testing.T, c sweepCase, sameEpoch bool, i, j int, tally *sweepTally) (zReached, cReached bool) {
	f, mem := sweepFixture(t, c)
	zfs := newOpFS(mem)
	z := freezeAt(zfs, i)
	zDone := f.goRun(f.owner(zfs, "Z", nil), 100)
	if zReached, _ = frozen(t, z, zDone); !zReached {
		return false, false
	}
	epoch := "C"
	if sameEpoch {
		epoch = "history"
	}
	cfs := newOpFS(mem)
	cz := freezeAt(cfs, j)
	cDone := f.goRun(f.owner(cfs, epoch, nil), 140)
	cReached, _ = frozen(t, cz, cDone)
	close(z.thaw)
	waitDone(t, zDone, "zombie")
	if cReached {
		close(cz.thaw)
		waitDone(t, cDone, "owner")
	}
	tally.record(finish(f, mem), fmt.Sprintf("zombie frozen before call %d, owner before call %d", i, j))
	return true, cReached
}
