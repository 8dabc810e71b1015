//go:build faults

package daemon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

func TestRenameFaultsFromEnv(t *testing.T) {
	cases := []struct {
		value   string
		every   int64
		wantErr bool
	}{
		{"", 0, false},
		{"3", 3, false},
		{"1", 0, true}, // recovery's own rename would be refused too, forever
		{"0", 0, true},
		{"-2", 0, true},
		{"every third", 0, true},
	}
	for _, c := range cases {
		t.Setenv("HDFS_SINK_FAIL_RENAME_EVERY", c.value)
		every, err := renameFaultsFromEnv()
		if every != c.every || (err != nil) != c.wantErr {
			t.Errorf("HDFS_SINK_FAIL_RENAME_EVERY=%q: %d, %v; want %d, error %v", c.value, every, err, c.every, c.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "HDFS_SINK_FAIL_RENAME_EVERY") {
			t.Errorf("error %q does not name the variable", err)
		}
	}
}

// TestFailRenamesRefusesEveryNthCommit: only renames to committed names
// count, every third of them is refused without taking effect, and the
// rest of the store works as before.
func TestFailRenamesRefusesEveryNthCommit(t *testing.T) {
	mem := storagetest.NewMemFS()
	open := failRenames(func(*configs.Connector) (storage.FS, error) { return mem, nil }, 3)
	store, err := open(&configs.Connector{})
	if err != nil {
		t.Fatal(err)
	}
	topic := layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "orders"}
	var refused []int
	for i := 0; i < 7; i++ {
		temp := topic.ClaimTempDir(0, 1) + "/t" + string(rune('a'+i))
		touch(t, store, temp)
		touch(t, store, "/logs/orders/0/.staging")
		if err := store.Rename(t.Context(), "/logs/orders/0/.staging", "/logs/orders/0/seg"); err != nil {
			t.Fatalf("WAL rename refused: %v", err)
		}
		final := topic.FinalPath("partition=0", 0, int64(i), int64(i), 10, ".avro")
		if err := store.Rename(t.Context(), temp, final); err != nil {
			refused = append(refused, i)
			if _, serr := store.Stat(t.Context(), final); serr == nil {
				t.Fatalf("refused rename #%d took effect", i+1)
			}
		}
	}
	if len(refused) != 2 || refused[0] != 2 || refused[1] != 5 {
		t.Fatalf("refused renames %v (0-based); want [2 5]", refused)
	}
}

func touch(t *testing.T, store storage.FS, name string) {
	t.Helper()
	f, err := store.Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFreezeRenameFromEnv(t *testing.T) {
	cases := []struct {
		value   string
		kind    string
		n       int64
		wantErr bool
	}{
		{"segment", "segment", 1, false},
		{"final:7", "final", 7, false},
		{"segment:0", "", 0, true},
		{"final:x", "", 0, true},
		{"temp:2", "", 0, true},
	}
	for _, c := range cases {
		t.Setenv("HDFS_SINK_FREEZE_RENAME", c.value)
		f, err := freezeRenameFromEnv()
		if (err != nil) != c.wantErr || (err == nil && (f.kind != c.kind || f.n != c.n)) {
			t.Errorf("HDFS_SINK_FREEZE_RENAME=%q: %+v, %v; want %s:%d, error %v", c.value, f, err, c.kind, c.n, c.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "HDFS_SINK_FREEZE_RENAME") {
			t.Errorf("error %q does not name the variable", err)
		}
	}
	t.Setenv("HDFS_SINK_FREEZE_RENAME", "")
	if f, err := freezeRenameFromEnv(); f != nil || err != nil {
		t.Errorf("unset: %+v, %v", f, err)
	}
}

// TestFreezeRenamesStopsBeforeTheNthOfItsKind: the process stops once,
// before the N-th rename of the kind asked for (the other kind never
// counts), and that rename is made once it is continued.
func TestFreezeRenamesStopsBeforeTheNthOfItsKind(t *testing.T) {
	topic := layout.Topic{TopicsDir: "/topics", LogsDir: "/logs", Name: "orders"}
	for _, kind := range []string{"segment", "final"} {
		t.Run(kind, func(t *testing.T) {
			mem := storagetest.NewMemFS()
			f := &renameFreeze{kind: kind, n: 2}
			open := freezeRenames(func(*configs.Connector) (storage.FS, error) { return mem, nil }, f)
			store, err := open(&configs.Connector{})
			if err != nil {
				t.Fatal(err)
			}
			var current string // the destination of the rename under way
			var stopped []string
			f.stop = func() {
				if _, err := mem.Stat(t.Context(), current); err == nil {
					t.Errorf("stopped after the rename to %s, not before", current)
				}
				stopped = append(stopped, current)
			}
			var wantStop string
			for i := 0; i < 4; i++ {
				staging, seg := fmt.Sprintf("/logs/orders/0/.staging-%d", i), fmt.Sprintf("/logs/orders/0/%020d", i)
				temp := topic.ClaimTempDir(0, 1) + fmt.Sprintf("/t%d", i)
				final := topic.FinalPath("partition=0", 0, int64(i), int64(i), 10, ".avro")
				touch(t, store, staging+"/segment")
				touch(t, store, temp)
				if i == 1 {
					wantStop = map[string]string{"segment": seg, "final": final}[kind]
				}
				for _, mv := range [][2]string{{staging, seg}, {temp, final}} {
					current = mv[1]
					if err := store.Rename(t.Context(), mv[0], mv[1]); err != nil {
						t.Fatal(err)
					}
					if _, err := mem.Stat(t.Context(), mv[1]); err != nil {
						t.Fatalf("rename to %s not made: %v", mv[1], err)
					}
				}
			}
			if len(stopped) != 1 || stopped[0] != wantStop {
				t.Fatalf("stopped before %v; want once, before the second %s rename (%s)", stopped, kind, wantStop)
			}
		})
	}
}
