package sink

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// fakeClock is a wall clock the test sets.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// scheduledPartition is a partition with an hourly rotate.schedule.interval.ms
// on clock, with records 0..n-1 written at the clock's time.
func scheduledPartition(t *testing.T, clock *fakeClock, n int64) (*fixture, *partition) {
	f := newFixture(t, storagetest.NewMemFS())
	p := f.partition(nil)
	p.cfg.RotateSchedule, p.cfg.Now = time.Hour, clock.Now
	ctx := context.Background()
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.beginBatch(batchOf(0, n-1)); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < n; off++ {
		if err := p.write(ctx, ctx, f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.endBatch(ctx); err != nil || p.empty() {
		t.Fatalf("endBatch: %v (files open: %v)", err, !p.empty())
	}
	return f, p
}

// TestScheduleAfterClockJumpForward: the clock jumps past the boundary;
// the next tick commits.
func TestScheduleAfterClockJumpForward(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 15, 0, 0, time.UTC)}
	f, p := scheduledPartition(t, clock, 10)
	clock.set(time.Date(2026, 6, 1, 15, 10, 0, 0, time.UTC))
	if err := p.tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !p.empty() {
		t.Fatal("files still open after the clock jumped past the scheduled rotation")
	}
	f.check(10)
}

// TestScheduleAfterClockJumpBack: at 10:15 the next rotation is 11:00;
// the clock is set back to 08:20. Without following the clock the files
// stayed open until the clock reached 11:00 again (2 h 40 min); the
// schedule now rotates at 09:00.
func TestScheduleAfterClockJumpBack(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 15, 0, 0, time.UTC)}
	f, p := scheduledPartition(t, clock, 10)
	ctx := context.Background()
	clock.set(time.Date(2026, 6, 1, 8, 20, 0, 0, time.UTC))
	if err := p.tick(ctx); err != nil || p.empty() {
		t.Fatalf("tick after the jump back: %v; files open: %v (want still open)", err, !p.empty())
	}
	clock.set(time.Date(2026, 6, 1, 9, 0, 1, 0, time.UTC))
	if err := p.tick(ctx); err != nil {
		t.Fatal(err)
	}
	if !p.empty() {
		t.Fatalf("files still open at 09:00:01 after the clock went back; next rotation at %v", p.next)
	}
	f.check(10)
}
