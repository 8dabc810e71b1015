package compact

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestPolicyChoose: what a pass does with each kind of planned directory.
func TestPolicyChoose(t *testing.T) {
	in := func(bytes int64) Input { return Input{Path: "/topics/orders/h=1/f", Bytes: bytes} }
	mergeable := Plan{State: StateNone, Files: 4, Runs: []Run{{Inputs: []Input{in(10), in(10), in(10), in(10)}}}}
	big := Plan{State: StateNone, Files: 4, Runs: []Run{{Inputs: []Input{in(10), in(10), in(500), in(10)}}}}
	for _, tc := range []struct {
		name     string
		ext      string
		plan     Plan
		complete bool
		want     Action
		why      string
	}{
		{"complete, enough files", ".avro", mergeable, true, ActionCompact, ""},
		{"not complete", ".avro", mergeable, false, ActionLeave, "not complete"},
		{"too few files", ".avro", Plan{State: StateNone, Files: 2, Runs: []Run{{Inputs: []Input{in(1), in(1)}}}}, true, ActionLeave, "fewer than hdfs.sink.compaction.min.files=3"},
		{"too young", ".avro", Plan{State: StateNone, Files: 4, Refused: "f is 5m0s old, younger than the minimum age 1h0m0s"}, true, ActionLeave, "younger than the minimum age"},
		{"a foreign file", ".avro", Plan{State: StateNone, Files: 4, Refused: "x is not a committed .avro file"}, true, ActionLeave, "not a committed"},
		{"compacted, inputs removed", ".avro", Plan{State: StateDone}, true, ActionLeave, "compacted already"},
		{"compacted, inputs left", ".avro", Plan{State: StateDone, Files: 4}, true, ActionClean, ""},
		{"published, not switched", ".avro", Plan{State: StatePublished, Files: 4}, false, ActionFinish, ""},
		{"a Parquet input over the memory share", ".parquet", big, true, ActionLeave, "within the connector's memory ceiling"},
		{"an Avro input over it (streamed)", ".avro", big, true, ActionCompact, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Policy{C: New(Options{Ext: tc.ext}), MinFiles: 3, MaxInputBytes: 100}
			got, why := p.Choose(tc.plan, tc.complete)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Fatalf("Choose = %s %q, want %s %q", got, why, tc.want, tc.why)
			}
		})
	}
}

// TestPolicyPass runs passes over a topic on the store: the complete
// directory with enough files is compacted (its completeness marker
// refuses nothing), the others are left; a pass after the grace period
// removes the merged inputs, the one after finds nothing to do.
func TestPolicyPass(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := testFormat(t, ".avro")
	s := testSchema(t, 1)
	write := func(dir string, files int, marker bool) {
		for i := range int64(files) {
			commitFile(t, mem, f, mergeLayout, dir, s, 0, i*3, i*3+2)
		}
		if marker {
			touch(t, mem, path.Join(mergeLayout.Dir(), dir, "_SUCCESS"))
		}
	}
	write("h=1", 4, true)  // complete, enough files: compacted
	write("h=2", 4, false) // not complete
	write("h=3", 2, true)  // too few files
	cat := &catalog{loc: map[string]string{}}
	now := time.Now().Add(time.Hour)
	p := &Policy{C: New(Options{FS: mem, Topic: mergeLayout, Ext: ".avro", Pad: 10, Catalog: plainCatalog{cat}, Grace: time.Minute,
		Fence: func(context.Context, int32) error { return nil }, Now: func() time.Time { return now }}),
		MinFiles: 3, Complete: markerExists(mem, "_SUCCESS")}

	pass, err := p.Pass(bg)
	if err != nil {
		t.Fatal(err)
	}
	if pass.Dirs != 3 || pass.Left != 2 || len(pass.Compacted) != 1 || pass.Removed != 0 {
		t.Fatalf("pass = %+v, want 3 directories, 1 compacted, 2 left", pass)
	}
	got := pass.Compacted[0]
	if got.Dir != "h=1" || got.FilesBefore != 4 || got.FilesAfter != 1 || got.BytesBefore == 0 || got.BytesAfter == 0 {
		t.Fatalf("compacted = %+v, want h=1 from 4 files to 1", got)
	}
	gen := mergeLayout.CompactedDir("h=1")
	if loc := cat.location(mergeLayout, "h=1"); loc != gen {
		t.Fatalf("Hive location of h=1 = %s, want %s", loc, gen)
	}
	want := map[int32][]int64{}
	span(0, 0, 11, want)
	seen, err := visible(mem, gen)
	if err != nil {
		t.Fatal(err)
	}
	if err := exactlyOnce(seen, want); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"h=2", "h=3"} {
		if loc := cat.location(mergeLayout, dir); loc != path.Join(mergeLayout.Dir(), dir) {
			t.Errorf("%s was switched to %s", dir, loc)
		}
	}

	now = now.Add(2 * time.Minute) // past the grace period
	if pass, err = p.Pass(bg); err != nil || pass.Removed != 4 || len(pass.Compacted) != 0 {
		t.Fatalf("second pass = %+v, %v; want the 4 merged inputs removed", pass, err)
	}
	if pass, err = p.Pass(bg); err != nil || pass.Removed != 0 || pass.Left != 2 || pass.Dirs != 2 {
		t.Fatalf("third pass = %+v, %v; want h=2 and h=3 left, nothing else", pass, err)
	}
}

// TestPolicyLeavesYoungDirectories: with a minimum age, a directory with a
// younger file is left, however many files it has.
func TestPolicyLeavesYoungDirectories(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := testFormat(t, ".avro")
	for i := range int64(4) {
		commitFile(t, mem, f, mergeLayout, "h=1", testSchema(t, 1), 0, i, i)
	}
	cat := &catalog{loc: map[string]string{}}
	p := &Policy{C: New(Options{FS: mem, Topic: mergeLayout, Ext: ".avro", Pad: 10, Catalog: plainCatalog{cat}, MinAge: time.Hour,
		Fence: func(context.Context, int32) error { return nil }}), MinFiles: 2}
	pass, err := p.Pass(bg)
	if err != nil || pass.Left != 1 || len(pass.Compacted) != 0 {
		t.Fatalf("pass = %+v, %v; want h=1 left (too young)", pass, err)
	}
	if _, err := mem.Stat(bg, mergeLayout.CompactedDir("h=1")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a generation of the young directory: %v", err)
	}
}

func markerExists(fsys storage.FS, name string) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, encoded string) (bool, error) {
		_, err := fsys.Stat(ctx, path.Join(mergeLayout.Dir(), encoded, name))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
}

func touch(t *testing.T, fsys storage.FS, name string) {
	t.Helper()
	f, err := fsys.Create(bg, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// plainCatalog is the metastore without fault points.
type plainCatalog struct{ c *catalog }

func (pc plainCatalog) SetLocation(_ context.Context, _, encoded, location string) error {
	pc.c.mu.Lock()
	defer pc.c.mu.Unlock()
	pc.c.loc[encoded] = location
	return nil
}

// TestPolicyPaced: what the pace makes of each action at a moment before,
// at and after the next allowed compaction. Only a new compaction waits.
func TestPolicyPaced(t *testing.T) {
	next := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		action Action
		now    time.Time
		want   Action
	}{
		{"a compaction before the pace allows it", ActionCompact, next.Add(-time.Second), ActionWait},
		{"a compaction when it allows it", ActionCompact, next, ActionCompact},
		{"a compaction after", ActionCompact, next.Add(time.Minute), ActionCompact},
		{"finishing a published one is never held", ActionFinish, next.Add(-time.Second), ActionFinish},
		{"cleaning is never held", ActionClean, next.Add(-time.Second), ActionClean},
		{"a directory left stays left", ActionLeave, next.Add(-time.Second), ActionLeave},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Policy{C: New(Options{}), Pace: time.Minute, nextAt: next}
			if got := p.paced(tc.action, tc.now); got != tc.want {
				t.Fatalf("paced(%s) = %s, want %s", tc.action, got, tc.want)
			}
		})
	}
}

// TestPolicyPacesCompactions: three complete directories of a topic whose
// partitions have WALs (so each compaction fences them). With a pace, a
// pass compacts the first and holds the others; a pass before the pace
// has run out compacts nothing; each pass after it compacts the next one,
// resuming where the last stopped. Without a pace one pass does all three
// (as before pacing).
func TestPolicyPacesCompactions(t *testing.T) {
	for _, tc := range []struct {
		name string
		pace time.Duration
		// passes: the clock's advance before each pass, and how many
		// directories that pass compacts and holds.
		passes []pacedPass
	}{
		{"no pace: back to back", 0, []pacedPass{{0, 3, 0}}},
		{"paced", 90 * time.Second, []pacedPass{
			{0, 1, 2},                // h=1 compacted, h=2 and h=3 held
			{60 * time.Second, 0, 2}, // 60 s after: still held
			{30 * time.Second, 1, 1}, // 90 s after the first: h=2
			{90 * time.Second, 1, 0}, // h=3
			{90 * time.Second, 0, 0}, // nothing left
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := storagetest.NewMemFS()
			f := testFormat(t, ".avro")
			s := testSchema(t, 1)
			for _, dir := range []string{"h=1", "h=2", "h=3"} {
				for i := range int64(3) {
					commitFile(t, mem, f, mergeLayout, dir, s, 0, i*3, i*3+2)
				}
			}
			for _, p := range []string{"0", "1"} { // two writing partitions
				if err := mem.MkdirAll(bg, path.Join(path.Dir(mergeLayout.WALDir(0)), p)); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now().Add(2 * time.Hour) // the files are older than any minimum age
			now := start
			fences := 0
			p := &Policy{C: New(Options{FS: mem, Topic: mergeLayout, Ext: ".avro", Pad: 10, Catalog: plainCatalog{&catalog{loc: map[string]string{}}},
				Grace: time.Hour, Fence: func(context.Context, int32) error { fences++; return nil }, Now: func() time.Time { return now }}),
				MinFiles: 2, Pace: tc.pace}
			var order []string
			for i, want := range tc.passes {
				now = now.Add(want.advance)
				pass, err := p.Pass(bg)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range pass.Compacted {
					order = append(order, c.Dir)
				}
				if len(pass.Compacted) != want.compacted || pass.Waiting != want.waiting {
					t.Fatalf("pass %d at +%s: compacted %d, waiting %d; want %d and %d (%+v)", i, now.Sub(start),
						len(pass.Compacted), pass.Waiting, want.compacted, want.waiting, pass)
				}
				if want.waiting > 0 && !pass.NextAllowed.After(now) {
					t.Fatalf("pass %d: next allowed %s, want after now %s", i, pass.NextAllowed, now)
				}
				if want.waiting == 0 && !pass.NextAllowed.IsZero() {
					t.Fatalf("pass %d: next allowed %s with nothing held", i, pass.NextAllowed)
				}
			}
			if strings.Join(order, " ") != "h=1 h=2 h=3" || fences != 6 {
				t.Fatalf("compacted %v with %d fences; want h=1 h=2 h=3, each fencing 2 partitions", order, fences)
			}
		})
	}
}

// pacedPass is one pass of TestPolicyPacesCompactions: the clock moves by
// advance, then the pass compacts and holds so many directories.
type pacedPass struct {
	advance            time.Duration
	compacted, waiting int
}
