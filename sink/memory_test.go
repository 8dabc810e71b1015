package sink

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/sink/memory"
)

// TestMemoryBudgetSharedByConnectors: two connectors without a ceiling of
// their own share one process budget smaller than what they would buffer;
// both rotate early, neither holds more than the budget, nothing is lost
// or written twice.
func TestMemoryBudgetSharedByConnectors(t *testing.T) {
	const parts, perPart, other = 3, 1000, "other"
	k := newKafkaFixture(t, parts, testTopic, other)
	var recs []*kgo.Record
	for seq := int64(0); seq < perPart; seq++ {
		for p := int32(0); p < parts; p++ {
			r1, r2 := k.good(p, seq), k.good(p, seq)
			r2.Topic = other
			recs = append(recs, r1, r2)
		}
	}
	k.produce(recs...)
	budget := memory.NewBudget(64 << 10)
	var running []*running
	for _, topic := range []string{testTopic, other} {
		cfg := k.config("budget-" + topic)
		cfg.Topics, cfg.Budget = []string{topic}, budget
		cfg.FlushSize, cfg.RotateInterval, cfg.MemoryMax = 1_000_000, 0, 0
		running = append(running, start(t, cfg))
	}
	waitFor(t, "all consumed", func() bool {
		return running[0].Stats.Records.Load()+running[1].Stats.Records.Load() == 2*parts*perPart
	})
	want := map[int32]int64{}
	for p := int32(0); p < parts; p++ {
		want[p] = perPart
	}
	for i, topic := range []string{testTopic, other} {
		c := running[i]
		c.stop()
		if _, ok := c.wait(30 * time.Second); !ok {
			t.Fatal("connector did not stop")
		}
		if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: topic, Want: want, SeqField: "seq"}); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: memory rotations %d, peak %d, files %d", topic, c.Stats.MemoryRotations.Load(), c.Stats.PeakBuffered.Load(), c.Stats.Commits.Load())
		if c.Stats.MemoryRotations.Load() == 0 {
			t.Errorf("%s: the shared budget never forced a rotation", topic)
		}
		if peak := c.Stats.PeakBuffered.Load(); peak > 64<<10 {
			t.Errorf("%s: buffered %d bytes after enforcement, budget %d", topic, peak, 64<<10)
		}
	}
	if got := budget.Buffered(); got != 0 {
		t.Fatalf("stopped connectors still counted: %d bytes", got)
	}
}
