package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/avro"
	jsonfmt "github.com/hdfs-sink/hdfs-sink/format/json"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// writeFile commits a file of format f holding the given offsets of
// partition 0.
func writeFile(t *testing.T, fs storage.FS, f format.Format, s *schema.Schema, offsets ...int64) {
	t.Helper()
	writeFileIn(t, fs, "/topics/t/partition=0", f, s, offsets...)
}

func writeFileIn(t *testing.T, fs storage.FS, dir string, f format.Format, s *schema.Schema, offsets ...int64) {
	t.Helper()
	name := dir + "/" + layout.FinalName("t", 0, offsets[0], offsets[len(offsets)-1], 10, f.Extension())
	file, err := fs.Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := f.NewWriter(file, s)
	for _, off := range offsets {
		v, _ := demodata.Value(s.ID, 0, off)
		_, datum, _ := schema.ParseWire(v)
		if err := w.WriteDatum(datum); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	file.Close()
}

// formats are the formats Check reads.
func formats(t *testing.T) []format.Format {
	a, err := avro.New(avro.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := parquet.New(parquet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j, err := jsonfmt.New(jsonfmt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return []format.Format{a, p, j}
}

func TestCheckFindsEveryViolation(t *testing.T) {
	reg := registry.NewMemory()
	id, _ := reg.Register(demodata.Schema)
	s, _ := reg.SchemaByID(context.Background(), id)
	for _, tc := range []struct {
		name  string
		files [][]int64
		want  string // "" = passes
	}{
		{"exact", [][]int64{{0, 1, 2}, {3, 4}}, ""},
		{"interleaved directories are fine", [][]int64{{0, 2, 4}, {1, 3}}, ""},
		{"duplicate", [][]int64{{0, 1, 2}, {2, 3, 4}}, "offset 2 written twice"},
		{"gap", [][]int64{{0, 1}, {3, 4}}, "offset 2 missing"},
		{"short", [][]int64{{0, 1, 2}}, "3 distinct offsets committed, want 5"},
	} {
		for _, f := range formats(t) {
			t.Run(f.Name()+"/"+tc.name, func(t *testing.T) {
				fs := storagetest.NewMemFS()
				for _, offs := range tc.files {
					writeFile(t, fs, f, s, offs...)
				}
				marker, err := fs.Create(t.Context(), "/topics/t/partition=0/_SUCCESS") // a completeness marker is no data
				if err != nil || marker.Close() != nil {
					t.Fatal(err)
				}
				_, err = Check(t.Context(), fs, Options{TopicsDir: "/topics", Topic: "t", Want: map[int32]int64{0: 5}, SeqField: "seq"})
				if tc.want == "" && err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
			})
		}
	}
}

// TestMarkersAreNotForeign: the audit counts files that are not committed
// names; completeness markers are not among them (they would be in every
// complete directory).
func TestMarkersAreNotForeign(t *testing.T) {
	fs := storagetest.NewMemFS()
	for _, name := range []string{"/topics/t/hour=01/_SUCCESS", "/topics/t/hour=01/notes.txt"} {
		f, err := fs.Create(t.Context(), name)
		if err != nil || f.Close() != nil {
			t.Fatal(err)
		}
	}
	_, foreign, err := listCommitted(t.Context(), fs, layout.Topic{TopicsDir: "/topics", Name: "t"})
	if err != nil || len(foreign) != 1 || foreign[0] != "/topics/t/hour=01/notes.txt" {
		t.Fatalf("foreign = %v, %v; want only notes.txt", foreign, err)
	}
}

// TestCheckCountsACompactedDirectoryOnce: during the grace period a
// compaction's inputs stay beside its generation; Check, CountByNames
// and Audit count the generation's files and a file committed after it,
// never the inputs a second time.
func TestCheckCountsACompactedDirectoryOnce(t *testing.T) {
	reg := registry.NewMemory()
	id, _ := reg.Register(demodata.Schema)
	s, _ := reg.SchemaByID(context.Background(), id)
	lay := layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "t"}
	gen := lay.CompactedDir("partition=0")
	for _, f := range formats(t) {
		fs := storagetest.NewMemFS()
		writeFile(t, fs, f, s, 0, 1, 2)
		writeFile(t, fs, f, s, 3, 4)
		writeFileIn(t, fs, gen, f, s, 0, 1, 2, 3, 4) // the merged file
		writeFileIn(t, fs, gen, f, s, 5, 6)          // committed after the compaction
		marker, _ := fs.Create(t.Context(), gen+"/"+layout.CompactedMarker)
		marker.Close()
		rep, err := Check(t.Context(), fs, Options{TopicsDir: "/topics", Topic: "t", Want: map[int32]int64{0: 7}, SeqField: "seq"})
		if err != nil || rep.Records != 7 {
			t.Fatalf("%s: %d records, %v", f.Name(), rep.Records, err)
		}
		if n, err := CountByNames(t.Context(), fs, "/topics", "t"); err != nil || n != 7 {
			t.Fatalf("%s: CountByNames %d, %v", f.Name(), n, err)
		}
		byPart, foreign, err := listCommitted(t.Context(), fs, lay)
		if err != nil || len(byPart[0]) != 2 || len(foreign) != 0 {
			t.Fatalf("%s: audit lists %v, foreign %v, %v", f.Name(), byPart, foreign, err)
		}
	}
}
