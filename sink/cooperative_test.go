package sink

import (
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
)

// tenures records, per partition, how often a connector was assigned it
// and whether it holds it now.
type tenures struct {
	nopObserver
	mu       sync.Mutex
	assigned map[int32]int
	held     map[int32]bool
	revoked  map[int32]bool
}

func newTenures() *tenures {
	return &tenures{assigned: map[int32]int{}, held: map[int32]bool{}, revoked: map[int32]bool{}}
}

func (o *tenures) Partition(_ string, p int32) PartitionObserver {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.assigned[p]++
	o.held[p] = true
	return tenure{o: o, p: p}
}

func (o *tenures) heldNow() []int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []int32
	for p, h := range o.held {
		if h {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func (o *tenures) snapshot() (assigned map[int32]int, revoked []int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.assigned), slices.Sorted(maps.Keys(o.revoked))
}

type tenure struct {
	nopPartition
	o *tenures
	p int32
}

func (t tenure) Released() {
	t.o.mu.Lock()
	defer t.o.mu.Unlock()
	t.o.held[t.p] = false
	t.o.revoked[t.p] = true
}

// TestJoinRevokesOnlyWhatMoves: a second member joining the group takes
// some partitions, and the first gives up only those (cooperative-sticky,
// franz-go's default balancer, as Connect's incremental rebalancing): the
// partitions it keeps are neither revoked nor recovered again, and keep
// their open files. Every offset still lands once (docs/design.md §6).
func TestJoinRevokesOnlyWhatMoves(t *testing.T) {
	const parts = 6
	k := newKafkaFixture(t, parts, testTopic)
	next := map[int32]int64{}
	produce := func(n int64) {
		var recs []*kgo.Record
		for p := int32(0); p < parts; p++ {
			for range n {
				recs = append(recs, k.good(p, next[p]))
				next[p]++
			}
		}
		k.produce(recs...)
	}
	cfg := k.config("cooperative")
	cfg.FlushSize, cfg.RotateInterval = 1_000_000, 0 // only a release commits
	first, second := newTenures(), newTenures()
	cfgA, cfgB := cfg, cfg
	cfgA.Observer, cfgB.Observer = first, second
	a := start(t, cfgA)
	produce(20)
	waitFor(t, "the first member writing every partition", func() bool { return a.Stats.Records.Load() >= 20*parts })
	b := start(t, cfgB)
	waitFor(t, "the second member holding partitions", func() bool {
		return len(second.heldNow()) > 0 && len(first.heldNow())+len(second.heldNow()) == parts
	})
	assignedA, revokedA := first.snapshot()
	moved := second.heldNow()
	if !slices.Equal(revokedA, moved) {
		t.Fatalf("the first member gave up partitions %v, the second took %v: only what moves may be revoked", revokedA, moved)
	}
	for p, n := range assignedA {
		if n != 1 {
			t.Fatalf("partition %d was assigned to the first member %d times: a kept partition was revoked and assigned back", p, n)
		}
	}
	produce(20)
	waitFor(t, "both members writing", func() bool { return a.Stats.Records.Load()+b.Stats.Records.Load() >= 40*parts })
	for _, r := range []*running{a, b} {
		r.stop()
		if err, ok := r.wait(30 * time.Second); !ok || err != nil {
			t.Fatalf("connector: stopped=%v err=%v", ok, err)
		}
	}
	want := map[int32]int64{}
	for p := int32(0); p < parts; p++ {
		want[p] = next[p]
	}
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: want, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}
