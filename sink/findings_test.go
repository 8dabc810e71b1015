package sink

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// The tests in this file each reproduce one finding of the protocol audit
// (F1-F8 and the minor ones, docs/design.md §10) and fail without its fix.

// TestDelayedCleanupSparesNewerOwner (F1): a recoverer whose orphan
// cleanup lands after a newer owner has published a commit, but before its
// renames, must not delete that owner's temp files.
func TestDelayedCleanupSparesNewerOwner(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	f.flushSize = 50
	if err := f.run(f.partition(nil), 50); err != nil {
		t.Fatal(err)
	}
	late := hookFaults{}
	slow := f.partition(late)
	late[WALApplied] = func() { // claimed; its cleanup RPC is still on its way
		newer := hookFaults{}
		newer[WALAppended] = func() { slow.leftovers().remove(t.Context()) } // ... and lands now
		if err := f.run(f.partition(newer), 150); err != nil {
			t.Fatalf("newer owner: %v", err)
		}
	}
	_ = f.run(slow, 150) // fenced by the newer owner: its error is expected
	if err := f.run(f.partition(nil), 200); err != nil {
		t.Fatal(err)
	}
	f.check(200)
}

// TestStaleClaimAtPrunedNumberIsRetried (F2): an owner frozen between
// reading the WAL head and publishing its claim wakes after another owner
// has committed and pruned, so its claim's number is free again. The claim
// must not count: it must resume where the WAL's newest segment says.
func TestStaleClaimAtPrunedNumberIsRetried(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	f.flushSize, f.pruneEvery = 20, 1
	if err := f.run(f.partition(nil), 100); err != nil {
		t.Fatal(err)
	}
	zfs := newOpFS(mem)
	woke := false
	zfs.before = func(_ int, op, name string) {
		if op == "create" && strings.Contains(name, ".staging-") && !woke {
			woke = true // frozen just before its claim; another owner works and prunes
			if err := f.run(f.partition(nil), 350); err != nil {
				t.Fatalf("other owner: %v", err)
			}
		}
	}
	next, err := f.owner(zfs, "Z", nil).resume(context.Background(), nil)
	if err != nil || next != 350 {
		t.Fatalf("the woken owner resumes at %d (%v); the newest segment says 350", next, err)
	}
}

// TestStaleRollForwardCannotReplaceCommittedFile (F3): a recoverer frozen
// just before a roll-forward rename wakes after the partition came back to
// the process that wrote the WAL head, whose new temp files restart their
// counter. Its rename must not move the new temp file onto a committed name.
func TestStaleRollForwardCannotReplaceCommittedFile(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	f.flushSize = 100
	crashing := &panicFaults{state: WALAppended, n: 1}
	if crashed, _ := f.drive(f.owner(mem, "X", crashing), 100); !crashed {
		t.Fatal("no crash after the publish")
	}
	mem.Crash()
	bfs := newOpFS(mem)
	woke := false
	bfs.before = func(_ int, op, _ string) {
		if op == "rename" && !woke {
			woke = true // the same process gets the partition back meanwhile
			back := f.owner(mem, "X", nil)
			if _, err := back.resume(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			for off := int64(100); off < 150; off++ {
				if err := back.write(context.Background(), context.Background(), f.record(off)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	_, _ = f.owner(bfs, "B", nil).resume(context.Background(), nil)
	if err := f.run(f.partition(nil), 200); err != nil {
		t.Fatal(err)
	}
	f.check(200)
}

// TestLostPublishReplyWithFailedReadBackIsUnknown (F4): the segment rename
// takes effect, its reply is lost, and reading the segment back fails. That
// is "outcome unknown", not "taken": the temp files must stay for recovery.
func TestLostPublishReplyWithFailedReadBackIsUnknown(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	p := f.partition(nil)
	if _, err := p.resume(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < 50; off++ {
		if err := p.write(context.Background(), context.Background(), f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	lost := errors.New("connection reset")
	mem.FailNextAfter(storagetest.OpRename, storagetest.PathContains(".staging-"), lost)
	mem.FailNext(storagetest.OpOpen, storagetest.PathContains("/segment"), errors.New("no live DataNode"))
	err := p.rotate(context.Background(), "test")
	if err == nil || errors.Is(err, ErrFenced) {
		t.Fatalf("rotate = %v; want an unknown-outcome error, not fenced", err)
	}
	if err := f.run(f.partition(nil), 100); err != nil {
		t.Fatal(err)
	}
	f.check(100)
}

// TestFirstBatchFailureRewinds (F5): a partition with nothing committed
// whose first batch fails before any record is written (the registry
// refuses) must fetch that batch again after recovery.
func TestFirstBatchFailureRewinds(t *testing.T) {
	f := newFixture(t, storagetest.NewMemFS())
	p := f.partition(nil)
	if next, err := p.resume(context.Background(), nil); err != nil || next != -1 {
		t.Fatalf("resume = %d, %v", next, err)
	}
	if err := p.beginBatch(batchOf(0, 299)); err != nil {
		t.Fatal(err)
	}
	// The registry answers 401 for the first record: nothing is written.
	if next, err := p.resume(context.Background(), nil); err != nil || next != 0 {
		t.Fatalf("after a failed first batch resume = %d, %v; want 0 (fetch it again)", next, err)
	}
}

// TestOffsetsBelowCommittedStopThePartition (F6): Kafka handing out offsets
// at or below what HDFS holds (a re-created topic) is refused loudly, and
// nothing is written.
func TestOffsetsBelowCommittedStopThePartition(t *testing.T) {
	f := newFixture(t, storagetest.NewMemFS())
	if err := f.run(f.partition(nil), 350); err != nil {
		t.Fatal(err)
	}
	p := f.partition(nil)
	if _, err := p.resume(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	err := p.beginBatch(fetchedBatch{First: 0, Last: 99, LogStart: 0, HighWatermark: 200})
	var re *RewindError
	if !errors.As(err, &re) || re.Committed != 349 || re.Offset != 0 || re.HighWatermark != 200 {
		t.Fatalf("err = %v; want a RewindError naming committed 349, offset 0, high watermark 200", err)
	}
	if p.cfg.Stats.Rewinds.Load() != 1 {
		t.Fatal("rewind not counted")
	}
	if err := p.write(context.Background(), context.Background(), f.record(10)); !errors.As(err, &re) {
		t.Fatalf("write of an offset below the committed one = %v; want a RewindError", err)
	}
	f.check(350)
}

// TestTopicNameTooLongIsRefusedBeforeAnyPublish (F7): a topic whose final
// file names can exceed the store's name limit is refused at recovery,
// before a claim or commit can stand.
func TestTopicNameTooLongIsRefusedBeforeAnyPublish(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	p := f.partition(nil)
	p.cfg.Layout.Name = strings.Repeat("t", 230)
	_, err := p.resume(context.Background(), nil)
	var ne *layout.NameError
	if !errors.As(err, &ne) || ne.Partition != 0 {
		t.Fatalf("resume = %v; want a layout.NameError", err)
	}
	if _, err := mem.Stat(t.Context(), "/logs"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("something was published for a topic that cannot be written: %v", err)
	}
}

// TestFailedRotationForgetsUnwrittenSchema (F8): a schema-change rotation
// that fails must not leave the newer schema current: the older records,
// fetched again after recovery, are written as they are, not rejected.
func TestFailedRotationForgetsUnwrittenSchema(t *testing.T) {
	const v2NoDefault = `{"type":"record","name":"Order","namespace":"demo","fields":[{"name":"seq","type":"long"},{"name":"must","type":"string"}]}`
	ctx := context.Background()
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	reg := registry.NewMemory()
	id1, _ := reg.Register(demodata.Schema)
	id2, _ := reg.Register(v2NoDefault)
	v1, _ := reg.SchemaByID(ctx, id1)
	v2, _ := reg.SchemaByID(ctx, id2)
	f.sch = v1
	p := f.partition(nil)
	p.cfg.Compatibility = schema.CompatBackward
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < 10; off++ {
		if err := p.write(ctx, ctx, f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := v2.Codec.BinaryFromNative(nil, map[string]any{"seq": int64(10), "must": "x"})
	mem.FailNext(storagetest.OpClose, storagetest.PathContains("_tmp"), errors.New("HDFS hiccup"))
	if err := p.write(ctx, ctx, record{Offset: 10, Timestamp: time.Now(), Schema: v2, Datum: d}); err == nil {
		t.Fatal("the schema-change rotation did not fail")
	}
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.write(ctx, ctx, f.record(0)); err != nil {
		t.Fatalf("an older record fetched again after the failed rotation: %v", err)
	}
}

// TestOwnCommitWithVanishedFilesStops (m1): the owner's own fresh commit
// whose temp file vanished before its rename is an error that stops the
// partition, not a log line.
func TestOwnCommitWithVanishedFilesStops(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	hooks := hookFaults{}
	hooks[WALAppended] = func() { mem.RemoveAll(t.Context(), "/topics/+tmp") }
	p := f.partition(hooks)
	_, err := f.drive(p, 100)
	if !errors.Is(err, errCommittedFileMissing) || p.cfg.Stats.MissingFiles.Load() != 1 {
		t.Fatalf("err = %v; want errCommittedFileMissing, counted", err)
	}
}

// TestRecoveryHousekeepingFailuresDoNotStopIt (m2): failing to prune the
// WAL or to remove orphans is logged; the partition still recovers.
func TestRecoveryHousekeepingFailuresDoNotStopIt(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	f.flushSize, f.pruneEvery = 20, 1000
	if err := f.run(f.partition(nil), 100); err != nil {
		t.Fatal(err)
	}
	denied := errors.New("permission denied")
	mem.FailNext(storagetest.OpRemove, storagetest.PathContains("/logs/"), denied)
	mem.FailNext(storagetest.OpRemove, storagetest.PathContains("/+tmp/"), denied)
	if next, err := f.partition(nil).resume(context.Background(), nil); err != nil || next != 100 {
		t.Fatalf("resume = %d, %v; want 100 despite failing deletes", next, err)
	}
}

// TestEmptiedWALIsAnErrorNotAPanic (m3): a WAL directory deleted under a
// running partition makes its commit fail, never panic.
func TestEmptiedWALIsAnErrorNotAPanic(t *testing.T) {
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	ofs := newOpFS(mem)
	ofs.after = func(_ int, op, name string) {
		if op == "rename" && strings.Contains(name, ".staging-") && strings.Contains(name, "00000000000000000002") {
			mem.RemoveAll(t.Context(), "/logs")
		}
	}
	_, err := f.drive(f.owner(ofs, "A", nil), 50)
	if err == nil || !strings.Contains(err.Error(), "was it deleted?") {
		t.Fatalf("err = %v; want the emptied WAL named", err)
	}
}

// TestTopicWalkedOncePerAssignment (m7): partitions of a topic recovered
// together, without a WAL, share one walk of the topic's directory.
func TestTopicWalkedOncePerAssignment(t *testing.T) {
	hourly := sweepCases(t)[2].part
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	f.part = hourly
	ofs := newOpFS(mem)
	walks := 0
	ofs.before = func(_ int, op, name string) {
		if op == "readdir" && name == "/topics/"+testTopic {
			walks++
		}
	}
	scans := newTopicScans()
	for part := int32(0); part < 4; part++ {
		p := f.ownerOf(part, ofs, "A", nil)
		if _, err := p.resume(context.Background(), scans); err != nil {
			t.Fatal(err)
		}
	}
	if walks != 1 {
		t.Fatalf("the topic directory was walked %d times for 4 partitions", walks)
	}
}

// TestRetentionGapIsReported (m8): offsets removed by retention before
// they were read are counted; a gap of compaction or transaction markers
// (the log still starts before it) is not.
func TestRetentionGapIsReported(t *testing.T) {
	f := newFixture(t, storagetest.NewMemFS())
	if err := f.run(f.partition(nil), 100); err != nil {
		t.Fatal(err)
	}
	p := f.partition(nil)
	if _, err := p.resume(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := p.beginBatch(fetchedBatch{First: 103, Last: 110, LogStart: 0, HighWatermark: 111}); err != nil {
		t.Fatal(err)
	}
	if n := p.cfg.Stats.RetentionGaps.Load(); n != 0 {
		t.Fatalf("a compaction gap counted as a retention gap (%d)", n)
	}
	if err := p.beginBatch(fetchedBatch{First: 500, Last: 510, LogStart: 500, HighWatermark: 511}); err != nil {
		t.Fatal(err)
	}
	if n := p.cfg.Stats.RetentionGaps.Load(); n != 1 {
		t.Fatalf("retention gap counted %d times, want 1", n)
	}
}

// TestRejectedRecordDoesNotChangeCurrentSchema (F8, second way): a record
// with a newer schema that the partitioner then rejects must not make that
// schema current: no file is written with it, and the older records after
// it are written as they are.
func TestRejectedRecordDoesNotChangeCurrentSchema(t *testing.T) {
	const v2 = `{"type":"record","name":"Order","namespace":"demo","fields":[{"name":"seq","type":"long"},{"name":"must","type":"string"}]}`
	ctx := context.Background()
	f := newFixture(t, storagetest.NewMemFS())
	byCustomer, err := partitioner.NewField([]string{"customer"})
	if err != nil {
		t.Fatal(err)
	}
	f.part = byCustomer
	reg := registry.NewMemory()
	reg.Register(demodata.Schema)
	id2, _ := reg.Register(v2)
	s2, _ := reg.SchemaByID(ctx, id2)
	p := f.partition(nil)
	p.cfg.Compatibility = schema.CompatBackward
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < 10; off++ {
		if err := p.write(ctx, ctx, f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := s2.Codec.BinaryFromNative(nil, map[string]any{"seq": int64(10), "must": "x"})
	if err := p.write(ctx, ctx, record{Offset: 10, Timestamp: time.Now(), Schema: s2, Datum: d}); !isBadRecord(err) {
		t.Fatalf("a record without the partition field: %v; want a bad record", err)
	}
	if err := p.write(ctx, ctx, f.record(11)); err != nil {
		t.Fatalf("an older record after the rejected one: %v", err)
	}
}

// TestResetOffsetIsTheWayOut (F6): after a re-created topic, the operator
// moves the old files aside and resets the partition to the new log's
// start; the owner resumes there, and every new offset lands once. A reset
// that would reuse committed names is refused.
func TestResetOffsetIsTheWayOut(t *testing.T) {
	ctx := context.Background()
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	if err := f.run(f.partition(nil), 350); err != nil {
		t.Fatal(err)
	}
	owner := f.partition(nil)
	if _, err := owner.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	s := owner.cfg.WriteSettings
	s.TopicsDir = func(string) string { return "/topics" }
	s.LogsDir = func(string) string { return "/logs" }
	var re *ResetError
	if err := ResetOffset(ctx, s, Reset{Topic: testTopic, Partition: 0, Next: 0}, testLogger()); !errors.As(err, &re) || re.Last != 349 {
		t.Fatalf("reset over committed files = %v; want a ResetError naming offset 349", err)
	}
	if err := mem.Rename(t.Context(), "/topics/"+testTopic, "/old-"+testTopic); err != nil {
		t.Fatal(err)
	}
	if err := ResetOffset(ctx, s, Reset{Topic: testTopic, Partition: 0, Next: 0}, testLogger()); err != nil {
		t.Fatal(err)
	}
	if next, err := owner.resume(ctx, nil); err != nil || next != -1 {
		t.Fatalf("after the reset the owner resumes at %d (%v); want -1: nothing committed, the new log's start", next, err)
	}
	if err := f.run(f.partition(nil), 120); err != nil {
		t.Fatal(err)
	}
	f.check(120)
}
