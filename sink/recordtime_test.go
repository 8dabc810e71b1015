package sink

import (
	"context"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// walHead is the newest WAL segment of the fixture's partition 0.
func walHead(t *testing.T, f *fixture) entry.Entry {
	t.Helper()
	l := wal.Open(f.fs, "/logs/"+testTopic+"/0")
	seqs, err := l.Segments(t.Context())
	if err != nil || len(seqs) == 0 {
		t.Fatalf("WAL segments: %v, %v", seqs, err)
	}
	e, err := l.Read(t.Context(), seqs[len(seqs)-1])
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func hourlyByRecordTime(t *testing.T) partitioner.Partitioner {
	t.Helper()
	p, err := partitioner.New(partitioner.Config{Kind: partitioner.KindHourly, Location: time.UTC, Locale: "en", Extractor: partitioner.RecordTime})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recordMillis is the time the fixture gives offset off.
func (f *fixture) recordMillis(off int64) int64 { return f.record(off).Timestamp.UnixMilli() }

// TestCommitsCarryMaxRecordTime: every commit's WAL entry carries the
// highest record time committed so far, and a new owner's claim carries it
// on, with a time-based partitioner and without one (the Kafka timestamp).
func TestCommitsCarryMaxRecordTime(t *testing.T) {
	for name, part := range map[string]partitioner.Partitioner{"hourly": hourlyByRecordTime(t), "default": nil} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, storagetest.NewMemFS())
			f.part = part
			if err := f.run(f.partition(nil), 250); err != nil {
				t.Fatal(err)
			}
			if head := walHead(t, f); head.Kind != entry.KindCommit || head.MaxRecordMillis != f.recordMillis(249) {
				t.Fatalf("head = %v committed %d with max record time %d; want a commit with %d", head.Kind, head.CommittedOffset, head.MaxRecordMillis, f.recordMillis(249))
			}
			p := f.partition(nil)
			if _, err := p.resume(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			if head := walHead(t, f); head.Kind != entry.KindClaim || head.MaxRecordMillis != f.recordMillis(249) {
				t.Fatalf("claim carries max record time %d; want %d", head.MaxRecordMillis, f.recordMillis(249))
			}
		})
	}
}

// TestMaxRecordTimeIsTheMaximum: a late record (older than one before it)
// does not lower the committed maximum, in the same commit or a later one.
func TestMaxRecordTimeIsTheMaximum(t *testing.T) {
	f := newFixture(t, storagetest.NewMemFS())
	f.part = hourlyByRecordTime(t)
	p := f.partition(nil)
	ctx := context.Background()
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	late := f.record(0).Timestamp
	commit := func(first, last int64, lateAt int64) {
		if err := p.beginBatch(batchOf(first, last)); err != nil {
			t.Fatal(err)
		}
		for off := first; off <= last; off++ {
			r := f.record(off)
			if off == lateAt {
				r.Timestamp = late
			}
			if err := p.write(ctx, ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.rotate(ctx, "test"); err != nil {
			t.Fatal(err)
		}
	}
	commit(0, 9, 9) // offset 9 is late: the maximum is offset 8's time
	if got := walHead(t, f).MaxRecordMillis; got != f.recordMillis(8) {
		t.Fatalf("after a late last record: max record time %d, want %d", got, f.recordMillis(8))
	}
	commit(10, 10, 10) // a commit of only a late record keeps the maximum
	if got := walHead(t, f).MaxRecordMillis; got != f.recordMillis(8) {
		t.Fatalf("after a commit of a late record: max record time %d, want %d", got, f.recordMillis(8))
	}
}

// TestMaxRecordTimeAfterCrashes: a crash at every state, then a new owner:
// the WAL head's max record time is the time of its committed offset (the
// fixture's times grow with offsets), whether the head is a commit rolled
// forward or a claim.
func TestMaxRecordTimeAfterCrashes(t *testing.T) {
	const n = 250
	for s := RecoveryStarted; s <= FileCommitted; s++ {
		t.Run(s.String(), func(t *testing.T) {
			mem := storagetest.NewMemFS()
			f := newFixture(t, mem)
			f.part = hourlyByRecordTime(t)
			if _, err := f.drive(f.partition(&panicFaults{state: s, n: 2}), n); err != nil {
				t.Fatal(err)
			}
			mem.Crash()
			p := f.partition(nil)
			if _, err := p.resume(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			head := walHead(t, f)
			if want := f.recordMillis(max(head.CommittedOffset, 0)); head.CommittedOffset >= 0 && head.MaxRecordMillis != want {
				t.Fatalf("head committed %d with max record time %d; want %d", head.CommittedOffset, head.MaxRecordMillis, want)
			}
			if _, err := f.drive(p, n); err != nil {
				t.Fatal(err)
			}
			if got := walHead(t, f).MaxRecordMillis; got != f.recordMillis(n-1) {
				t.Fatalf("after finishing: max record time %d, want %d", got, f.recordMillis(n-1))
			}
		})
	}
}

// TestLateRecordsCounted: with completeness on, a record whose time
// directory its partition had passed by more than the lateness is counted
// late, and written all the same; records within the lateness are not.
func TestLateRecordsCounted(t *testing.T) {
	for _, countLate := range []bool{true, false} {
		f := newFixture(t, storagetest.NewMemFS())
		f.part = hourlyByRecordTime(t)
		p := f.partition(nil)
		p.cfg.CountLate, p.cfg.Lateness = countLate, 10*time.Minute
		ctx := context.Background()
		if _, err := p.resume(ctx, nil); err != nil {
			t.Fatal(err)
		}
		base := f.record(0).Timestamp // 00:00; offset n is at n×7 minutes
		lateAt := map[int64]time.Duration{
			21: 30 * time.Minute,            // hour 00 ends 01:00, +10 min < 02:20 (offset 20): late
			22: 2*time.Hour + 5*time.Minute, // hour 02: not late
			23: time.Hour + 5*time.Minute,   // hour 01 ends 02:00, +10 min < 02:20: late
			24: time.Hour + 59*time.Minute,  // hour 01 again: late
		}
		if err := p.beginBatch(batchOf(0, 24)); err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off <= 24; off++ {
			r := f.record(off)
			if d, ok := lateAt[off]; ok {
				r.Timestamp = base.Add(d)
			}
			if off == 10 {
				if err := p.rotate(ctx, "test"); err != nil { // half committed, half pending: both count
					t.Fatal(err)
				}
			}
			if err := p.write(ctx, ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.rotate(ctx, "test"); err != nil {
			t.Fatal(err)
		}
		want := int64(3)
		if !countLate {
			want = 0
		}
		if got := p.cfg.Stats.LateRecords.Load(); got != want {
			t.Errorf("count late %v: %d late records, want %d", countLate, got, want)
		}
		f.check(25)
	}
}
