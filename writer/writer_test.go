package writer

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// fixture is a writer of partition 3 of topic "orders" over a MemFS, and
// the sample schema.
type fixture struct {
	mem *storagetest.MemFS
	w   *Writer
	sch *schema.Schema
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f, err := avro.New(avro.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schema.New(1, demodata.Schema)
	if err != nil {
		t.Fatal(err)
	}
	mem := storagetest.NewMemFS()
	w := New(Options{FS: mem, Format: f, Layout: layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "orders"},
		Partition: 3, Pad: 10, TempDir: "/topics/+tmp/orders/3/00000000000000000001", Prefix: "e1"})
	return &fixture{mem: mem, w: w, sch: sch}
}

func (f *fixture) append(t *testing.T, dir string, s *schema.Schema, off int64) error {
	t.Helper()
	v, err := demodata.Value(s.ID, 3, off)
	if err != nil {
		t.Fatal(err)
	}
	_, datum, _ := schema.ParseWire(v)
	return f.w.Append(context.Background(), dir, s, off, datum, time.Now())
}

// TestCloseNamesEachFileByItsOffsets: one file per directory, named by the
// first and last offsets it holds.
func TestCloseNamesEachFileByItsOffsets(t *testing.T) {
	f := newFixture(t)
	for off, dir := range []string{"d=a", "d=b", "d=a", "d=a", "d=b"} {
		if err := f.append(t, dir, f.sch, int64(10+off)); err != nil {
			t.Fatal(err)
		}
	}
	closed, err := f.w.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"d=a": "/topics/orders/d=a/orders+3+0000000010+0000000013.avro",
		"d=b": "/topics/orders/d=b/orders+3+0000000011+0000000014.avro",
	}
	if len(closed) != 2 || !f.w.Empty() {
		t.Fatalf("closed %+v; writer empty: %v", closed, f.w.Empty())
	}
	for _, c := range closed {
		if c.Final != want[c.Encoded] {
			t.Errorf("%s: final %s, want %s", c.Encoded, c.Final, want[c.Encoded])
		}
		if _, err := f.mem.Stat(context.Background(), c.Temp); err != nil {
			t.Errorf("closed temp file %s: %v", c.Temp, err)
		}
	}
}

// TestCloseFailureKeepsFilesForDiscard: a file whose close fails is not
// durable, so nothing may be committed: Close returns the error, the files
// stay open, and Discard removes every temp file.
func TestCloseFailureKeepsFilesForDiscard(t *testing.T) {
	f := newFixture(t)
	for off := int64(0); off < 3; off++ {
		if err := f.append(t, "d=a", f.sch, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.append(t, "d=b", f.sch, 3); err != nil {
		t.Fatal(err)
	}
	f.mem.FailNext(storagetest.OpClose, storagetest.PathContains("_tmp"), errors.New("pipeline broken"))
	if closed, err := f.w.Close(); err == nil || !strings.Contains(err.Error(), "pipeline broken") || closed != nil {
		t.Fatalf("Close = %v, %v; want the close error and nothing to commit", closed, err)
	}
	if f.w.Empty() {
		t.Fatal("the files were forgotten after a failed close; Discard could not remove them")
	}
	if err := f.w.Discard(context.Background()); err != nil {
		t.Fatal(err)
	}
	infos, err := f.mem.ReadDir(context.Background(), "/topics/+tmp/orders/3/00000000000000000001")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if len(infos) != 0 || !f.w.Empty() || f.w.Records() != 0 {
		t.Fatalf("after Discard: %d temp files left, empty %v, %d records", len(infos), f.w.Empty(), f.w.Records())
	}
}

// TestSchemaChangeNeedsARotation: all open files share one schema; a record
// of another schema is refused until the caller rotates, and after a Close
// the next file opens with the new schema.
func TestSchemaChangeNeedsARotation(t *testing.T) {
	f := newFixture(t)
	v2, err := schema.New(2, demodata.SchemaV2)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.append(t, "d=a", f.sch, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.append(t, "d=b", v2, 1); err == nil || !strings.Contains(err.Error(), "schema 2 while files of schema 1 are open") {
		t.Fatalf("Append with another schema = %v; want it refused", err)
	}
	if _, err := f.w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.append(t, "d=b", v2, 1); err != nil {
		t.Fatal(err)
	}
	if id, ok := f.w.SchemaID(); !ok || id != 2 {
		t.Fatalf("SchemaID = %d, %v; want 2", id, ok)
	}
}

// TestTempNamesNeverRepeat: a writer's temp names stay unique across
// rotations, so a late rename can never meet a newer file of the same name.
func TestTempNamesNeverRepeat(t *testing.T) {
	f := newFixture(t)
	seen := map[string]bool{}
	for round := int64(0); round < 3; round++ {
		if err := f.append(t, "d=a", f.sch, round); err != nil {
			t.Fatal(err)
		}
		closed, err := f.w.Close()
		if err != nil {
			t.Fatal(err)
		}
		if seen[closed[0].Temp] {
			t.Fatalf("temp name %s used twice", closed[0].Temp)
		}
		seen[closed[0].Temp] = true
	}
}

// TestCompactedDirectoryIsCommittedIntoItsGeneration: once a compaction
// published the generation of a directory, files for that directory are
// named into the generation (docs/design.md §12); other directories, and
// a writer that looked before the generation existed, keep theirs.
func TestCompactedDirectoryIsCommittedIntoItsGeneration(t *testing.T) {
	f := newFixture(t)
	lay := layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "orders"}
	if err := f.mem.MkdirAll(context.Background(), lay.CompactedDir("d=a")); err != nil {
		t.Fatal(err)
	}
	for off, dir := range []string{"d=a", "d=b"} {
		if err := f.append(t, dir, f.sch, int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	closed, err := f.w.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"d=a": "/topics/orders/+compacted/d=a/orders+3+0000000000+0000000000.avro",
		"d=b": "/topics/orders/d=b/orders+3+0000000001+0000000001.avro",
	}
	for _, c := range closed {
		if c.Final != want[c.Encoded] {
			t.Errorf("%s: final %s, want %s", c.Encoded, c.Final, want[c.Encoded])
		}
		if enc, ok := lay.EncodedDir(c.Final); !ok || enc != c.Encoded {
			t.Errorf("EncodedDir(%s) = %q, %v; want %q", c.Final, enc, ok, c.Encoded)
		}
	}
	// The writer asked once per directory: a generation published now is
	// learnt by the next writer (the next claim), never by this one.
	if err := f.mem.MkdirAll(context.Background(), lay.CompactedDir("d=b")); err != nil {
		t.Fatal(err)
	}
	if err := f.append(t, "d=b", f.sch, 2); err != nil {
		t.Fatal(err)
	}
	closed, err = f.w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := closed[0].Final; got != "/topics/orders/d=b/orders+3+0000000002+0000000002.avro" {
		t.Errorf("final %s: a writer's answer must hold for its claim", got)
	}
}
