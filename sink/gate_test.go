package sink

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
)

// TestCeilingCountsPartitionsBeingReleased: while a revocation commits its
// partitions beside the poll loop, their open files still take memory, and
// the memory ceiling counts them: a kept partition that grows past what
// the ceiling leaves is rotated, although the kept partitions alone are
// within it.
func TestCeilingCountsPartitionsBeingReleased(t *testing.T) {
	const parts = 4
	k := newKafkaFixture(t, 1, testTopic)
	cfg := k.config("ceiling-release")
	cfg.FlushSize, cfg.RotateInterval = 1_000_000, 0
	// Only partition 0's commit is held: it is the one revoked.
	c, h, f := heldConnector(t, k, cfg, 0, parts, 100)
	c.cfg.MemoryMax = 3*c.parts.get(tp{testTopic, 1}).p.buffered() + c.parts.get(tp{testTopic, 0}).p.buffered()
	ctx := context.Background()
	h.armed.Store(true)
	released := make(chan struct{})
	go func() {
		defer close(released)
		c.release(ctx, map[string][]int32{testTopic: {0}}, true)
	}()
	waitFor(t, "the revoked partition's commit held", h.isBlocked)
	writeBatch(t, f, c.parts.get(tp{testTopic, 1}).p, 100, 200)
	c.enforceMemory(ctx)
	if n := c.Stats.MemoryRotations.Load(); n != 1 {
		t.Fatalf("%d memory rotations while the revoked partition still held its files; want 1 (the kept partition that grew)", n)
	}
	h.release()
	<-released
	c.release(ctx, c.parts.keys(), true)
	want := map[int32]int64{0: 100, 1: 200, 2: 100, 3: 100}
	if _, err := verify.Check(ctx, k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: want}); err != nil {
		t.Fatal(err)
	}
}

// TestGateCutsAnIdlePollShort: a callback that wants the gate does not
// wait for an idle PollFetches (TickInterval, or longer if set so), and it
// takes nothing before the poll has left the gate; a callback already
// waiting when a poll starts cuts that poll's wait short too.
func TestGateCutsAnIdlePollShort(t *testing.T) {
	for _, callbackFirst := range []bool{false, true} {
		var g pollGate
		if callbackFirst {
			g.waiting.Add(1) // announced, not yet at the lock
		}
		pollCtx, leave := g.enterPoll(context.Background())
		took := make(chan struct{})
		if !callbackFirst {
			go g.exclusive(func() { close(took) })
		}
		select {
		case <-pollCtx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("callback first=%v: the poll waited for records while a callback wanted the gate", callbackFirst)
		}
		select {
		case <-took:
			t.Fatal("the callback took its partitions while the poll held the gate")
		default:
		}
		g.polled(leave)
		g.leavePoll()
		if !callbackFirst {
			<-took
		}
	}
}

// TestTimersWaitWhilePartitionsMove: while a revocation commits, or an
// assignment recovers, beside the poll loop, the kept partitions' timers
// wait (the moved partitions wait for that work, and our own commits
// would compete with it for the NameNode); they keep their files open and
// commit in the first poll after it, every offset once.
func TestTimersWaitWhilePartitionsMove(t *testing.T) {
	cases := []struct {
		name  string
		moved int32 // the partition whose move is held at its renames
		move  func(ctx context.Context, c *Connector)
	}{
		{"revocation", 0, func(ctx context.Context, c *Connector) {
			c.release(ctx, map[string][]int32{testTopic: {0}}, true) // its commit's renames
		}},
		{"assignment", 9, func(ctx context.Context, c *Connector) {
			_, _ = c.adjustOffsets(ctx, map[string]map[int32]kgo.Offset{testTopic: {9: kgo.NewOffset()}}) // its claim's rename
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { timersWaitFor(t, tc.moved, tc.move) })
	}
}

func timersWaitFor(t *testing.T, moved int32, move func(ctx context.Context, c *Connector)) {
	const parts = 4
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	k := newKafkaFixture(t, 1, testTopic)
	cfg := k.config("timers-yield")
	cfg.FlushSize, cfg.RotateInterval, cfg.Now = 1_000_000, time.Minute, clock.Now
	c, h, _ := heldConnector(t, k, cfg, moved, parts, 1)
	kept := parts // every partition but a revoked one stays
	if moved < parts {
		kept--
	}
	ctx := context.Background()
	h.armed.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		move(ctx, c)
	}()
	waitFor(t, "the move held", h.isBlocked)
	clock.set(clock.Now().Add(2 * time.Minute)) // every kept partition's interval is over
	if err := c.poll(ctx, ctx, nil); err != nil {
		t.Fatal(err)
	}
	if open := openPartitions(c); open != kept {
		t.Fatalf("%d of %d kept partitions open after a poll beside the move; want all (their timers wait)", open, kept)
	}
	h.release()
	<-done
	if err := c.poll(ctx, ctx, nil); err != nil {
		t.Fatal(err)
	}
	if open := openPartitions(c); open != 0 {
		t.Fatalf("%d partitions still open in the first poll after the move", open)
	}
	c.release(ctx, c.parts.keys(), true)
	if _, err := verify.Check(ctx, k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: wantOne(parts)}); err != nil {
		t.Fatal(err)
	}
}

// heldConnector is a connector that owns partitions 0..parts-1 of the test
// topic, each with records written into its open files, whose store holds
// the renames of partition held until the hold is armed and released. Its
// group is given nothing of the test topic: the test moves partitions by
// calling the callbacks itself.
func heldConnector(t *testing.T, k *kafkaFixture, cfg Config, held int32, parts int, records int64) (*Connector, *hold, *fixture) {
	t.Helper()
	cfg.Topics = []string{"unrelated"}
	h := newHold()
	h.only(held)
	cfg.FS = heldFS(k.fs, h, "rename")
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	t.Cleanup(h.release)
	f := newFixture(t, k.fs)
	for part := range int32(parts) {
		o := c.newOwned(tp{testTopic, part})
		c.parts.put(o)
		writeBatch(t, f, o.p, 0, records)
	}
	return c, h, f
}

// TestMemoryRotationsBesideThePollLoop: with more partitions than workers a
// memory rotation runs off the poll loop, its files counted until it is
// settled; with a worker for every partition it runs inline, before the
// next poll. Either way every offset lands once.
func TestMemoryRotationsBesideThePollLoop(t *testing.T) {
	for _, tc := range []rotationCase{{parallelism: 2, beside: true}, {parallelism: 4, beside: false}} {
		t.Run(fmt.Sprintf("parallelism=%d", tc.parallelism), func(t *testing.T) { checkMemoryRotation(t, tc) })
	}
}

type rotationCase struct {
	parallelism int  // workers, for 4 partitions
	beside      bool // the rotation runs off the poll loop
}

func checkMemoryRotation(t *testing.T, tc rotationCase) {
	const parts = 4
	k := newKafkaFixture(t, 1, testTopic)
	cfg := k.config("memory-beside")
	cfg.FlushSize, cfg.RotateInterval, cfg.Parallelism = 1_000_000, 0, tc.parallelism
	c, h, f := heldConnector(t, k, cfg, 0, parts, 100)
	writeBatch(t, f, c.parts.get(tp{testTopic, 0}).p, 100, 200) // the largest: the one rotated
	_, total := buffered(c.parts.all())
	c.cfg.MemoryMax = total - 1
	ctx := context.Background()
	h.armed.Store(true)
	enforced := make(chan struct{})
	go func() {
		defer close(enforced)
		c.enforceMemory(ctx)
	}()
	waitFor(t, "partition 0's commit held", h.isBlocked)
	if tc.beside {
		// The commit is held until released below: only a rotation beside
		// the poll loop lets enforceMemory return.
		select {
		case <-enforced:
		case <-time.After(10 * time.Second):
			t.Fatal("the poll loop waited for the memory rotation's commit")
		}
		if got := c.committing.Load(); got == 0 {
			t.Fatal("the running rotation's files are not counted")
		}
	} else {
		select {
		case <-enforced:
			t.Fatal("the rotation did not wait for its commit")
		case <-time.After(time.Second):
		}
	}
	h.release()
	<-enforced
	// The peak is what stays held after enforcement: beside the loop, the
	// victim's files are still in memory then.
	if peak := c.Stats.PeakBuffered.Load(); tc.beside != (peak == total) {
		t.Fatalf("peak buffered %d of %d held before the rotation (beside the loop: %v)", peak, total, tc.beside)
	}
	c.settleAll()
	if got := c.committing.Load(); got != 0 {
		t.Fatalf("%d bytes still counted after the commit was settled", got)
	}
	if n := c.Stats.MemoryRotations.Load(); n != 1 {
		t.Fatalf("%d memory rotations, want 1", n)
	}
	c.release(ctx, c.parts.keys(), true)
	want := map[int32]int64{0: 200, 1: 100, 2: 100, 3: 100}
	if _, err := verify.Check(ctx, k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: want}); err != nil {
		t.Fatal(err)
	}
}

// TestCeilingWaitsForRunningCommits: when rotating every settled partition
// still leaves the connector over its ceiling, because a commit running
// off the poll loop holds the rest, the poll loop waits for that commit
// before the next poll adds to it.
func TestCeilingWaitsForRunningCommits(t *testing.T) {
	const parts = 4
	k := newKafkaFixture(t, 1, testTopic)
	cfg := k.config("ceiling-waits")
	cfg.FlushSize, cfg.RotateInterval, cfg.Parallelism = 1_000_000, 0, 2
	c, h, _ := heldConnector(t, k, cfg, 0, parts, 100)
	ctx := context.Background()
	h.armed.Store(true)
	slow := c.parts.get(tp{testTopic, 0})
	c.startCommit(ctx, slow, &commitDue{reason: "test"})
	c.queueCommitting([]*owned{slow})
	waitFor(t, "partition 0's commit held", h.isBlocked)
	c.cfg.MemoryMax = slow.commit.held - 1 // the running commit alone is over
	enforced := make(chan struct{})
	go func() {
		defer close(enforced)
		c.enforceMemory(ctx)
	}()
	select {
	case <-enforced:
		t.Fatal("the ceiling did not wait for the running commit that holds what is over it")
	case <-time.After(time.Second):
	}
	h.release()
	<-enforced
	if n := c.Stats.MemoryRotations.Load(); n != parts-1 {
		t.Fatalf("%d memory rotations, want %d (every settled partition)", n, parts-1)
	}
	if slow.commit != nil {
		t.Fatal("the running commit the ceiling waited for is not settled")
	}
	c.settleAll()
	c.release(ctx, c.parts.keys(), true)
	want := map[int32]int64{0: 100, 1: 100, 2: 100, 3: 100}
	if _, err := verify.Check(ctx, k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: want}); err != nil {
		t.Fatal(err)
	}
}
