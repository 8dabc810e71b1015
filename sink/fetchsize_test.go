package sink

import (
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/sink/memory"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestPartitionBytes(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name               string
		maxBytes, partCap  int32
		owned, parallelism int
		want               int32
	}{
		{"one partition keeps the built bound", 2 * mib, mib, 1, 8, mib},
		{"nothing owned counts as one", 2 * mib, mib, 0, 8, mib},
		{"two partitions share the fetch", 2 * mib, mib, 2, 8, mib},
		{"eight partitions, one share each", 2 * mib, mib, 8, 8, mib / 4},
		{"sixty-four partitions: spread over the eight workers", 2 * mib, mib, 64, 8, mib / 4},
		{"four workers", 2 * mib, mib, 64, 4, mib / 2},
		{"a large fetch is left at the built bound", 50 * mib, mib, 64, 8, mib},
		{"one worker", 2 * mib, mib, 64, 1, mib},
		{"a tiny fetch never reaches zero", 4, mib, 64, 8, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := partitionBytes(tc.maxBytes, tc.partCap, tc.owned, tc.parallelism); got != tc.want {
				t.Fatalf("partitionBytes = %d, want %d", got, tc.want)
			}
		})
	}
}

type recordedSizes struct{ calls [][2]int32 }

func (r *recordedSizes) UpdateFetchMaxBytes(maxBytes, maxPartBytes int32) {
	r.calls = append(r.calls, [2]int32{maxBytes, maxPartBytes})
}

// TestFetchSizesFollowOwnership: the bound follows the owned partitions
// both ways, and is set only when their number changes.
func TestFetchSizesFollowOwnership(t *testing.T) {
	rec := &recordedSizes{}
	f := &fetchSizes{cl: rec, maxBytes: 2 << 20, partCap: 1 << 20, parallelism: 8, owned: -1}
	for _, owned := range []int{64, 64, 64, 1, 1, 8} {
		f.follow(owned)
	}
	want := [][2]int32{{2 << 20, 256 << 10}, {2 << 20, 1 << 20}, {2 << 20, 256 << 10}}
	if len(rec.calls) != len(want) {
		t.Fatalf("updates = %v, want %v", rec.calls, want)
	}
	for i := range want {
		if rec.calls[i] != want[i] {
			t.Fatalf("updates = %v, want %v", rec.calls, want)
		}
	}
}

// TestConnectorSpreadsFetches: a connector owning 16 partitions with 4
// workers and the memory plan's 2 MiB fetch asks for 512 KiB a partition.
func TestConnectorSpreadsFetches(t *testing.T) {
	k := newKafkaFixture(t, 16, testTopic)
	k.produceRange(16, 0, 20)
	cfg := k.config("fetch-spread")
	cfg.Parallelism = 4
	cfg.KafkaOpts = append(cfg.KafkaOpts, memory.NewPlan(256<<20, 1).FetchOpts()...)
	r := start(t, cfg)
	waitFor(t, "320 committed records", func() bool { return committedRecords(k.fs) == 320 })
	r.stop()
	if _, ok := r.wait(30 * time.Second); !ok {
		t.Fatal("connector did not stop")
	}
	// Run has returned: nothing updates the client any more.
	if got := r.cl.OptValue(kgo.FetchMaxBytes); got != int32(2<<20) {
		t.Fatalf("FetchMaxBytes = %v, want the plan's 2 MiB unchanged", got)
	}
	if got := r.cl.OptValue(kgo.FetchMaxPartitionBytes); got != int32(512<<10) {
		t.Fatalf("FetchMaxPartitionBytes = %v, want 512 KiB (2 MiB over 4 workers)", got)
	}
}
