package verify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

var auditLayout = layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "t"}

// touch creates an empty file: a listing audit never opens it.
func touch(t testing.TB, fs storage.FS, name string) {
	t.Helper()
	f, err := fs.Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func committed(dir string, start, end int64) string {
	return "/topics/t/" + dir + "/" + layout.FinalName("t", 0, start, end, 10, ".avro")
}

// publishHead publishes a WAL segment for partition 0 saying committed.
func publishHead(t testing.TB, fs storage.FS, seq uint64, kind entry.Kind, committed int64) {
	t.Helper()
	e := entry.Entry{Kind: kind, Epoch: "e", Owner: "h:1", Topic: "t", CommittedOffset: committed, UnixMillis: 1}
	if kind == entry.KindCommit {
		e.Files = []entry.FileMove{{Temp: "/x", Final: "/y", StartOffset: 0, EndOffset: committed, Records: committed + 1}}
	}
	if err := wal.Open(fs, auditLayout.WALDir(0)).Publish(t.Context(), seq, e); err != nil {
		t.Fatal(err)
	}
}

// probe is Kafka with records at every offset except those in empty.
type probe struct{ empty map[int64]bool }

func (p probe) FirstRecord(_ context.Context, _ string, _ int32, from int64) (int64, error) {
	for p.empty[from] {
		from++
	}
	return from, nil
}

func TestAuditFindsEachPlantedViolation(t *testing.T) {
	log := map[int32]LogOffsets{0: {Start: 0, End: 400}}
	for _, tc := range []struct {
		name  string
		plant func(storage.FS)
		want  Kind // "" = no violation
	}{
		{"clean", func(storage.FS) {}, ""},
		{"deleted file", func(fs storage.FS) { fs.Remove(t.Context(), committed("partition=0", 100, 199)) }, KindHole},
		{"deleted last file", func(fs storage.FS) { fs.Remove(t.Context(), committed("partition=0", 200, 299)) }, KindHole},
		{"duplicated file", func(fs storage.FS) { touch(t, fs, committed("partition=0/copy", 100, 199)) }, KindDuplicate},
		{"overlapping name", func(fs storage.FS) { touch(t, fs, committed("partition=0", 150, 249)) }, KindOverlap},
		{"orphan temp file", func(fs storage.FS) { touch(t, fs, "/topics/+tmp/t/0/00000000000000000001/e-0_tmp.avro") }, KindOrphan},
		{"file past the WAL", func(fs storage.FS) { touch(t, fs, committed("partition=0", 300, 309)) }, KindBeyondWAL},
		{"torn WAL head", func(fs storage.FS) { touch(t, fs, "/logs/t/0/00000000000000000009/segment") }, KindWAL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := storagetest.NewMemFS()
			for s := int64(0); s < 300; s += 100 {
				touch(t, fs, committed("partition=0", s, s+99))
			}
			publishHead(t, fs, 3, entry.KindCommit, 299)
			touch(t, fs, "/topics/+tmp/t/0/00000000000000000004/e-1_tmp.avro") // the live owner's
			tc.plant(fs)
			rep, err := Audit(context.Background(), fs, AuditOptions{Layout: auditLayout, Dense: true, Kafka: log, Probe: probe{}})
			if err != nil {
				t.Fatal(err)
			}
			p := rep.Partitions[0]
			if tc.want == "" {
				if !rep.OK() || p.Committed != 299 || p.Lag != 100 || p.InProgress != 1 {
					t.Fatalf("clean partition: %+v", p)
				}
				return
			}
			if rep.OK() || p.Violations[0].Kind != tc.want {
				t.Fatalf("want a %s violation, got %+v", tc.want, p.Violations)
			}
		})
	}
}

// TestAuditCountsPendingRenames: mid-commit (the commit published, its
// file not renamed yet) the offsets are committed, not a hole.
func TestAuditCountsPendingRenames(t *testing.T) {
	fs := storagetest.NewMemFS()
	touch(t, fs, committed("partition=0", 0, 99))
	temp := "/topics/+tmp/t/0/00000000000000000002/e-1_tmp.avro"
	touch(t, fs, temp)
	e := entry.Entry{Kind: entry.KindCommit, Epoch: "e", Owner: "h:1", Topic: "t", CommittedOffset: 199, UnixMillis: 1,
		Files: []entry.FileMove{{Temp: temp, Final: committed("partition=0", 100, 199), StartOffset: 100, EndOffset: 199, Records: 100}}}
	if err := wal.Open(fs, auditLayout.WALDir(0)).Publish(t.Context(), 3, e); err != nil {
		t.Fatal(err)
	}
	rep, err := Audit(context.Background(), fs, AuditOptions{Layout: auditLayout, Dense: true, Kafka: map[int32]LogOffsets{0: {End: 200}}})
	if err != nil || !rep.OK() || rep.Partitions[0].Files != 2 || !strings.Contains(rep.Partitions[0].Notes[0], "rename is under way") {
		t.Fatalf("mid-commit: %v %+v", err, rep.Partitions[0])
	}
	fs.Remove(t.Context(), temp) // gone under both names: a hole
	if rep, _ = Audit(context.Background(), fs, AuditOptions{Layout: auditLayout, Dense: true, Kafka: map[int32]LogOffsets{0: {End: 200}}}); rep.OK() {
		t.Fatal("a commit whose file is gone under both names is a hole")
	}
}

func TestAuditTellsHolesFromRetentionAndMarkers(t *testing.T) {
	fs := storagetest.NewMemFS()
	touch(t, fs, committed("partition=0", 0, 9))
	touch(t, fs, committed("partition=0", 11, 19)) // offset 10: a transaction marker
	touch(t, fs, committed("partition=0", 30, 39)) // 20-29: records Kafka still has
	publishHead(t, fs, 1, entry.KindCommit, 39)
	kafka := map[int32]LogOffsets{0: {Start: 0, End: 40}}
	rep, err := Audit(context.Background(), fs, AuditOptions{Layout: auditLayout, Dense: true, Kafka: kafka, Probe: probe{empty: map[int64]bool{10: true}}})
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Partitions[0].Violations
	if len(v) != 1 || v[0].Kind != KindHole || !strings.Contains(v[0].Detail, "offsets 20-29") {
		t.Fatalf("want one hole 20-29, got %+v", v)
	}
	kafka[0] = LogOffsets{Start: 35, End: 40} // retention took 0-34
	rep, _ = Audit(context.Background(), fs, AuditOptions{Layout: auditLayout, Dense: true, Kafka: kafka, Probe: probe{}})
	if !rep.OK() {
		t.Fatalf("gaps below the log start are retention, not holes: %+v", rep.Partitions[0].Violations)
	}
}

// TestAuditInterleavedDirectories: a time partitioner spreads one commit's
// offsets over directories, so ranges in different directories overlap;
// only equal starts, or overlaps within one directory, are violations.
func TestAuditInterleavedDirectories(t *testing.T) {
	fs := storagetest.NewMemFS()
	touch(t, fs, committed("hour=01", 0, 8))
	touch(t, fs, committed("hour=02", 1, 9))
	publishHead(t, fs, 1, entry.KindCommit, 9)
	o := AuditOptions{Layout: auditLayout, Kafka: map[int32]LogOffsets{0: {End: 10}}}
	if rep, _ := Audit(context.Background(), fs, o); !rep.OK() {
		t.Fatalf("interleaved directories: %+v", rep.Partitions[0].Violations)
	}
	touch(t, fs, committed("hour=02", 0, 3))
	if rep, _ := Audit(context.Background(), fs, o); rep.OK() || rep.Partitions[0].Violations[0].Kind != KindDuplicate {
		t.Fatalf("equal starts in two directories: %+v", rep.Partitions[0].Violations)
	}
}

func TestAuditDeepReadsRecords(t *testing.T) {
	reg := registry.NewMemory()
	id, _ := reg.Register(demodata.Schema)
	s, _ := reg.SchemaByID(context.Background(), id)
	f := formats(t)[0]
	fs := storagetest.NewMemFS()
	writeFile(t, fs, f, s, 0, 1, 2)
	writeFile(t, fs, f, s, 3, 5) // named 3-5, holds two records
	o := AuditOptions{Layout: auditLayout, Dense: true, Deep: true}
	rep, err := Audit(context.Background(), fs, o)
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Partitions[0].Violations
	if len(v) != 1 || v[0].Kind != KindCount || rep.Partitions[0].Records != 5 {
		t.Fatalf("want one count violation and 5 records read, got %d: %+v", rep.Partitions[0].Records, v)
	}
	// With each record's offset (demodata's seq), a file may skip offsets
	// (transaction markers) as long as its name spans its first and last.
	o.OffsetField = "seq"
	if rep, _ = Audit(context.Background(), fs, o); !rep.OK() {
		t.Fatalf("offsets 3 and 5 in a file named 3-5: %+v", rep.Partitions[0].Violations)
	}
	writeFile(t, fs, f, s, 5, 6) // offset 5 twice
	if rep, _ = Audit(context.Background(), fs, o); !hasKind(rep.Partitions[0].Violations, KindOffsets) {
		t.Fatalf("offset 5 in two files: %+v", rep.Partitions[0].Violations)
	}
}

func hasKind(vs []Violation, k Kind) bool {
	for _, v := range vs {
		if v.Kind == k {
			return true
		}
	}
	return false
}

// BenchmarkAudit10000Files is `hdfs-sink verify` without --deep on a
// partition of 10,000 committed files: a listing, not a read.
func BenchmarkAudit10000Files(b *testing.B) {
	fs := storagetest.NewMemFS()
	for i := int64(0); i < 10000; i++ {
		touch(b, fs, committed("partition=0", i*100, i*100+99))
	}
	publishHead(b, fs, 1, entry.KindCommit, 10000*100-1)
	o := AuditOptions{Layout: auditLayout, Dense: true, Kafka: map[int32]LogOffsets{0: {End: 10000 * 100}}}
	b.ResetTimer()
	for b.Loop() {
		rep, err := Audit(context.Background(), fs, o)
		if err != nil || !rep.OK() || rep.Partitions[0].Files != 10000 {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

func ExampleTopicReport_OK() {
	fmt.Println(TopicReport{Partitions: []PartitionReport{{Violations: []Violation{{Kind: KindHole}}}}}.OK())
	// Output: false
}
