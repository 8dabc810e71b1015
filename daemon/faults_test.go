//go:build faults

package daemon

import (
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
