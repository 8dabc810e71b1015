package sink

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// recordingCatalog remembers every directory handed to it, per topic.
type recordingCatalog struct {
	mu   sync.Mutex
	dirs map[string]map[string]bool
}

func (c *recordingCatalog) SchemaSeen(string, int32, string) {}

func (c *recordingCatalog) Committed(topic string, encoded []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs == nil {
		c.dirs = map[string]map[string]bool{}
	}
	if c.dirs[topic] == nil {
		c.dirs[topic] = map[string]bool{}
	}
	for _, d := range encoded {
		c.dirs[topic][d] = true
	}
}

func (c *recordingCatalog) known(topic string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for d := range c.dirs[topic] {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// withCatalog is p reporting to cat.
func withCatalog(p *partition, cat Catalog) *partition {
	p.cfg.Catalog = cat
	return p
}

// TestRolledForwardCommitsReachTheCatalog (issue 20, N3): a commit that
// recovery finishes, after the owner's rename failed or the owner died
// between renaming and telling the catalog, has its directories handed to
// the catalog as the owner's own commits do. Without it Hive never hears of
// them until a restart lists the topic again.
func TestRolledForwardCommitsReachTheCatalog(t *testing.T) {
	const n = 300
	boom := errors.New("injected rename failure")
	finalFiles := storagetest.PathContains("/topics/" + testTopic + "/") // not +tmp, not the WAL
	cases := []struct {
		name string
		// fault arms the failure before the second owner life; it returns
		// the faults of that life.
		fault func(mem *storagetest.MemFS) Faults
		// sameOwner: the partition recovers in place (a failed rename),
		// else a new owner takes over (the first one died).
		sameOwner bool
	}{
		{"rename refused, recovered in place", func(mem *storagetest.MemFS) Faults {
			mem.FailNext(storagetest.OpRename, finalFiles, boom)
			return nil
		}, true},
		// The commit of offsets 150-249 spans hours 17 to 05; its renames of
		// hours 17 and 18 stand when the one of hour 19 fails: recovery
		// skips them, and their directories need registering all the same.
		{"a later rename refused, earlier ones stand", func(mem *storagetest.MemFS) Faults {
			mem.FailNext(storagetest.OpRename, storagetest.PathContains("/day=29/hour=19/"), boom)
			return nil
		}, true},
		{"owner died after renaming, next owner recovers", func(*storagetest.MemFS) Faults {
			return &panicFaults{state: FileCommitted, n: 1}
		}, false},
		{"rename refused, next owner recovers", func(mem *storagetest.MemFS) Faults {
			mem.FailNext(storagetest.OpRename, finalFiles, boom)
			return nil
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := storagetest.NewMemFS()
			f := newFixture(t, mem)
			f.part = sweepCases(t)[2].part // hourly: one commit spans several directories
			cat := &recordingCatalog{}
			if _, err := f.drive(withCatalog(f.partition(nil), cat), 150); err != nil {
				t.Fatal(err)
			}
			p := withCatalog(f.partition(tc.fault(mem)), cat)
			crashed, err := f.drive(p, n)
			if !crashed && err == nil {
				t.Fatal("the injected fault did not stop the commit")
			}
			t.Logf("owner stopped: crashed=%v err=%v", crashed, err)
			if crashed {
				mem.Crash()
			}
			if !tc.sameOwner {
				p = withCatalog(f.partition(nil), cat)
			}
			if _, err := f.drive(p, n); err != nil {
				t.Fatal(err)
			}
			want := committedDirs(t, f, n)
			if got := cat.known(testTopic); !slices.Equal(got, want) {
				t.Fatalf("catalog knows %d directories, %d hold committed files\n  missing: %v",
					len(got), len(want), missing(want, got))
			}
		})
	}
}

// committedDirs are the encoded directories that hold committed files.
func committedDirs(t *testing.T, f *fixture, n int64) []string {
	t.Helper()
	topic := layout.Topic{TopicsDir: "/topics", Name: testTopic}
	seen := map[string]bool{}
	for _, file := range f.check(n).Files {
		dir, ok := topic.EncodedDir(file.Path)
		if !ok {
			t.Fatalf("committed file %s is not below %s", file.Path, topic.Dir())
		}
		seen[dir] = true
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	if len(out) < 2 {
		t.Fatalf("only %d directories: the test does not exercise multi-directory commits", len(out))
	}
	return out
}

func missing(want, got []string) string {
	var out []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			out = append(out, w)
		}
	}
	return fmt.Sprint(out)
}
