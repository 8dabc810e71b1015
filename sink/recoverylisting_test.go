package sink

import (
	"context"
	"io/fs"
	"sync"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// listingFS counts ReadDir calls by directory.
type listingFS struct {
	storage.FS
	mu    sync.Mutex
	lists map[string]int
}

func (l *listingFS) ReadDir(ctx context.Context, dir string) ([]fs.FileInfo, error) {
	l.mu.Lock()
	l.lists[dir]++
	l.mu.Unlock()
	return l.FS.ReadDir(ctx, dir)
}

// TestRecoveryListsTheWALTwice: a recovery lists the partition's WAL
// directory once to find the head and once to see its claim stand, and
// prunes and removes staging directories from that second listing. Each
// listing is a NameNode call per partition: with 10,000 partitions
// (issue 25) the two more it made were 20,000 calls on every start.
// Pruning and staging clean-up still happen.
func TestRecoveryListsTheWALTwice(t *testing.T) {
	ctx := context.Background()
	mem := storagetest.NewMemFS()
	f := newFixture(t, mem)
	f.pruneEvery = 100 // keep segments for the recovery to prune
	if _, err := f.drive(f.partition(nil), 300); err != nil {
		t.Fatal(err)
	}
	p := f.partition(nil)
	stale := p.log.Dir() + "/.staging-left-by-a-crash"
	if err := mem.MkdirAll(ctx, stale); err != nil {
		t.Fatal(err)
	}
	before, err := p.log.Segments(ctx)
	if err != nil || len(before) < 3 {
		t.Fatalf("segments before recovery: %v, %v; want at least 3", before, err)
	}
	counted := &listingFS{FS: mem, lists: map[string]int{}}
	p = f.owner(counted, "epoch-counted", nil)
	if next, err := p.resume(ctx, nil); err != nil || next != 300 {
		t.Fatalf("next = %d, %v; want 300", next, err)
	}
	if n := counted.lists[p.log.Dir()]; n != 2 {
		t.Errorf("recovery listed the WAL directory %d times, want 2 (head, claim standing)", n)
	}
	after, err := p.log.Segments(ctx)
	if err != nil || len(after) != 1 || after[0] != p.seq {
		t.Errorf("segments after recovery: %v, %v; want only the claim %d", after, err, p.seq)
	}
	if _, err := mem.Stat(ctx, stale); err == nil {
		t.Errorf("staging directory %s left after recovery", stale)
	}
	if l := p.claimListing; len(l.Segments)+len(l.Staging) != 0 {
		t.Errorf("the claim's listing is kept after recovery used it: %d segments, %d staging names", len(l.Segments), len(l.Staging))
	}
	f.check(300)
}
