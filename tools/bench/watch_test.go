package main

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// TestTimedTailCountsOnlyTimerCommits checks that the "end on timers"
// column starts at the last commit the data decided and ends at the last
// commit, whatever rotation timers committed in between.
func TestTimedTailCountsOnlyTimerCommits(t *testing.T) {
	cases := []struct {
		name    string
		reasons []string
		timed   bool
	}{
		{"no timer commits", []string{"flush.size", "flush.size"}, false},
		{"interval after size", []string{"flush.size", "rotate.interval.ms"}, true},
		{"schedule after size", []string{"flush.size", "rotate.schedule.interval.ms"}, true},
		{"size after interval", []string{"rotate.interval.ms", "flush.size"}, false},
		{"a reason that only looks like a timer", []string{"flush.size", "rotate.something"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newCommitWatch()
			h := (&watchHandler{w: w, next: slog.DiscardHandler}).WithAttrs([]slog.Attr{
				slog.String("topic", "t"), slog.Int("partition", 0),
			})
			for i, reason := range tc.reasons {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "files committed", 0)
				r.AddAttrs(slog.Int64("end_offset", int64(i)), slog.String("reason", reason))
				if err := h.Handle(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if got := w.timedTail() > 0; got != tc.timed {
				t.Fatalf("timed tail %v after %v, want >0: %v", w.timedTail(), tc.reasons, tc.timed)
			}
		})
	}
}
