package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// mixedSchemas writes offsets with off%20 < 10 with v2NoDefault, a newer
// schema the older records cannot be read as under BACKWARD: every older
// record after a newer one is a bad record, and must stay one whatever
// crash or rebalance comes between (the verdict is a function of the
// record and the committed state, docs/design.md §4).
type mixedSchemas struct {
	v2 *schema.Schema
}

func newMixedSchemas(t *testing.T, reg *registry.Memory) *mixedSchemas {
	id, err := reg.Register(v2NoDefault)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := reg.SchemaByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return &mixedSchemas{v2: v2}
}

func (m *mixedSchemas) newer(off int64) bool { return off%20 < 10 }

// record is offset off written with the newer schema, at the fixture's
// 7 minutes per offset.
func (m *mixedSchemas) record(t *testing.T, off int64) record {
	d, err := m.v2.Codec.BinaryFromNative(nil, map[string]any{"seq": off, "must": "x"})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC).Add(time.Duration(off) * 7 * time.Minute)
	return record{Offset: off, Timestamp: ts, Schema: m.v2, Datum: d}
}

// deadLetters stands in for the dead-letter topic: at least once, so an
// offset may arrive several times (a crashed owner's records are read again).
type deadLetters struct {
	mu      sync.Mutex
	offsets map[int64]bool
}

func newDeadLetters() *deadLetters { return &deadLetters{offsets: map[int64]bool{}} }

func (d *deadLetters) add(off int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.offsets[off] = true
}

func (d *deadLetters) has(off int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.offsets[off]
}

// writeOrDeadLetter writes offset off as the connector does: a bad record
// goes to the dead-letter topic (errors.tolerance=all) and the next one is
// written; any other error stops the owner.
func (f *fixture) writeOrDeadLetter(ctx context.Context, p *partition, off int64) error {
	err := p.write(ctx, ctx, f.record(off))
	if err != nil && f.dlq != nil && isBadRecord(err) {
		f.dlq.add(off)
		return nil
	}
	return err
}

// exactlyOnceOrDeadLettered checks that every offset below n is in exactly
// one committed file or in the dead-letter topic, never both, and that
// the bad ones are exactly the older-schema records.
func (f *fixture) exactlyOnceOrDeadLettered(n int64) error {
	// Check's own verdict counts dead-lettered offsets as missing: its
	// report is read here instead (a file that cannot be read is missing
	// from it, and its offsets are then found missing below).
	rep, _ := verify.Check(context.Background(), f.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: n}, SeqField: "seq"})
	if len(rep.TempFiles) > 0 {
		return fmt.Errorf("temp files left after a clean finish: %v", rep.TempFiles)
	}
	stored := map[int64]string{}
	for _, file := range rep.Files {
		seqs := file.Seqs
		if len(seqs) == 0 || seqs[0] != file.Range.Start || seqs[len(seqs)-1] != file.Range.End {
			return fmt.Errorf("%s: name says offsets %d-%d, records %v", file.Path, file.Range.Start, file.Range.End, seqs)
		}
		for _, off := range seqs {
			if other, dup := stored[off]; dup {
				return fmt.Errorf("offset %d written twice: %s and %s", off, other, file.Path)
			}
			stored[off] = file.Path
		}
	}
	for off := range n {
		_, inStore := stored[off]
		switch dead := f.dlq.has(off); {
		case inStore && dead:
			return fmt.Errorf("offset %d is both in %s and in the dead-letter topic", off, stored[off])
		case !inStore && !dead:
			return fmt.Errorf("offset %d is neither in the store nor in the dead-letter topic", off)
		case dead == f.mixed.newer(off):
			return fmt.Errorf("offset %d: bad=%v, but it is the newer schema's=%v: the verdict changed with the timing", off, dead, f.mixed.newer(off))
		}
	}
	if len(stored) > int(n) {
		return fmt.Errorf("%d offsets stored, want at most %d", len(stored), n)
	}
	return nil
}

// TestTopicChangeSweep: the topic was re-created (its batches carry another
// topic id) after the history committed 0-39. Owner A lives through
// finding it and publishing the refusal and is killed before or after
// each of its storage calls; owner B then lives the same life and is
// killed at each of its calls. Whatever the crashes, a last owner must
// not write anything (refused from the WAL, or by finding the topic id
// again), the old data must be intact, and after the operator's runbook
// (old files aside, reset to 0) the new topic lands exactly once.
func TestTopicChangeSweep(t *testing.T) {
	tally := &sweepTally{t: t}
	for k := 1; ; k += stride() {
		if !topicChangePoint(t, k, tally) {
			break
		}
	}
	tally.report("topic change sweep")
}

func topicChangePoint(t *testing.T, k int, tally *sweepTally) bool {
	for _, after := range []bool{false, true} {
		for m := 1; ; m += stride() {
			mem := storagetest.NewMemFS()
			f := newFixture(t, mem)
			f.pruneEvery, f.flushSize, f.topicID = 1, 20, [16]byte{1}
			if err := f.run(f.owner(mem, "history", nil), 40); err != nil {
				t.Fatal(err)
			}
			f.topicID = [16]byte{2} // the re-created topic
			if !f.refusedUntilCrash(f.owner(crashAt(newOpFS(mem), k, after), "A", nil)) {
				return false
			}
			mem.Crash()
			// B is killed at its call m; a B that makes fewer calls lives
			// its whole life, the last run of this row.
			bCrashed := f.refusedUntilCrash(f.owner(crashAt(newOpFS(mem), m, after), "B", nil))
			mem.Crash()
			tally.record(f.refusedThenReset(mem), fmt.Sprintf("A killed at call %d, B at call %d (after=%v)", k, m, after))
			if !bCrashed {
				break
			}
		}
	}
	return true
}

// refusedUntilCrash is an owner's life once the topic changed: recover,
// meet a batch of the new topic (refused), recover again (which publishes
// the refusal). It reports whether a hook crashed the owner.
func (f *fixture) refusedUntilCrash(p *partition) (crashed bool) {
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
		return false // refused from the WAL already, or a store failure
	}
	b := batchOf(max(next, 0), max(next, 0)+24)
	b.TopicID = f.topicID
	if p.beginBatch(b) == nil {
		return false
	}
	_, _ = p.resume(ctx, nil)
	return false
}

// refusedThenReset checks what must hold after any crashes: nothing of the
// new topic written, the old data intact, a last owner refused (by the WAL
// or by finding the topic id again, then publishing it); then the runbook
// works and the new topic lands exactly once.
func (f *fixture) refusedThenReset(mem *storagetest.MemFS) error {
	ctx := context.Background()
	oldData := func() error {
		_, err := verify.Check(context.Background(), f.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 40}, SeqField: "seq"})
		return err
	}
	if err := oldData(); err != nil {
		return fmt.Errorf("old topic's data: %w", err)
	}
	last := f.owner(mem, "last", nil)
	if err := f.lastOwnerRefused(ctx, last); err != nil {
		return err
	}
	if _, err := f.owner(mem, "check", nil).resume(ctx, nil); !errors.As(err, new(*RefusedError)) {
		return fmt.Errorf("after the last owner the WAL carries no refusal: %v", err)
	}
	if err := oldData(); err != nil {
		return fmt.Errorf("old topic's data after the last owner: %w", err)
	}
	if err := mem.Rename(context.Background(), "/topics/"+testTopic, "/archive-"+testTopic); err != nil {
		return err
	}
	s := last.cfg.WriteSettings
	s.TopicsDir, s.LogsDir = func(string) string { return "/topics" }, func(string) string { return "/logs" }
	if err := ResetOffset(ctx, s, Reset{Topic: testTopic, Next: 0}, testLogger()); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if err := f.run(f.owner(mem, "after reset", nil), 100); err != nil {
		return fmt.Errorf("owner after the reset: %w", err)
	}
	return f.exactlyOnce(100)
}

// lastOwnerRefused lives an owner's life after the topic changed, with no
// crash, and fails unless it ends refused with the refusal in the WAL.
func (f *fixture) lastOwnerRefused(ctx context.Context, p *partition) error {
	next, err := p.resume(ctx, nil)
	if errors.As(err, new(*RefusedError)) {
		return nil // a refusal published before the crashes
	}
	if err != nil {
		return fmt.Errorf("last owner's recovery: %w", err)
	}
	b := batchOf(max(next, 0), max(next, 0)+24)
	b.TopicID = f.topicID
	if err := p.beginBatch(b); !isRefusal(err) {
		return fmt.Errorf("the last owner accepted a batch of the re-created topic: %v", err)
	}
	if _, err := p.resume(ctx, nil); !errors.As(err, new(*RefusedError)) {
		return fmt.Errorf("the last owner's recovery did not publish the refusal: %v", err)
	}
	return nil
}
