package sink

import (
	"context"
	"errors"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestCheckResetClaimsNothing: CheckReset refuses what ResetOffset would
// refuse for committed files, and leaves the WAL as it was either way.
func TestCheckResetClaimsNothing(t *testing.T) {
	ctx := context.Background()
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	if err := f.run(f.partition(nil), 350); err != nil {
		t.Fatal(err)
	}
	s := f.partition(nil).cfg.WriteSettings
	s.TopicsDir = func(string) string { return "/topics" }
	s.LogsDir = func(string) string { return "/logs" }
	before, err := CommittedOffset(t.Context(), s, testTopic, 0)
	if err != nil {
		t.Fatal(err)
	}
	segments := func() int {
		seqs, err := resetPartition(s, Reset{Topic: testTopic}, testLogger()).log.Segments(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return len(seqs)
	}
	n := segments()
	var re *ResetError
	for _, tt := range []struct {
		next    int64
		refused bool
	}{{0, true}, {349, true}, {350, false}, {1000, false}} {
		err := CheckReset(t.Context(), s, Reset{Topic: testTopic, Partition: 0, Next: tt.next})
		if refused := errors.As(err, &re); refused != tt.refused || (!tt.refused && err != nil) {
			t.Errorf("CheckReset to %d: %v, want refused %v", tt.next, err, tt.refused)
		}
	}
	if err := CheckReset(t.Context(), s, Reset{Topic: testTopic, Next: -1}); err == nil {
		t.Error("a negative offset passes the check")
	}
	if after, _ := CommittedOffset(t.Context(), s, testTopic, 0); after != before || segments() != n {
		t.Fatalf("the check changed the WAL: committed %d -> %d, %d -> %d segments", before, after, n, segments())
	}
	if err := ResetOffset(ctx, s, Reset{Topic: testTopic, Partition: 0, Next: 400}, testLogger()); err != nil {
		t.Fatal(err)
	}
	if after, _ := CommittedOffset(t.Context(), s, testTopic, 0); after != 399 {
		t.Fatalf("a reset the check allowed: committed %d, want 399", after)
	}
}
