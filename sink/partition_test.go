package sink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"path"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

const testTopic = "orders"

// crash is what panicFaults throws: the in-process stand-in for SIGKILL.
type crash struct{ at State }

// panicFaults "kills" the partition the n-th time it enters state.
type panicFaults struct {
	state State
	n     int
	seen  int
}

func (f *panicFaults) Enter(s State) {
	if s != f.state {
		return
	}
	if f.seen++; f.seen == f.n {
		panic(crash{s})
	}
}

// hookFaults runs a function when a state is entered (once).
type hookFaults map[State]func()

func (h hookFaults) Enter(s State) {
	if fn := h[s]; fn != nil {
		delete(h, s)
		fn()
	}
}

type fixture struct {
	t          *testing.T
	fs         storage.FS
	reg        *registry.Memory
	sch        *schema.Schema
	n          int
	part       partitioner.Partitioner // default when nil
	pruneEvery uint64                  // 0: prune the WAL after every commit
	// mixed, when set, writes every other ten offsets with a newer schema
	// under BACKWARD, and the older records in between are bad records,
	// dead-lettered into dlq (sweep_extra_test.go).
	mixed     *mixedSchemas
	dlq       *deadLetters
	topicID   [16]byte // what the fixture's batches say; zero: not sent
	flushSize int64    // 0: 100
	topic     string   // "": testTopic
}

func newFixture(t *testing.T, fs storage.FS) *fixture {
	reg := registry.NewMemory()
	id, err := reg.Register(demodata.Schema)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := reg.SchemaByID(context.Background(), id)
	return &fixture{t: t, fs: fs, reg: reg, sch: s}
}

func (f *fixture) partition(faults Faults) *partition {
	f.n++
	return f.owner(f.fs, fmt.Sprintf("epoch%d", f.n), faults)
}

// owner is a new owner of the test partition writing through fsys, with
// the given process epoch (owners of one process share it).
func (f *fixture) owner(fsys storage.FS, epoch string, faults Faults) *partition {
	return f.ownerOf(0, fsys, epoch, faults)
}

// ownerOf is owner for Kafka partition part of the test topic.
func (f *fixture) ownerOf(part int32, fsys storage.FS, epoch string, faults Faults) *partition {
	avroFormat, err := avro.New(avro.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	flush := f.flushSize
	if flush == 0 {
		flush = 100
	}
	topic := f.topic
	if topic == "" {
		topic = testTopic
	}
	cfg := partitionConfig{
		WriteSettings: WriteSettings{
			FS: fsys, Format: avroFormat, Partitioner: f.partitioner(), Pad: 10, FlushSize: flush,
			Location: time.UTC, Faults: faults, Now: time.Now,
		},
		Layout:    layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: topic},
		Partition: part, Owner: "test", Epoch: epoch,
		Logger: testLogger(), PruneEvery: f.pruneEvery,
	}
	if f.mixed != nil {
		cfg.Compatibility, cfg.SchemaByID = schema.CompatBackward, f.reg.SchemaByID
	}
	return newPartition(cfg)
}

func (f *fixture) partitioner() partitioner.Partitioner {
	if f.part == nil {
		return partitioner.Default{}
	}
	return f.part
}

// record is offset off; its Kafka timestamp advances 7 minutes per offset,
// so an hourly partitioner spreads one rotation over several directories.
func (f *fixture) record(off int64) record {
	if f.mixed != nil && f.mixed.newer(off) {
		return f.mixed.record(f.t, off)
	}
	v, err := demodata.Value(f.sch.ID, 0, off)
	if err != nil {
		f.t.Fatal(err)
	}
	_, datum, _ := schema.ParseWire(v)
	ts := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC).Add(time.Duration(off) * 7 * time.Minute)
	return record{Offset: off, Timestamp: ts, Schema: f.sch, Datum: datum}
}

// drive recovers p and writes offsets up to n (exclusive), then commits the
// tail as a graceful release does. crashed reports a simulated SIGKILL.
func (f *fixture) drive(p *partition, n int64) (crashed bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	ctx := context.Background()
	next, err := p.resume(ctx, nil)
	if err != nil {
		return false, err
	}
	if err := p.beginBatch(batchOf(max(next, 0), n-1)); err != nil {
		return false, err
	}
	for off := max(next, 0); off < n; off++ {
		if err := p.write(ctx, ctx, f.record(off)); err != nil {
			return false, err
		}
	}
	if err := p.endBatch(ctx); err != nil {
		return false, err
	}
	if !p.w.Empty() {
		return false, p.rotate(ctx, "end of test")
	}
	return false, nil
}

// batchOf is a fetched batch of offsets first..last with no log offsets known.
func batchOf(first, last int64) fetchedBatch {
	return fetchedBatch{First: first, Last: last, LogStart: -1, HighWatermark: -1}
}

func (f *fixture) check(n int64) verify.Report {
	f.t.Helper()
	rep, err := verify.Check(context.Background(), f.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: n}, SeqField: "seq"})
	if err != nil {
		f.t.Fatalf("exactly-once violated: %v", err)
	}
	if len(rep.TempFiles) > 0 {
		f.t.Fatalf("temp files left after a clean finish: %v", rep.TempFiles)
	}
	return rep
}

// TestCrashAtEveryState kills the writer on the 1st, 2nd and 3rd entry of
// every state of both machines, restarts it as a new owner, and checks that
// every offset is committed exactly once.
//
// It runs with the WAL pruned after every commit and after every third
// (PruneEvery), so that crashes meet logs with and without old segments.
func TestCrashAtEveryState(t *testing.T) {
	const n = 350
	for _, prune := range []uint64{1, 3} {
		for s := RecoveryStarted; s <= FileCommitted; s++ {
			for hit := 1; hit <= 3; hit++ {
				t.Run(fmt.Sprintf("prune%d/%s#%d", prune, s, hit), func(t *testing.T) {
					crashAtState(t, prune, s, hit, n)
				})
			}
		}
	}
}

func crashAtState(t *testing.T, prune uint64, s State, hit int, n int64) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	f.pruneEvery = prune
	crashed, err := f.drive(f.partition(&panicFaults{state: s, n: hit}), n)
	if err != nil {
		t.Fatal(err)
	}
	// Every state is entered at least once; the write states of
	// the rotation several times (350 records, flush.size 100).
	rotationState := s >= ShouldRotate
	if want := hit == 1 || rotationState; want && !crashed {
		t.Fatalf("state %s entered fewer than %d times: no crash", s, hit)
	}
	mem.Crash()
	if _, err := f.drive(f.partition(nil), n); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	f.check(n)
}

// TestCrashDuringMultiDirectoryRotation: with an hourly partitioner one
// rotation commits files in several directories; a crash at any state must
// still leave every offset exactly once.
func TestCrashDuringMultiDirectoryRotation(t *testing.T) {
	const n = 350
	berlin, err := time.LoadLocation("Europe/Berlin") // 2026-03-29 is a DST change there
	if err != nil {
		t.Fatal(err)
	}
	hourly, err := partitioner.New(partitioner.Config{Kind: partitioner.KindHourly, Location: berlin, Locale: "en", Extractor: partitioner.RecordTime})
	if err != nil {
		t.Fatal(err)
	}
	for s := RecoveryStarted; s <= FileCommitted; s++ {
		t.Run(s.String(), func(t *testing.T) {
			mem := storagetest.NewMemFS()
			f := newFixture(t, mem)
			f.part = hourly
			if crashed, err := f.drive(f.partition(&panicFaults{state: s, n: 2}), n); err != nil || (s >= ShouldRotate && !crashed) {
				t.Fatalf("crashed=%v err=%v", crashed, err)
			}
			mem.Crash()
			if _, err := f.drive(f.partition(nil), n); err != nil {
				t.Fatal(err)
			}
			rep := f.check(n)
			dirs := map[string]bool{}
			for _, file := range rep.Files {
				dirs[path.Dir(file.Path)] = true
			}
			if len(dirs) < 30 {
				t.Fatalf("only %d hour directories: the test does not exercise multi-directory rotations", len(dirs))
			}
		})
	}
}

// TestCrashStorm crashes repeatedly at random states, including during the
// recoveries that follow crashes, until the writer finishes once.
func TestCrashStorm(t *testing.T) {
	const n = 1000
	for seed := int64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			mem := storagetest.NewMemFS()
			f := newFixture(t, mem)
			f.pruneEvery = uint64(1 + 7*(seed%2)) // odd seeds prune every 8th commit, as connectors do
			crashes := 0
			for {
				faults := &panicFaults{state: State(rng.Intn(int(FileCommitted) + 1)), n: 1 + rng.Intn(8)}
				crashed, err := f.drive(f.partition(faults), n)
				if err != nil {
					t.Fatal(err)
				}
				if !crashed {
					break
				}
				crashes++
				mem.Crash()
			}
			f.check(n)
			t.Logf("%d crashes", crashes)
		})
	}
}

// TestZombieCannotCommitAfterClaim: a new owner claims while the old one
// still has open files; the old owner's next commit must fail.
func TestZombieCannotCommitAfterClaim(t *testing.T) {
	ctx := context.Background()
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	zombie := f.partition(nil)
	if _, err := zombie.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < 150; off++ { // commits 0-99, holds 100-149 open
		if err := zombie.write(ctx, ctx, f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	owner := f.partition(nil)
	next, err := owner.resume(ctx, nil)
	if err != nil || next != 100 {
		t.Fatalf("new owner starts at %d (%v), want 100", next, err)
	}
	if err := zombie.rotate(ctx, "zombie"); err == nil {
		t.Fatal("zombie committed after the new owner's claim")
	}
	if _, err := f.drive(owner, 300); err != nil {
		t.Fatal(err)
	}
	f.check(300)
}

// TestZombiePublishingPrunedSegmentIsFenced: an owner frozen between closing
// its files and publishing wakes after the new owner has committed and
// pruned, so its next segment number is free again. It must still be fenced,
// and the segment it published must never be applied.
func TestZombiePublishingPrunedSegmentIsFenced(t *testing.T) {
	ctx := context.Background()
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	hooks := hookFaults{}
	zombie := f.partition(hooks)
	if _, err := zombie.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	hooks[TempFileClosed] = func() { // frozen here; meanwhile a new owner works
		if _, err := f.drive(f.partition(nil), 300); err != nil {
			t.Fatal(err)
		}
	}
	for off := int64(0); off < 100; off++ {
		if err := zombie.write(ctx, ctx, f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	err := zombie.rotate(ctx, "zombie wakes")
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("zombie's commit: err = %v, want ErrFenced", err)
	}
	if _, err := f.drive(f.partition(nil), 400); err != nil {
		t.Fatal(err)
	}
	f.check(400)
}

// TestRecoveryResumesAfterLastCommit checks the offset recovery hands to Kafka.
func TestRecoveryResumesAfterLastCommit(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, storagetest.NewMemFS())
	p := f.partition(nil)
	if next, err := p.resume(ctx, nil); err != nil || next != -1 {
		t.Fatalf("empty store: next = %d, %v; want -1 (nothing committed)", next, err)
	}
	if _, err := f.drive(p, 250); err != nil {
		t.Fatal(err)
	}
	if next, err := f.partition(nil).resume(ctx, nil); err != nil || next != 250 {
		t.Fatalf("next = %d, %v; want 250", next, err)
	}
}

// TestRecoveryWithoutWALUsesFileNames: files written before the WAL existed
// (or the WAL deleted by hand) still give the start offset.
func TestRecoveryWithoutWALUsesFileNames(t *testing.T) {
	ctx := context.Background()
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	if _, err := f.drive(f.partition(nil), 120); err != nil {
		t.Fatal(err)
	}
	if err := mem.RemoveAll(t.Context(), "/logs"); err != nil {
		t.Fatal(err)
	}
	if next, err := f.partition(nil).resume(ctx, nil); err != nil || next != 120 {
		t.Fatalf("next = %d, %v; want 120", next, err)
	}
}

// TestOffsetGaps: compaction and transaction markers leave holes; files are
// named by the offsets they hold and nothing stalls.
func TestOffsetGaps(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, storagetest.NewMemFS())
	p := f.partition(nil)
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	offs := []int64{0, 1, 5, 6, 7, 40}
	for _, off := range offs {
		if err := p.write(ctx, ctx, f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.rotate(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	if next, err := f.partition(nil).resume(ctx, nil); err != nil || next != 41 {
		t.Fatalf("next = %d, %v; want 41", next, err)
	}
}

// TestWriteFailuresNeverCommitTwice injects a storage failure at every
// operation kind of a rotation, recovers, and finishes.
func TestWriteFailuresNeverCommitTwice(t *testing.T) {
	boom := errors.New("injected")
	for _, op := range []storagetest.Op{storagetest.OpCreate, storagetest.OpWrite, storagetest.OpClose, storagetest.OpRename, storagetest.OpReadDir} {
		for _, after := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/after=%v", op, after), func(t *testing.T) {
				mem := storagetest.NewMemFS()
				f := newFixture(t, mem)
				p := f.partition(nil)
				if _, err := f.drive(p, 150); err != nil {
					t.Fatal(err)
				}
				if after {
					mem.FailNextAfter(op, storagetest.AnyPath, boom)
				} else {
					mem.FailNext(op, storagetest.AnyPath, boom)
				}
				// The failure may hit the recovery or the writes; either way a
				// later owner must finish exactly once.
				_, err := f.drive(f.partition(nil), 300)
				t.Logf("with fault: %v", err)
				if _, err := f.drive(f.partition(nil), 300); err != nil {
					t.Fatal(err)
				}
				f.check(300)
			})
		}
	}
}

func TestParseState(t *testing.T) {
	for s := RecoveryStarted; s <= FileCommitted; s++ {
		got, err := ParseState(s.String())
		if err != nil || got != s {
			t.Fatalf("ParseState(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := ParseState("NOPE"); err == nil {
		t.Fatal("unknown state accepted")
	}
}

func testLogger() *slog.Logger {
	if os.Getenv("HDFS_SINK_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// TestSchemaCompatibility: v1, v2 (a field with a default), v1 again.
// NONE rotates at every change; BACKWARD rotates to v2 and projects the late
// v1 records to it; a schema the old records cannot be read as is an error
// the connector routes by errors.tolerance.
func TestSchemaCompatibility(t *testing.T) {
	const v3NoDefault = `{"type":"record","name":"Order","namespace":"demo","fields":[{"name":"seq","type":"long"},{"name":"must","type":"string"}]}`
	for _, tc := range []struct {
		compat    schema.Compatibility
		files     int
		wantError bool
	}{
		{schema.CompatNone, 3, false},
		{schema.CompatBackward, 2, false},
		{schema.CompatBackward, 0, true},
	} {
		t.Run(fmt.Sprint(tc.compat, tc.wantError), func(t *testing.T) {
			ctx := context.Background()
			reg := registry.NewMemory()
			id1, _ := reg.Register(demodata.Schema)
			id2, _ := reg.Register(demodata.SchemaV2)
			if tc.wantError {
				id2, _ = reg.Register(v3NoDefault)
			}
			v1, _ := reg.SchemaByID(ctx, id1)
			v2, _ := reg.SchemaByID(ctx, id2)
			f := newFixture(t, storagetest.NewMemFS())
			p := f.partition(nil)
			p.cfg.Compatibility = tc.compat
			if _, err := p.resume(ctx, nil); err != nil {
				t.Fatal(err)
			}
			rec := func(off int64, s *schema.Schema) record {
				var val []byte
				switch {
				case s == v1:
					val, _ = demodata.Value(s.ID, 0, off)
				case tc.wantError:
					d, _ := s.Codec.BinaryFromNative(nil, map[string]any{"seq": off, "must": "x"})
					val = schema.AppendWire(nil, s.ID, d)
				default:
					val, _ = demodata.ValueV2(s.ID, 0, off)
				}
				_, datum, _ := schema.ParseWire(val)
				return record{Offset: off, Timestamp: time.Now(), Schema: s, Datum: datum}
			}
			var err error
			for off := int64(0); off < 30 && err == nil; off++ {
				s := v1
				if off >= 10 && off < 20 {
					s = v2
				}
				err = p.write(ctx, ctx, rec(off, s))
			}
			if tc.wantError {
				if !errors.Is(err, schema.ErrIncompatible) || !isBadRecord(err) {
					t.Fatalf("err = %v; want an incompatibility handled as a bad record", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := p.rotate(ctx, "end"); err != nil {
				t.Fatal(err)
			}
			rep := f.check(30)
			if len(rep.Files) != tc.files {
				t.Fatalf("%d files, want %d", len(rep.Files), tc.files)
			}
		})
	}
}

// TestSizeBasedRotation: hdfs.sink.rotate.max.file.bytes cuts files by size
// (the reference only counts records: its #242, #271).
func TestSizeBasedRotation(t *testing.T) {
	f := newFixture(t, storagetest.NewMemFS())
	p := f.partition(nil)
	p.cfg.FlushSize, p.cfg.MaxFileBytes = 1_000_000, 4<<10
	if _, err := f.drive(p, 300); err != nil {
		t.Fatal(err)
	}
	rep := f.check(300)
	if len(rep.Files) < 3 {
		t.Fatalf("%d files for ~%d KiB of records with a 4 KiB limit", len(rep.Files), 300*70/1024)
	}
}

// TestValueTheFormatCannotHoldIsABadRecord: a timestamp past INT96's range
// cannot go into Parquet; that is the record's fault, not a passing failure
// (which would be retried forever).
func TestValueTheFormatCannotHoldIsABadRecord(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, storagetest.NewMemFS())
	p := f.partition(nil)
	pq, err := parquet.New(parquet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.cfg.Format = pq
	p.w = newPartition(p.cfg).w
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	v, _ := demodata.ValueAt(f.sch.ID, 0, 0, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC))
	_, datum, _ := schema.ParseWire(v)
	err = p.write(ctx, ctx, record{Offset: 0, Timestamp: time.Now(), Schema: f.sch, Datum: datum})
	if err == nil || !isBadRecord(err) {
		t.Fatalf("err = %v; want a bad record", err)
	}
	if err := p.write(ctx, ctx, f.record(1)); err != nil {
		t.Fatalf("the file must stay usable after a rejected value: %v", err)
	}
}

// TestWALPrunedEveryNthCommit: with PruneEvery 8 the log keeps at most the
// segments of the last 8 commits, and a new owner still resumes exactly.
func TestWALPrunedEveryNthCommit(t *testing.T) {
	f := newFixture(t, storagetest.NewMemFS())
	f.pruneEvery = 8
	p := f.partition(nil)
	if _, err := f.drive(p, 2000); err != nil { // 20 commits of 100
		t.Fatal(err)
	}
	seqs, err := p.log.Segments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) < 2 || len(seqs) > 8 {
		t.Fatalf("%d segments after 20 commits with PruneEvery 8: %v", len(seqs), seqs)
	}
	if next, err := f.partition(nil).resume(context.Background(), nil); err != nil || next != 2000 {
		t.Fatalf("next = %d, %v; want 2000", next, err)
	}
	f.check(2000)
}
