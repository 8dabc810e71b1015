package compact

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/writer"
)

var errCrash = errors.New("crashed (test)")

var sweepFull = flag.Bool("sweep.full", false, "late commits at every call of the compaction crash sweep, not every 4th")

// stepFS numbers every store call of one compactor (its fences' included)
// and its catalog calls: before call k it runs the world's hook (readers
// look, writers commit), at call crashAt it and every later call fail (the
// process died), at freezeAt it waits until thawed.
type stepFS struct {
	storage.FS
	mu       sync.Mutex
	n        int
	crashAt  int
	freezeAt int
	frozen   chan struct{} // closed when the call at freezeAt waits
	thaw     chan struct{}
	before   func(k int) error
	// hook runs the world's hooks one at a time: a Parquet merge calls
	// the store from two goroutines (Compactor.readAhead), and the hooks
	// (readers looking, writers committing) are not safe to run at once.
	hook sync.Mutex
}

func (s *stepFS) step() error {
	s.mu.Lock()
	s.n++
	k := s.n
	s.mu.Unlock()
	if k == s.freezeAt {
		close(s.frozen)
		<-s.thaw
	}
	if s.crashAt > 0 && k >= s.crashAt {
		return errCrash
	}
	if s.before != nil {
		s.hook.Lock()
		defer s.hook.Unlock()
		return s.before(k)
	}
	return nil
}

func (s *stepFS) Create(ctx context.Context, name string) (storage.File, error) {
	if err := s.step(); err != nil {
		return nil, err
	}
	f, err := s.FS.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return &stepFile{File: f, s: s}, nil
}

type stepFile struct {
	storage.File
	s *stepFS
}

func (f *stepFile) Close() error {
	if err := f.s.step(); err != nil {
		return err
	}
	return f.File.Close()
}

func (s *stepFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := s.step(); err != nil {
		return nil, err
	}
	return s.FS.Open(ctx, name)
}

func (s *stepFS) Rename(ctx context.Context, a, b string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.Rename(ctx, a, b)
}

func (s *stepFS) Remove(ctx context.Context, name string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.Remove(ctx, name)
}

func (s *stepFS) RemoveAll(ctx context.Context, name string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.RemoveAll(ctx, name)
}

func (s *stepFS) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	if err := s.step(); err != nil {
		return nil, err
	}
	return s.FS.ReadDir(ctx, name)
}

func (s *stepFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	if err := s.step(); err != nil {
		return nil, err
	}
	return s.FS.Stat(ctx, name)
}

func (s *stepFS) MkdirAll(ctx context.Context, name string) error {
	if err := s.step(); err != nil {
		return err
	}
	return s.FS.MkdirAll(ctx, name)
}

// catalog is the metastore: one location per encoded directory.
type catalog struct {
	mu  sync.Mutex
	loc map[string]string
}

func (c *catalog) location(lay layout.Topic, encoded string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.loc[encoded]; ok {
		return l
	}
	return path.Join(lay.Dir(), encoded)
}

// stepCatalog numbers the catalog's calls with the store's.
type stepCatalog struct {
	c *catalog
	s *stepFS
}

func (sc stepCatalog) SetLocation(_ context.Context, _, encoded, location string) error {
	if err := sc.s.step(); err != nil {
		return err
	}
	sc.c.mu.Lock()
	defer sc.c.mu.Unlock()
	sc.c.loc[encoded] = location
	return nil
}

// world is a topic with committed files in d=1 (and d=2), its partitions'
// WALs, an owner of partition 0 that keeps committing late records into
// d=1, and the readers' catalog.
type world struct {
	t        *testing.T
	mem      *storagetest.MemFS
	cat      *catalog
	f        format.Format
	s        *schema.Schema
	lay      layout.Topic
	want     map[int32][]int64 // every offset committed for d=1
	seen     map[int32]map[int64]bool
	owner    *owner
	nextLate int64
	now      time.Time
	cache    map[string][]int64
}

const dir = "d=1"

// owner models a sink owner of partition 0: a writer per claim (the real
// writer, which looks for the generation once per directory), whose
// commit goes through only while its claim is still the WAL head (the
// fencing condition, §6); otherwise it claims again with a new writer.
type owner struct {
	w   *world
	seq uint64
	wr  *writer.Writer
	n   int
}

func (o *owner) claim() {
	segs, err := wal.Open(o.w.mem, o.w.lay.WALDir(0)).Segments(bg)
	if err != nil || len(segs) == 0 {
		o.w.t.Fatalf("owner: WAL of partition 0: %v %v", segs, err)
	}
	o.seq = segs[len(segs)-1]
	o.n++
	o.wr = writer.New(writer.Options{FS: o.w.mem, Format: o.w.f, Layout: o.w.lay, Partition: 0, Pad: 10,
		TempDir: o.w.lay.ClaimTempDir(0, o.seq), Prefix: fmt.Sprintf("e%d", o.n)})
}

func (o *owner) commit(start, end int64) error {
	segs, err := wal.Open(o.w.mem, o.w.lay.WALDir(0)).Segments(bg)
	if err != nil {
		return err
	}
	if segs[len(segs)-1] != o.seq { // fenced: recover, claim again
		o.claim()
	}
	for off := start; off <= end; off++ {
		v, _ := valueOf(o.w.s, 0, off)
		if err := o.wr.Append(bg, dir, o.w.s, off, v, time.Now()); err != nil {
			return err
		}
	}
	closed, err := o.wr.Close()
	if err != nil {
		return err
	}
	for _, c := range closed {
		if err := o.w.mem.Rename(bg, c.Temp, c.Final); err != nil {
			return err
		}
	}
	span(0, start, end, o.w.want)
	return nil
}

func valueOf(s *schema.Schema, p int32, off int64) ([]byte, error) {
	v, err := valueFunc(s)(s.ID, p, off)
	if err != nil {
		return nil, err
	}
	_, datum, err := schema.ParseWire(v)
	return datum, err
}

func newWorld(t *testing.T, ext string) *world {
	w := &world{t: t, mem: storagetest.NewMemFS(), cat: &catalog{loc: map[string]string{}}, f: testFormat(t, ext),
		s: testSchema(t, 1), lay: mergeLayout, want: map[int32][]int64{}, seen: map[int32]map[int64]bool{},
		nextLate: 100, now: time.Now().Add(2 * time.Hour), cache: map[string][]int64{}}
	for i := range int64(3) {
		commitFile(t, w.mem, w.f, w.lay, dir, w.s, 0, i*5, i*5+4)
		span(0, i*5, i*5+4, w.want)
	}
	commitFile(t, w.mem, w.f, w.lay, "d=2", w.s, 0, 15, 19) // interleaved offsets elsewhere
	commitFile(t, w.mem, w.f, w.lay, dir, w.s, 1, 0, 2)
	commitFile(t, w.mem, w.f, w.lay, dir, w.s, 1, 3, 5)
	span(1, 0, 5, w.want)
	for _, p := range []int32{0, 1} {
		if _, err := sink.FenceForCompaction(bg, w.settings(w.mem), "c", w.lay.Name, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	w.owner = &owner{w: w}
	w.owner.claim()
	return w
}

func (w *world) settings(fsys storage.FS) sink.WriteSettings {
	return sink.WriteSettings{FS: fsys, Format: w.f, Partitioner: partitioner.Default{},
		TopicsDir: func(string) string { return w.lay.TopicsDir }, LogsDir: func(string) string { return w.lay.LogsDir }, Pad: 10}
}

func (w *world) compactor(s *stepFS, now time.Time) *Compactor {
	return New(Options{FS: s, Topic: w.lay, Ext: w.f.Extension(), Pad: 10, MinAge: time.Minute, Grace: time.Hour,
		Now:     func() time.Time { return now },
		Catalog: stepCatalog{c: w.cat, s: s},
		Fence: func(ctx context.Context, p int32) error {
			_, err := sink.FenceForCompaction(ctx, w.settings(s), "c", w.lay.Name, p, nil)
			return err
		},
	})
}

// look is a reader's query: what the Hive partition's location holds must
// have no record twice, and every record it ever showed must still be
// there (never neither). Records committed while readers wait for the
// switch may be missing until it: delayed, not lost.
func (w *world) look() error {
	got, err := visibleCached(w.mem, w.cat.location(w.lay, dir), w.cache)
	if err != nil {
		return fmt.Errorf("reader: %w", err)
	}
	for p, offs := range got {
		count := map[int64]int{}
		for _, o := range offs {
			count[o]++
			if count[o] > 1 {
				return fmt.Errorf("reader sees partition %d offset %d twice (location %s)", p, o, w.cat.location(w.lay, dir))
			}
		}
		for o := range w.seen[p] {
			if count[o] == 0 {
				return fmt.Errorf("reader no longer sees partition %d offset %d (location %s)", p, o, w.cat.location(w.lay, dir))
			}
		}
		if w.seen[p] == nil {
			w.seen[p] = map[int64]bool{}
		}
		for o := range count {
			w.seen[p][o] = true
		}
	}
	for p, offs := range w.want {
		for _, o := range offs {
			if o < 100 && !slices.Contains(got[p], o) { // every record committed before the compaction
				return fmt.Errorf("reader misses partition %d offset %d (location %s)", p, o, w.cat.location(w.lay, dir))
			}
		}
	}
	return nil
}

// late is the owner committing two more records.
func (w *world) late() error {
	start := w.nextLate
	w.nextLate += 2
	return w.owner.commit(start, start+1)
}

// settle runs compactions until the compaction is done and cleaned, then
// the owner commits once more, and checks the end state: the reader sees
// every committed offset exactly once, no covered input is left, no staging.
func (w *world) settle() error {
	for i, now := range []time.Time{w.now, w.now.Add(2 * time.Hour)} {
		s := &stepFS{FS: w.mem, before: func(int) error { return w.look() }}
		if _, err := w.compactor(s, now).Run(bg, dir); err != nil {
			var refused *RefusedError
			if !(i == 1 && errors.As(err, &refused)) {
				return fmt.Errorf("compaction run %d after the crash: %w", i+1, err)
			}
		}
	}
	if err := w.late(); err != nil {
		return err
	}
	got, err := visible(w.mem, w.cat.location(w.lay, dir))
	if err != nil {
		return err
	}
	if err := exactlyOnce(got, w.want); err != nil {
		return fmt.Errorf("at the end: %w", err)
	}
	if w.cat.location(w.lay, dir) != w.lay.CompactedDir(dir) {
		return fmt.Errorf("readers not switched: location %s", w.cat.location(w.lay, dir))
	}
	left, err := w.mem.ReadDir(bg, path.Join(w.lay.Dir(), dir))
	if err != nil {
		return err
	}
	if len(left) != 0 {
		return fmt.Errorf("%d inputs left after the grace period", len(left))
	}
	if st, _ := w.mem.ReadDir(bg, w.lay.CompactionStagingRoot()); len(st) != 0 {
		return fmt.Errorf("staging left: %s", st[0].Name())
	}
	return nil
}

// calls is how many numbered calls a whole compaction makes.
func calls(t *testing.T, ext string) int {
	w := newWorld(t, ext)
	s := &stepFS{FS: w.mem}
	if _, err := w.compactor(s, w.now).Run(bg, dir); err != nil {
		t.Fatal(err)
	}
	return s.n
}

// TestCompactionCrashAtEachStep: the owner of partition 0 commits late
// records at call j of the compaction, which dies at call k (the store
// keeps what was closed); later compactions finish it. At every call,
// readers of the Hive partition see no record twice and never lose one
// they saw; at the end they see every record exactly once, and nothing is
// left behind. Every (j, k); Avro and Parquet.
func TestCompactionCrashAtEachStep(t *testing.T) {
	for _, ext := range []string{".avro", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			n := calls(t, ext)
			stride := 4 // late commits at every 4th call; crashes at every call
			if *sweepFull {
				stride = 1
			}
			runs := 0
			for j := 1; j <= n+1; j += stride {
				for k := 1; k <= n+1; k++ {
					w := newWorld(t, ext)
					s := &stepFS{FS: w.mem, crashAt: k}
					s.before = func(at int) error {
						if at == j {
							if err := w.late(); err != nil {
								return err
							}
						}
						return w.look()
					}
					_, err := w.compactor(s, w.now).Run(bg, dir)
					if err != nil && !errors.Is(err, errCrash) {
						t.Fatalf("late commit at %d, crash at %d: %v", j, k, err)
					}
					w.mem.Crash()
					if err := w.settle(); err != nil {
						t.Fatalf("late commit at %d, crash at %d: %v", j, k, err)
					}
					runs++
				}
			}
			t.Logf("%d calls per compaction, %d runs", n, runs)
		})
	}
}

// TestZombieCompactor: compaction A freezes before its call i; compaction
// B runs to the end (and past the grace period); A thaws and goes on.
// Readers never see a record twice or lose one, and the end state is
// exactly once. Every i.
func TestZombieCompactor(t *testing.T) {
	n := calls(t, ".avro")
	for i := 1; i <= n; i++ {
		w := newWorld(t, ".avro")
		a := &stepFS{FS: w.mem, freezeAt: i, frozen: make(chan struct{}), thaw: make(chan struct{}),
			before: func(int) error { return w.look() }}
		done := make(chan error, 1)
		go func() {
			_, err := w.compactor(a, w.now).Run(bg, dir)
			done <- err
		}()
		select {
		case <-a.frozen:
		case err := <-done:
			t.Fatalf("A finished before call %d: %v", i, err)
		}
		if err := w.late(); err != nil {
			t.Fatal(err)
		}
		for _, now := range []time.Time{w.now, w.now.Add(2 * time.Hour)} {
			b := &stepFS{FS: w.mem, before: func(int) error { return w.look() }}
			if _, err := w.compactor(b, now).Run(bg, dir); err != nil {
				var refused *RefusedError
				if !errors.As(err, &refused) {
					t.Fatalf("A frozen at %d: B: %v", i, err)
				}
			}
		}
		close(a.thaw)
		<-done // A may fail (its staging was removed), never harm
		if err := w.look(); err != nil {
			t.Fatalf("A frozen at %d, after it thawed: %v", i, err)
		}
		if err := w.settle(); err != nil {
			t.Fatalf("A frozen at %d: %v", i, err)
		}
	}
}
