package sink

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage/local"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// The name limit tests run on the local store: Linux, like HDFS, refuses
// names over 255 bytes, so a rename the sink believes in really happens.

// longestTopic is the longest topic whose files of partitions 0 to 9 fit
// 255 bytes with filename.offset.zero.pad.width 10 and ".avro":
// 226 + "+0+" + 2×10 digits + "+" + ".avro" = 255.
const longestTopic = 226

// TestTopicAsLongAsTheReferenceWritesCommits (issue 20, n6): the name limit
// is computed from the pad width, as the reference names files, not from
// 19-digit offsets, which refused topics of 209 to 226 characters; and
// from the partition's own number: partition 10 of the same topic is
// refused before anything of it is published.
func TestTopicAsLongAsTheReferenceWritesCommits(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, local.New(root))
	f.topic = strings.Repeat("t", longestTopic)
	if _, err := f.drive(f.ownerOf(9, f.fs, "e1", nil), 150); err != nil {
		t.Fatalf("a topic of %d characters with pad 10: %v", longestTopic, err)
	}
	rep, err := verify.Check(t.Context(), f.fs, verify.Options{TopicsDir: "/topics", Topic: f.topic, Want: map[int32]int64{9: 150}, SeqField: "seq"})
	if err != nil || len(rep.Files) != 2 {
		t.Fatalf("exactly once: %v (%d files)", err, len(rep.Files))
	}
	for _, file := range rep.Files {
		if n := len(filepath.Base(file.Path)); n != layout.MaxNameBytes {
			t.Errorf("%s: %d bytes, want %d", filepath.Base(file.Path), n, layout.MaxNameBytes)
		}
	}

	_, err = f.ownerOf(10, f.fs, "e2", nil).resume(context.Background(), nil)
	var ne *layout.NameError
	if !errors.As(err, &ne) || ne.Partition != 10 || ne.Length != layout.MaxNameBytes+1 {
		t.Fatalf("partition 10: resume = %v; want a NameError of 256 bytes", err)
	}
	if _, err := os.Stat(filepath.Join(root, "logs", f.topic, "10")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("partition 10 published something although its names cannot be written: %v", err)
	}
}

// TestCommitWhoseNamesOutgrewThePadIsNotPublished (issue 20, F7): offsets
// wider than the pad width print all their digits, so a topic that fits at
// assignment can reach names over 255 bytes later. That commit is refused
// before its WAL segment is published: a published commit whose renames
// can never succeed would be retried by every recovery, forever.
func TestCommitWhoseNamesOutgrewThePadIsNotPublished(t *testing.T) {
	const first, last = 9_999_999_998, 10_000_000_000 // the last has 11 digits
	ctx := context.Background()
	root := t.TempDir()
	f := newFixture(t, local.New(root))
	f.topic = strings.Repeat("t", longestTopic)
	p := f.partition(nil)
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.beginBatch(batchOf(first, last)); err != nil {
		t.Fatal(err)
	}
	for off := int64(first); off <= last; off++ {
		if err := p.write(ctx, ctx, f.record(off)); err != nil {
			t.Fatal(err)
		}
	}
	err := p.rotate(ctx, "test")
	var ne *layout.NameError
	if !errors.As(err, &ne) || ne.Partition != 0 || ne.Start != first || ne.End != last || ne.Length != layout.MaxNameBytes+1 {
		t.Fatalf("rotate = %v; want a NameError for offsets %d to %d, 256 bytes", err, int64(first), int64(last))
	}
	for _, want := range []string{"partition 0 offsets 9999999998 to 10000000000", "256 bytes", "the 255 the store allows", "filename.offset.zero.pad.width=10"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	segs, err := p.log.Segments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range segs {
		if e, err := p.log.Read(t.Context(), seq); err != nil || e.Kind != entry.KindClaim {
			t.Fatalf("WAL segment %d: %v %v; want only the claim: no commit may be published", seq, e.Kind, err)
		}
	}
	rep, err := verify.Check(t.Context(), f.fs, verify.Options{TopicsDir: "/topics", Topic: f.topic, Want: map[int32]int64{}})
	if err != nil || len(rep.Files) != 0 || len(rep.TempFiles) != 0 {
		t.Fatalf("files after the refusal: %+v %v; want none: its temp files belong to no commit", rep, err)
	}
	// Not stuck: the next recovery finds nothing to roll forward and
	// nothing committed; the records are fetched again.
	next, err := f.partition(nil).resume(ctx, nil)
	if err != nil || next != -1 {
		t.Fatalf("recovery after the refusal: next %d, %v; want -1 (nothing committed)", next, err)
	}
}
