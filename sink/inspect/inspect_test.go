package inspect

import (
	"context"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestCommittedEndsSeesCompactedFiles: once a compaction removed the
// inputs of partition=3, only its generation names their offsets; the
// scan recovery makes without a WAL must find them there, or it would
// resume below them and write those offsets a second time.
func TestCommittedEndsSeesCompactedFiles(t *testing.T) {
	ctx := context.Background()
	lay := layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "orders"}
	mem := storagetest.NewMemFS()
	for _, name := range []string{
		lay.FinalPath("partition=3", 3, 0, 4, 10, ".avro"),
		layout.Topic{TopicsDir: "/topics", Name: "orders"}.CompactedDir("partition=3") + "/" + layout.FinalName("orders", 3, 5, 99, 10, ".avro"),
	} {
		f, err := mem.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	for _, root := range []string{lay.PartitionDir(3), lay.Dir()} {
		ends, err := CommittedEnds(ctx, mem, lay, root)
		if err != nil {
			t.Fatal(err)
		}
		if ends[3] != 99 {
			t.Errorf("scan of %s: partition 3 ends at %d, want 99 (the compacted generation's)", root, ends[3])
		}
	}
}
