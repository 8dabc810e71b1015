package completeness

import (
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestPassListingCost measures the store calls (NameNode calls on HDFS)
// of marker passes over eight partitions, written down in
// docs/benchmarks.md. Every pass reads each partition's WAL head: a
// listing and an open per partition. The first pass after a start also
// looks at every hour of the lookback before the frontier (one Stat each
// for an hour without files); marking a directory adds a Stat of it, a
// Stat of its marker and the marker's Create.
func TestPassListingCost(t *testing.T) {
	const partitions = 8
	w := newWorld(t, partitions)
	for p := range int32(partitions) {
		w.commit(p, 0, 9, 13, at(13, 50), false)
		w.commit(p, 10, 19, 14, at(14, 20), false)
		w.ends[p] = 25 // not idle: the frontier is 14:20 - 10 min lateness
	}
	counted := storagetest.NewCounting(w.fs)
	m := w.marker(nil)
	m.cfg.FS = counted
	run := func() (Pass, int, map[string]int) {
		t.Helper()
		counted.Reset()
		pass, err := m.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return pass, counted.Total(), counted.Calls()
	}
	heads := 2 * partitions

	first, calls, byOp := run()
	// The hours from the one holding From to the last ending by the frontier.
	lookedAt := int(time.UnixMilli(first.Verdict.Frontier).Truncate(time.Hour).Sub(time.UnixMilli(first.From).Truncate(time.Hour)) / time.Hour)
	t.Logf("first pass (lookback 24 h, %d hours looked at, hour 13 marked): %d calls %v", lookedAt, calls, byOp)
	if len(first.Marked) != 1 || calls != heads+(lookedAt-1)+3 {
		t.Fatalf("first pass marked %v with %d calls %v; want hour 13 with %d (the heads' %d, a Stat per empty hour, 3 for the marking)",
			first.Marked, calls, byOp, heads+(lookedAt-1)+3, heads)
	}
	steady, calls, byOp := run()
	t.Logf("a pass with nothing new complete: %d calls %v", calls, byOp)
	if len(steady.Marked) != 0 || calls != heads {
		t.Fatalf("steady pass marked %v with %d calls %v; want nothing with the heads' %d", steady.Marked, calls, byOp, heads)
	}
}
