package sink

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestFencedByCompactionIsKnown: an owner holding open files whose
// partition a compaction fences learns, at its next commit, that a
// compaction fenced it (so it recovers at once); fenced by another owner's
// claim, it does not. Either way nothing of its is committed, and a new
// owner finishes with every offset exactly once.
func TestFencedByCompactionIsKnown(t *testing.T) {
	for _, byCompaction := range []bool{true, false} {
		t.Run(fmt.Sprintf("compaction=%v", byCompaction), func(t *testing.T) {
			ctx := context.Background()
			mem := storagetest.NewMemFS()
			f := newFixture(t, mem)
			owner := f.partition(nil)
			if _, err := owner.resume(ctx, nil); err != nil {
				t.Fatal(err)
			}
			for off := int64(0); off < 150; off++ { // commits 0-99, holds 100-149 open
				if err := owner.write(ctx, ctx, f.record(off)); err != nil {
					t.Fatal(err)
				}
			}
			if byCompaction {
				ws := owner.cfg.WriteSettings
				ws.TopicsDir = func(string) string { return "/topics" }
				ws.LogsDir = func(string) string { return "/logs" }
				if _, err := FenceForCompaction(ctx, ws, "", testTopic, 0, nil); err != nil {
					t.Fatal(err)
				}
			} else { // the same claim, by an owner that is not a compaction
				other := f.partition(nil)
				if _, err := other.claimAs(ctx, nil, func(_ uint64, found standing) (standing, error) { return found, nil }); err != nil {
					t.Fatal(err)
				}
			}
			err := owner.rotate(ctx, "after the fence")
			if !errors.Is(err, ErrFenced) || errors.Is(err, ErrFencedByCompaction) != byCompaction {
				t.Fatalf("commit after the fence: err = %v, want ErrFenced, by a compaction: %v", err, byCompaction)
			}
			if _, err := f.drive(f.partition(nil), 300); err != nil {
				t.Fatal(err)
			}
			f.check(300)
		})
	}
}

// TestFencedWait: a fence by another owner waits 30 s for the rebalance;
// a compaction's fence and any other failure wait the backoff alone.
func TestFencedWait(t *testing.T) {
	backoff := 2 * time.Second
	for _, tc := range []struct {
		name string
		err  error
		want time.Duration
	}{
		{"another owner", fmt.Errorf("%w (segment 7 exists)", ErrFenced), 30 * time.Second},
		{"a compaction", fmt.Errorf("%w %w (segment 7 exists)", ErrFenced, ErrFencedByCompaction), backoff},
		{"a store error", errors.New("connection refused"), backoff},
	} {
		if got := fencedWait(tc.err, backoff); got != tc.want {
			t.Errorf("%s: wait %v, want %v", tc.name, got, tc.want)
		}
	}
}
