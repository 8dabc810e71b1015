package sink

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestShutdownEndsAtTimeoutWhenStoreHangs (D28): the store stops answering
// during the shutdown's commits, in a file's close (under its Create's
// context) or in a NameNode call (under the call's). Run returns once
// ShutdownTimeout has passed since the stop: the commit's context ends
// (before, the context was not handed to the store, and Run waited for as
// long as the store did). The hung partition's records are read again by
// the next owner, the other partition's are committed: exactly once.
func TestShutdownEndsAtTimeoutWhenStoreHangs(t *testing.T) {
	for _, op := range []storagetest.Op{storagetest.OpClose, storagetest.OpRename} {
		t.Run(op.String(), func(t *testing.T) {
			k := newKafkaFixture(t, 2, testTopic)
			mem := k.fs.(*storagetest.MemFS)
			for seq := int64(0); seq < 20; seq++ {
				k.produce(k.good(0, seq), k.good(1, seq))
			}
			cfg := k.config("hung-shutdown")
			cfg.FlushSize, cfg.RotateInterval, cfg.ShutdownTimeout = 1000, 0, 2*time.Second // nothing commits before the stop
			c := start(t, cfg)
			waitFor(t, "every record in an open file", func() bool { return c.Stats.Records.Load() == 40 })
			hung := mem.HangNext(op, storagetest.AnyPath) // one partition's commit
			c.stop()
			select {
			case <-hung:
			case <-time.After(30 * time.Second):
				t.Fatal("the shutdown did not commit")
			}
			err, stopped := c.wait(30 * time.Second)
			if !stopped || err != nil {
				t.Fatalf("Run with a commit hung on the store: stopped=%v err=%v; want it to return nil once the shutdown timeout passed", stopped, err)
			}
			if got := committedRecords(k.fs); got != 20 {
				t.Fatalf("%d records committed by the shutdown, want the 20 of the partition whose commit did not hang", got)
			}
			next := start(t, k.config("hung-shutdown"))
			waitFor(t, "every record committed by the next owner", func() bool { return committedRecords(k.fs) == 40 })
			next.stop()
			if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 20, 1: 20}, SeqField: "seq"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// heldRenameFS holds the first rename of a temp file to a committed name
// until release is closed; reached says it is held.
type heldRenameFS struct {
	storage.FS
	once             sync.Once
	reached, release chan struct{}
}

func (f *heldRenameFS) Rename(ctx context.Context, oldpath, newpath string) error {
	if strings.Contains(oldpath, "+tmp") && strings.HasPrefix(newpath, "/topics/") {
		f.once.Do(func() {
			close(f.reached)
			<-f.release
		})
	}
	return f.FS.Rename(ctx, oldpath, newpath)
}

// TestStopLetsCommitUnderWayFinish (D28, D6): a stop arrives while a
// commit waits for the store. The commit's store calls do not run under
// Run's context, which the stop ends: they go on, and the commit stands
// (under Run's context the rename, and the commit with it, would fail,
// and its records be read again by the next owner).
func TestStopLetsCommitUnderWayFinish(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	fs := &heldRenameFS{FS: k.fs, reached: make(chan struct{}), release: make(chan struct{})}
	var recs []*kgo.Record
	for seq := int64(0); seq < 10; seq++ {
		recs = append(recs, k.good(0, seq))
	}
	k.produce(recs...)
	cfg := k.config("stop-mid-commit")
	cfg.FS, cfg.FlushSize, cfg.RotateInterval = fs, 10, 0
	c := start(t, cfg)
	select {
	case <-fs.reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the commit did not reach its rename")
	}
	c.stop()
	close(fs.release)
	if err, stopped := c.wait(30 * time.Second); !stopped || err != nil {
		t.Fatalf("Run: stopped=%v err=%v", stopped, err)
	}
	if got := committedRecords(k.fs); got != 10 {
		t.Fatalf("%d records committed, want the 10 of the commit under way at the stop", got)
	}
}
