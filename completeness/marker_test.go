package completeness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

const topic = "clicks"

var topicLayout = layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: topic}

func at(h, m int) time.Time { return time.Date(2026, 5, 1, h, m, 0, 0, time.UTC) }

func hourDir(h int) string { return fmt.Sprintf("year=2026/month=05/day=01/hour=%02d", h) }

// world is a store with committed files and WAL heads, Kafka's log ends,
// a metastore and a clock: everything a marker reads.
type world struct {
	t       *testing.T
	fs      *storagetest.MemFS
	ends    map[int32]int64
	now     time.Time
	catalog *fakeCatalog
	seq     map[int32]uint64
	marked  map[string]int // directory → how often the metric heard of it
	mu      sync.Mutex
}

func newWorld(t *testing.T, partitions int) *world {
	w := &world{t: t, fs: storagetest.NewMemFS(), ends: map[int32]int64{}, now: at(16, 0),
		catalog: &fakeCatalog{params: map[string]string{}}, seq: map[int32]uint64{}, marked: map[string]int{}}
	for p := range int32(partitions) {
		w.ends[p] = 0
	}
	return w
}

// commit publishes a commit of partition p up to offset last with max
// record time maxAt, and renames its file into hour h's directory unless
// pending (a crash between the WAL publish and the rename).
func (w *world) commit(p int32, first, last int64, h int, maxAt time.Time, pending bool) {
	w.t.Helper()
	ctx := context.Background()
	final := topicLayout.FinalPath(hourDir(h), p, first, last, 10, ".avro")
	temp := fmt.Sprintf("/topics/+tmp/%s/%d/x-%d.avro", topic, p, first)
	f, err := w.fs.Create(ctx, temp)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		w.t.Fatal(err)
	}
	w.seq[p]++
	e := entry.Entry{Kind: entry.KindCommit, Epoch: "e", Topic: topic, Partition: p, CommittedOffset: last, LeaderEpoch: -1,
		MaxRecordMillis: maxAt.UnixMilli(), Files: []entry.FileMove{{Temp: temp, Final: final, StartOffset: first, EndOffset: last, Records: last - first + 1}}}
	if err := wal.Open(w.fs, topicLayout.WALDir(p)).Publish(ctx, w.seq[p], e); err != nil {
		w.t.Fatal(err)
	}
	if !pending {
		w.rename(temp, final)
	}
}

func (w *world) rename(temp, final string) {
	w.t.Helper()
	if err := w.fs.MkdirAll(context.Background(), path.Dir(final)); err != nil {
		w.t.Fatal(err)
	}
	if err := w.fs.Rename(context.Background(), temp, final); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) marker(faults func(Step)) *Marker {
	hourly, err := partitioner.New(partitioner.Config{Kind: partitioner.KindHourly, Location: time.UTC, Locale: "en", Extractor: partitioner.RecordTime})
	if err != nil {
		w.t.Fatal(err)
	}
	return NewMarker(Config{
		FS: w.fs, Layout: topicLayout, Partitioner: hourly.(partitioner.Timed), Lateness: 10 * time.Minute, Lookback: 24 * time.Hour,
		LogEnds: func(context.Context, string) (map[int32]int64, error) {
			ends := map[int32]int64{}
			for p, e := range w.ends {
				ends[p] = e
			}
			return ends, nil
		},
		Catalog: w.catalog, Now: func() time.Time { return w.now },
		Marked: func(dir string) { w.mu.Lock(); w.marked[dir]++; w.mu.Unlock() },
		Faults: faults,
	})
}

func (w *world) hasMarker(h int) bool {
	_, err := w.fs.Stat(context.Background(), path.Join(topicLayout.Dir(), hourDir(h), DefaultMarkerName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.t.Fatal(err)
	}
	return err == nil
}

// markers says which of the hours have a marker, e.g. "13:yes 14:no".
func (w *world) markers(hours ...int) string {
	s := ""
	for _, h := range hours {
		s += fmt.Sprintf("%d:%v ", h, w.hasMarker(h))
	}
	return s
}

type fakeCatalog struct {
	mu     sync.Mutex
	params map[string]string // directory → the parameter's value
	fail   error
}

func (c *fakeCatalog) MarkComplete(_ context.Context, tp, encoded string, params map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return c.fail
	}
	if tp != topic {
		return fmt.Errorf("topic %q", tp)
	}
	c.params[encoded] = params[HiveParameter]
	return nil
}

func (c *fakeCatalog) has(h int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.params[hourDir(h)] != ""
}

// TestMarksOnlyCompleteDirectories: two partitions, hours 13 and 14 with
// files; partition 1 has committed up to 14:20, so hour 13 (ends 14:00,
// +10 min lateness) is complete and hour 14 is not until partition 1
// passes 15:10 or becomes idle with the clock past 15:10.
func TestMarksOnlyCompleteDirectories(t *testing.T) {
	w := newWorld(t, 2)
	w.commit(0, 0, 9, 13, at(13, 50), false)
	w.commit(0, 10, 19, 14, at(15, 30), false)
	w.commit(1, 0, 9, 14, at(14, 20), false)
	w.ends[0], w.ends[1] = 20, 15 // partition 1 has 5 records not committed
	m := w.marker(nil)
	pass, err := m.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := w.markers(13, 14); got != "13:true 14:false " || len(pass.Marked) != 1 || !w.catalog.has(13) || w.catalog.has(14) {
		t.Fatalf("after partition 1 reached 14:20: markers %s, pass marked %v, catalog %v", got, pass.Marked, w.catalog.params)
	}
	if len(pass.Verdict.Holding) != 1 || pass.Verdict.Holding[0] != 1 {
		t.Fatalf("holding %v, want partition 1", pass.Verdict.Holding)
	}
	w.commit(1, 10, 14, 14, at(14, 40), false) // now idle: everything committed
	if _, err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := w.markers(13, 14); got != "13:true 14:true " {
		t.Fatalf("after partition 1 went idle with the clock at 16:00: markers %s", got)
	}
	if w.marked[hourDir(13)] != 1 || w.marked[hourDir(14)] != 1 {
		t.Fatalf("metric heard %v, want each hour once", w.marked)
	}
}

// TestIdleNeedsTheClock: an idle partition passes a directory only when
// the wall clock is past its end plus the lateness.
func TestIdleNeedsTheClock(t *testing.T) {
	w := newWorld(t, 2)
	w.commit(0, 0, 9, 14, at(16, 0), false)
	w.commit(1, 0, 9, 14, at(14, 5), false)
	w.ends[0], w.ends[1] = 10, 10
	w.now = at(15, 9)
	m := w.marker(nil)
	if _, err := m.Run(t.Context()); err != nil || w.hasMarker(14) {
		t.Fatalf("clock at 15:09: marked %v, err %v; want not marked", w.hasMarker(14), err)
	}
	w.now = at(15, 10)
	if _, err := m.Run(t.Context()); err != nil || !w.hasMarker(14) {
		t.Fatalf("clock at 15:10: marked %v, err %v; want marked", w.hasMarker(14), err)
	}
}

// TestWaitsForPendingRenames: a crash between a commit's WAL segment and
// its renames leaves the newest commit unapplied; its records count in the
// WAL head, but the directory is not marked until its files are at their
// final names (even when the rename is what creates the directory).
func TestWaitsForPendingRenames(t *testing.T) {
	for _, newDir := range []bool{false, true} {
		t.Run(fmt.Sprint("new directory ", newDir), func(t *testing.T) {
			w := newWorld(t, 1)
			if !newDir {
				w.commit(0, 0, 9, 14, at(14, 30), false)
			}
			w.commit(0, 10, 19, 14, at(15, 30), true)
			w.ends[0] = 20
			m := w.marker(nil)
			_, err := m.Run(t.Context())
			var pe *PendingError
			if !errors.As(err, &pe) || pe.Partition != 0 || w.hasMarker(14) || w.catalog.has(14) {
				t.Fatalf("Run = %v, marker %v; want a PendingError and no marker", err, w.hasMarker(14))
			}
			w.rename(fmt.Sprintf("/topics/+tmp/%s/0/x-10.avro", topic), topicLayout.FinalPath(hourDir(14), 0, 10, 19, 10, ".avro"))
			if _, err := m.Run(t.Context()); err != nil || !w.hasMarker(14) {
				t.Fatalf("after the renames: Run = %v, marker %v", err, w.hasMarker(14))
			}
		})
	}
}

// TestCrashAtEveryMarkingStep kills a marker at each step of marking hour
// 14 (a panic, the in-process SIGKILL), crashes the store (open handles
// lost), and runs a new marker: the directory ends up with its Hive
// parameter and its marker file, and the metric heard of it at most once
// (exactly once unless the crash came after the marker file was written
// and before the metric: the marker's existence is the state).
func TestCrashAtEveryMarkingStep(t *testing.T) {
	for _, step := range []Step{StepJudged, StepCataloged, StepMarked} {
		t.Run(step.String(), func(t *testing.T) {
			w := newWorld(t, 2)
			w.commit(0, 0, 9, 14, at(15, 30), false)
			w.commit(1, 0, 9, 14, at(15, 40), false)
			w.ends[0], w.ends[1] = 100, 100
			crashed := func() (crashed bool) {
				defer func() {
					if r := recover(); r != nil {
						crashed = r == step
					}
				}()
				_, err := w.marker(func(s Step) {
					if s == step {
						panic(s)
					}
				}).Run(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				return false
			}()
			if !crashed {
				t.Fatalf("step %s never reached", step)
			}
			w.fs.Crash()
			if got := w.hasMarker(14); got != (step == StepMarked) {
				t.Fatalf("after a crash at %s: marker %v", step, got)
			}
			if _, err := w.marker(nil).Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			want := 1
			if step == StepMarked {
				want = 0
			}
			if !w.hasMarker(14) || !w.catalog.has(14) || w.marked[hourDir(14)] != want {
				t.Fatalf("after restart: marker %v, catalog %v, metric %d (want %d)", w.hasMarker(14), w.catalog.has(14), w.marked[hourDir(14)], want)
			}
		})
	}
}

// TestStoreAndCatalogFailures: a failing catalog or marker create leaves
// the directory unmarked (never a marker without its Hive parameter), and
// the next pass marks it.
func TestStoreAndCatalogFailures(t *testing.T) {
	boom := errors.New("boom")
	tests := map[string]func(w *world){
		"catalog fails":       func(w *world) { w.catalog.fail = boom },
		"marker create fails": func(w *world) { w.fs.FailNext(storagetest.OpCreate, storagetest.PathContains(DefaultMarkerName), boom) },
		"marker close fails":  func(w *world) { w.fs.FailNext(storagetest.OpClose, storagetest.PathContains(DefaultMarkerName), boom) },
		"WAL list fails":      func(w *world) { w.fs.FailNext(storagetest.OpReadDir, storagetest.PathContains("/logs/"), boom) },
		"stat fails":          func(w *world) { w.fs.FailNext(storagetest.OpStat, storagetest.PathContains("hour=14"), boom) },
	}
	for name, inject := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, 1)
			w.commit(0, 0, 9, 14, at(15, 30), false)
			w.ends[0] = 10
			inject(w)
			m := w.marker(nil)
			if _, err := m.Run(t.Context()); !errors.Is(err, boom) {
				t.Fatalf("Run = %v, want boom", err)
			}
			if w.hasMarker(14) && !w.catalog.has(14) {
				t.Fatal("a marker without its Hive parameter")
			}
			w.catalog.fail = nil
			if _, err := m.Run(t.Context()); err != nil || !w.hasMarker(14) || !w.catalog.has(14) {
				t.Fatalf("next pass: %v, marker %v, catalog %v", err, w.hasMarker(14), w.catalog.has(14))
			}
		})
	}
}

// TestTwoMarkersCountOnce: two markers (a rebalance, two daemons) mark the
// same directories; each is marked once and counted once.
func TestTwoMarkersCountOnce(t *testing.T) {
	w := newWorld(t, 1)
	for h := 10; h < 15; h++ {
		w.commit(0, int64(h)*10, int64(h)*10+9, h, at(h, 30), false)
	}
	w.commit(0, 150, 159, 15, at(15, 30), false)
	w.ends[0] = 160
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.marker(nil).Run(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for h := 10; h < 15; h++ {
		if !w.hasMarker(h) || w.marked[hourDir(h)] != 1 {
			t.Errorf("hour %d: marker %v, counted %d times", h, w.hasMarker(h), w.marked[hourDir(h)])
		}
	}
	if w.hasMarker(15) {
		t.Error("hour 15 marked: partition 0 is at 15:30, short of 16:10, and the clock is at 16:00")
	}
}

// TestEveryPartitionMustBeKnown: a partition Kafka names without a log end
// offset stops the pass; so does a topic without partitions.
func TestEveryPartitionMustBeKnown(t *testing.T) {
	w := newWorld(t, 2)
	w.commit(0, 0, 9, 14, at(15, 30), false)
	delete(w.ends, 0)
	w.ends[1] = 0
	if _, err := w.marker(nil).Run(t.Context()); err == nil || w.hasMarker(14) {
		t.Fatalf("Run = %v, marker %v; want an error naming partition 0", err, w.hasMarker(14))
	}
	w.ends = map[int32]int64{}
	if _, err := w.marker(nil).Run(t.Context()); err == nil {
		t.Fatal("Run with no partitions succeeded")
	}
}

// TestLookbackBoundsEveryPass: a pass before any commit (the frontier then
// says 1970) does not leave the marker walking every hour since 1970 on
// the next pass: each pass starts at most the lookback before its
// frontier.
func TestLookbackBoundsEveryPass(t *testing.T) {
	w := newWorld(t, 1)
	w.ends[0] = 10 // records in Kafka, nothing committed: not idle, frontier at 0 − lateness
	m := w.marker(nil)
	if _, err := m.Run(t.Context()); err != nil || m.cursor > 0 {
		t.Fatalf("first pass: %v, cursor %d", err, m.cursor)
	}
	w.commit(0, 0, 9, 14, at(15, 30), false)
	pass, err := m.Run(t.Context())
	if err != nil || !w.hasMarker(14) {
		t.Fatalf("after the commit: %v, marker %v", err, w.hasMarker(14))
	}
	if oldest := pass.Verdict.Frontier - (24 * time.Hour).Milliseconds(); pass.From < oldest {
		t.Fatalf("the pass looked from %v, before the lookback's start %v", time.UnixMilli(pass.From).UTC(), time.UnixMilli(oldest).UTC())
	}
}
