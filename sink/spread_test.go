package sink

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// spreadConnector is a connector (not running) owning parts partitions of
// the test topic, recovered, each with one record in an open file opened
// at the clock's time; rotate.interval.ms is a minute, flush.size far.
func spreadConnector(t *testing.T, parts int32, perPoll int, clock *fakeClock) *Connector {
	t.Helper()
	k := newKafkaFixture(t, 1, testTopic)
	cfg := k.config("spread")
	// The client joins its group in the background: subscribed to the
	// test's topic, its own assignment would recover the partitions too.
	cfg.Topics = []string{"unrelated"}
	cfg.FlushSize, cfg.RotateInterval, cfg.Now, cfg.TimedRotationsPerPoll = 1_000_000, time.Minute, clock.Now, perPoll
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := newFixture(t, k.fs)
	for part := range parts {
		o := c.newOwned(tp{testTopic, part})
		c.parts.put(o)
		writeBatch(t, f, o.p, 0, 1)
	}
	return c
}

// writeBatch writes offsets from..to-1 to p as one fetched batch,
// recovering p first if it has not been.
func writeBatch(t *testing.T, f *fixture, p *partition, from, to int64) {
	t.Helper()
	ctx := context.Background()
	if p.state == 0 {
		if _, err := p.resume(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.beginBatch(batchOf(from, to-1)); err != nil {
		t.Fatal(err)
	}
	for off := from; off < to; off++ {
		if err := p.write(ctx, ctx, f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.endBatch(ctx); err != nil {
		t.Fatal(err)
	}
}

// openPartitions counts the partitions that still hold open files, once
// the commits the polls started off the poll loop have ended (the test is
// the poll loop here).
func openPartitions(c *Connector) int {
	c.settleAll()
	n := 0
	for _, o := range c.parts.all() {
		if !o.p.empty() {
			n++
		}
	}
	return n
}

// TestTimedCommitsPerPollAreBounded: 10 partitions come due in the same
// poll; with a budget of 3 no poll commits more than 3, the others are
// deferred (and counted), and all are committed within ceil(10/3) polls.
func TestTimedCommitsPerPollAreBounded(t *testing.T) {
	const parts, perPoll = 10, 3
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	c := spreadConnector(t, parts, perPoll, clock)
	clock.set(clock.Now().Add(2 * time.Minute))
	ctx := context.Background()
	polls := 0
	for openPartitions(c) > 0 {
		if polls++; polls > (parts+perPoll-1)/perPoll {
			t.Fatalf("%d partitions still open after %d polls with a budget of %d", openPartitions(c), polls-1, perPoll)
		}
		before := c.Stats.Commits.Load()
		if err := c.poll(ctx, ctx, nil); err != nil {
			t.Fatal(err)
		}
		c.settleAll()
		if n := c.Stats.Commits.Load() - before; n > perPoll {
			t.Fatalf("poll %d committed %d time-driven rotations; the budget is %d", polls, n, perPoll)
		}
	}
	if got := c.Stats.DeferredRotations.Load(); got != 7+4+1 {
		t.Errorf("deferred rotations = %d; want 12 (7, 4 and 1 partitions waiting after each poll)", got)
	}
	rep, err := verify.Check(ctx, c.cfg.FS, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: wantOne(parts)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != parts {
		t.Fatalf("%d files for %d partitions", len(rep.Files), parts)
	}
}

func wantOne(parts int32) map[int32]int64 {
	want := map[int32]int64{}
	for p := range parts {
		want[p] = 1
	}
	return want
}

// TestDeferralNeverHoldsForcedCommits: with the poll's budget spent, the
// memory ceiling and a revocation still commit at once: they are not timers.
func TestDeferralNeverHoldsForcedCommits(t *testing.T) {
	const parts = 6
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	c := spreadConnector(t, parts, 1, clock)
	clock.set(clock.Now().Add(2 * time.Minute))
	ctx := context.Background()
	if err := c.poll(ctx, ctx, nil); err != nil {
		t.Fatal(err)
	}
	if open := openPartitions(c); open != parts-1 {
		t.Fatalf("%d partitions open after a poll with a budget of 1; want %d", open, parts-1)
	}
	var revoked int32 = -1
	for _, o := range c.parts.all() {
		if !o.p.empty() {
			revoked = o.partition
			break
		}
	}
	before := c.Stats.Commits.Load()
	c.release(ctx, map[string][]int32{testTopic: {revoked}}, true)
	if n := c.Stats.Commits.Load() - before; n != 1 {
		t.Fatalf("revoking a deferred partition committed %d files; want 1", n)
	}
	c.cfg.MemoryMax = 1 // every open file is over the ceiling
	c.enforceMemory(ctx)
	if open := openPartitions(c); open != 0 {
		t.Fatalf("%d partitions still open after the memory ceiling forced them", open)
	}
	if _, err := verify.Check(ctx, c.cfg.FS, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: wantOne(parts)}); err != nil {
		t.Fatal(err)
	}
}

// TestDeferredPartitionsGoFirst: a partition refused in one poll is owed a
// slot in the next, before partitions that come due later, and the queue
// is served oldest refusal first, so no partition starves while newcomers
// keep coming. Partitions ask in a random order each poll, as the parallel
// workers do.
func TestDeferredPartitionsGoFirst(t *testing.T) {
	const perPoll = 4
	rng := rand.New(rand.NewSource(1))
	s := newSpread(perPoll, func() {})
	firstRefused, committed := map[tp]int{}, map[tp]int{}
	var due []tp
	next := int32(0)
	for poll := 1; poll <= 40; poll++ {
		arrivals := 3 // fewer than the budget: the queue drains
		if poll == 1 {
			arrivals = 20
		}
		for range arrivals {
			due = append(due, tp{testTopic, next})
			next++
		}
		s.begin(func(tp) bool { return true }, false)
		rng.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
		var still []tp
		for _, t := range due {
			if s.take(t) {
				committed[t] = poll
				continue
			}
			if _, ok := firstRefused[t]; !ok {
				firstRefused[t] = poll
			}
			still = append(still, t)
		}
		due = still
	}
	if len(due) > 3 {
		t.Fatalf("%d partitions still waiting after 40 polls", len(due))
	}
	for a, ra := range firstRefused {
		for b, rb := range firstRefused {
			ca, aDone := committed[a]
			cb, bDone := committed[b]
			if ra < rb && bDone && (!aDone || ca > cb) {
				t.Fatalf("%v refused in poll %d committed in poll %d (done %v), after %v refused in poll %d and committed in poll %d",
					a, ra, ca, aDone, b, rb, cb)
			}
		}
	}
}

// TestOwedSlotGoesBackWhenCommittedOtherwise: a partition owed a slot that
// commits for another reason (flush.size, the ceiling, a release) gives
// the slot back to the others of the poll.
func TestOwedSlotGoesBackWhenCommittedOtherwise(t *testing.T) {
	s := newSpread(1, func() {})
	a, b := tp{testTopic, 0}, tp{testTopic, 1}
	live := func(tp) bool { return true }
	s.begin(live, false)
	if !s.take(b) || s.take(a) {
		t.Fatal("the first poll: b takes the only slot, a is refused")
	}
	s.begin(live, false)
	if s.take(b) {
		t.Fatal("the slot of the second poll is owed to a")
	}
	s.forget(a) // a committed on flush.size
	if !s.take(b) {
		t.Fatal("a's owed slot did not go back to the poll")
	}
}

// TestDeferredRotationKeepsWriting: a refused time-driven rotation leaves
// the file open; the records of the next batches go into it, and the
// rotation that finally comes commits them all in one file, once each.
// flush.size, the size limit, a schema change and commitNow (memory
// ceiling, release, shutdown) never ask and are never held.
func TestDeferredRotationKeepsWriting(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	f := newFixture(t, storagetest.NewMemFS())
	p := f.partition(nil)
	allow, asked := false, 0
	p.cfg.FlushSize, p.cfg.RotateInterval, p.cfg.Now = 1_000_000, time.Minute, clock.Now
	p.cfg.MayRotate = func() bool { asked++; return allow }
	writeBatch(t, f, p, 0, 3)
	clock.set(clock.Now().Add(2 * time.Minute))
	writeBatch(t, f, p, 3, 6) // due at offset 3: refused, written into the open file
	if err := p.tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p.committed != -1 || p.empty() {
		t.Fatalf("a refused rotation committed (committed %d, open %v)", p.committed, !p.empty())
	}
	if asked != 2 {
		t.Fatalf("asked %d times for one batch and one tick; want 2 (once each)", asked)
	}
	allow = true
	writeBatch(t, f, p, 6, 8) // due at offset 6: commits 0..5, and 6..7 start the next file
	if p.committed != 5 {
		t.Fatalf("committed %d after the rotation was allowed; want 5", p.committed)
	}
	if err := p.commitNow(context.Background(), "end of test"); err != nil {
		t.Fatal(err)
	}
	rep := f.check(8)
	if len(rep.Files) != 2 || rep.Files[0].Range.Start != 0 || rep.Files[0].Range.End != 5 {
		t.Fatalf("files %+v; want 0..5 (the deferred rotation's) and 6..7", rep.Files)
	}
}

func TestForcedRotationsAreNeverDeferred(t *testing.T) {
	cases := []struct {
		name   string
		set    func(p *partition)
		n      int64 // records written in one batch
		commit bool  // commitNow after the batch (memory ceiling, release, shutdown)
		want   int64 // the committed offset must reach at least this
	}{
		{name: "flush.size", set: func(p *partition) { p.cfg.FlushSize = 4 }, n: 6, want: 3},
		{name: "hdfs.sink.rotate.max.file.bytes", set: func(p *partition) { p.cfg.MaxFileBytes = 1 }, n: 2, want: 0},
		{name: "memory ceiling, release or shutdown", n: 3, commit: true, want: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
			f := newFixture(t, storagetest.NewMemFS())
			p := f.partition(nil)
			p.cfg.FlushSize, p.cfg.RotateInterval, p.cfg.Now = 1_000_000, time.Minute, clock.Now
			p.cfg.MayRotate = func() bool { t.Fatal("a forced rotation asked the timed budget"); return false }
			if tc.set != nil {
				tc.set(p)
			}
			writeBatch(t, f, p, 0, tc.n)
			if tc.commit {
				if err := p.commitNow(context.Background(), tc.name); err != nil {
					t.Fatal(err)
				}
			}
			if p.committed < tc.want {
				t.Fatalf("committed %d; want at least %d", p.committed, tc.want)
			}
		})
	}
}

// TestSchemaChangeIsNeverDeferred: a record with a new schema rotates the
// files before it (schema.compatibility NONE) even when the interval is due
// and the poll's timed budget is spent.
func TestSchemaChangeIsNeverDeferred(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	f := newFixture(t, storagetest.NewMemFS())
	newer := newMixedSchemas(t, f.reg)
	p := f.partition(nil)
	p.cfg.FlushSize, p.cfg.RotateInterval, p.cfg.Now = 1_000_000, time.Minute, clock.Now
	p.cfg.MayRotate = func() bool { return false }
	writeBatch(t, f, p, 0, 3)
	clock.set(clock.Now().Add(2 * time.Minute))
	ctx := context.Background()
	if err := p.beginBatch(batchOf(3, 3)); err != nil {
		t.Fatal(err)
	}
	if err := p.write(ctx, ctx, newer.record(t, 3)); err != nil {
		t.Fatal(err)
	}
	if p.committed != 2 {
		t.Fatalf("committed %d; want 2: the schema change rotates the files before offset 3", p.committed)
	}
}
