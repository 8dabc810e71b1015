package compact

import (
	"context"
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestPolicyPassListingCost measures the store calls (NameNode calls on
// HDFS) of one policy pass over an hourly topic, written down in
// docs/benchmarks.md: the walk reads every directory of the topic once,
// then each directory holding committed files costs four calls (two Stats
// for its generation's state, its listing, its completeness marker's
// Stat), whatever its file count; a directory compacted and cleaned
// costs only its walk's listing (its generation is not walked).
func TestPolicyPassListingCost(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := testFormat(t, ".avro")
	s := testSchema(t, 1)
	const days, filesPerHour = 2, 3
	var hours []string
	for d := range days {
		for h := range 24 {
			dir := fmt.Sprintf("year=2026/month=05/day=%02d/hour=%02d", d+1, h)
			for i := range int64(filesPerHour) {
				commitFile(t, mem, f, mergeLayout, dir, s, 0, int64(len(hours))*100+i*3, int64(len(hours))*100+i*3+2)
			}
			touch(t, mem, path.Join(mergeLayout.Dir(), dir, "_SUCCESS"))
			hours = append(hours, dir)
		}
	}
	// The topic's directories: itself, one year, one month, the days, the hours.
	walked := 1 + 1 + 1 + days + len(hours)
	counted := storagetest.NewCounting(mem)
	now := time.Now().Add(time.Hour)
	policy := func(minFiles int) *Policy {
		return &Policy{C: New(Options{FS: counted, Topic: mergeLayout, Ext: ".avro", Pad: 10, Catalog: plainCatalog{&catalog{loc: map[string]string{}}},
			Grace: time.Minute, Fence: func(context.Context, int32) error { return nil }, Now: func() time.Time { return now }}),
			MinFiles: minFiles, Complete: markerExists(counted, "_SUCCESS")}
	}
	pass := func(p *Policy) (PolicyPass, int, map[string]int) {
		t.Helper()
		counted.Reset()
		got, err := p.Pass(bg)
		if err != nil {
			t.Fatal(err)
		}
		return got, counted.Total(), counted.Calls()
	}

	// Steady state, nothing chosen (fewer files than min.files): every
	// directory is planned and left.
	left, calls, byOp := pass(policy(filesPerHour + 1))
	t.Logf("a pass leaving %d hourly directories of %d files: %d calls %v", len(hours), filesPerHour, calls, byOp)
	if left.Left != len(hours) || calls != walked+4*len(hours) {
		t.Fatalf("pass left %d directories with %d calls %v; want %d left with %d calls (the walk's %d listings, 4 per directory)",
			left.Left, calls, byOp, len(hours), walked+4*len(hours), walked)
	}

	// Every directory compacted, then (after the grace period) cleaned.
	if got, _, _ := pass(policy(2)); len(got.Compacted) != len(hours) {
		t.Fatalf("compacted %d directories, want %d", len(got.Compacted), len(hours))
	}
	now = now.Add(2 * time.Minute)
	if got, _, _ := pass(policy(2)); got.Removed != len(hours)*filesPerHour {
		t.Fatalf("removed %d inputs, want %d", got.Removed, len(hours)*filesPerHour)
	}
	done, calls, byOp := pass(policy(2))
	t.Logf("a pass over %d compacted and cleaned directories: %d calls %v", len(hours), calls, byOp)
	if done.Dirs != 0 || calls != walked {
		t.Fatalf("pass looked at %d directories with %d calls %v; want none, with only the walk's %d listings", done.Dirs, calls, byOp, walked)
	}
}
