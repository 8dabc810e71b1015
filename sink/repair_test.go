package sink

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/wal"
)

// settings are the fixture's write settings as cmd builds them.
func (f *fixture) settings() WriteSettings {
	s := f.partition(nil).cfg.WriteSettings
	s.TopicsDir = func(string) string { return "/topics" }
	s.LogsDir = func(string) string { return "/logs" }
	return s
}

// tearHead cuts the newest WAL segment in half, as a torn write would.
func tearHead(t *testing.T, fs storage.FS) uint64 {
	t.Helper()
	log := wal.Open(fs, "/logs/"+testTopic+"/0")
	seqs, _ := log.Segments(t.Context())
	head := seqs[len(seqs)-1]
	r, err := fs.Open(t.Context(), log.SegmentPath(head))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	r.Close()
	fs.Remove(t.Context(), log.SegmentPath(head))
	w, _ := fs.Create(t.Context(), log.SegmentPath(head))
	w.Write(data[:len(data)/2])
	w.Close()
	return head
}

// TestRepairTornHeadThenRecoveryIsClean: a torn head stops recovery; the
// repair keeps a copy, claims above it from the file names, and the next
// owner recovers and writes every offset exactly once.
func TestRepairTornHeadThenRecoveryIsClean(t *testing.T) {
	for _, tc := range []struct {
		name    string
		crashAt State // the first writer dies here on its 4th commit (offsets 300-349)
		want    int64 // the committed offset the repair finds
	}{
		{"head fully applied", 0, 349},
		{"head's file never renamed", WALAppended, 299},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, storagetest.NewMemFS())
			var faults Faults
			if tc.crashAt != 0 {
				faults = &panicFaults{state: tc.crashAt, n: 4}
			}
			f.runUntilCrash(f.partition(faults), 350)
			head := tearHead(t, f.fs)
			if _, err := f.partition(nil).resume(ctx, nil); !errors.Is(err, wal.ErrTornTail) {
				t.Fatalf("recovery over a torn head = %v, want ErrTornTail", err)
			}
			s := f.settings()
			rep, err := InspectWAL(t.Context(), s, testTopic, 0)
			if err != nil || !rep.Stuck || !strings.Contains(rep.Recovery[0], "FAILS") {
				t.Fatalf("inspect: stuck=%v %v %v", rep.Stuck, rep.Recovery, err)
			}
			plan, err := PlanRepair(t.Context(), s, testTopic, 0, -1)
			if err != nil || !plan.Needed || plan.Committed != tc.want || plan.Refused != "" {
				t.Fatalf("plan: %+v, %v", plan, err)
			}
			if err := Repair(ctx, s, plan, testLogger()); err != nil {
				t.Fatal(err)
			}
			if infos, err := f.fs.ReadDir(t.Context(), plan.Copy); err != nil || len(infos) != 1 {
				t.Fatalf("no copy of segment %d kept in %s: %v", head, plan.Copy, err)
			}
			if err := f.run(f.partition(nil), 500); err != nil {
				t.Fatalf("recovery after the repair: %v", err)
			}
			f.check(500)
		})
	}
}

func TestRepairNeedsNothingForAReadableHead(t *testing.T) {
	f := newFixture(t, storagetest.NewMemFS())
	if err := f.run(f.partition(nil), 120); err != nil {
		t.Fatal(err)
	}
	plan, err := PlanRepair(t.Context(), f.settings(), testTopic, 0, -1)
	if err != nil || plan.Needed {
		t.Fatalf("plan for a readable head: %+v, %v", plan, err)
	}
	rep, _ := InspectWAL(t.Context(), f.settings(), testTopic, 0)
	if rep.Stuck || !strings.Contains(strings.Join(rep.Recovery, "\n"), "resume consuming at offset 120") {
		t.Fatalf("inspect: %v", rep.Recovery)
	}
}

// TestRepairRefusesToGuessAcrossDirectories: with an hourly partitioner a
// commit renames several files, so a torn head with no readable segment
// below leaves the committed offset unknown; the repair refuses until the
// operator names one, and refuses one that committed names already hold.
func TestRepairRefusesToGuessAcrossDirectories(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, storagetest.NewMemFS())
	hourly, err := partitioner.New(partitioner.Config{Kind: partitioner.KindHourly, Location: time.UTC, Locale: "en", Extractor: partitioner.RecordTime})
	if err != nil {
		t.Fatal(err)
	}
	f.part = hourly
	if err := f.run(f.partition(nil), 350); err != nil {
		t.Fatal(err)
	}
	tearHead(t, f.fs)
	s := f.settings()
	plan, err := PlanRepair(t.Context(), s, testTopic, 0, -1)
	if err != nil || plan.Refused == "" {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	if err := Repair(ctx, s, plan, testLogger()); !errors.Is(err, errUnknownHead) {
		t.Fatalf("repair of a refused plan = %v", err)
	}
	var re *ResetError
	if plan, _ = PlanRepair(t.Context(), s, testTopic, 0, 100); Repair(ctx, s, plan, testLogger()) == nil || !errors.As(plan.refused, &re) {
		t.Fatalf("--to 100 below committed names: %+v", plan)
	}
	if plan, _ = PlanRepair(t.Context(), s, testTopic, 0, 350); Repair(ctx, s, plan, testLogger()) != nil {
		t.Fatalf("--to 350: %+v", plan)
	}
	if err := f.run(f.partition(nil), 400); err != nil {
		t.Fatal(err)
	}
	f.check(400)
}
