package sink

import (
	"context"
	"testing"
)

// TestTickAllStartsNoWorkerForIdlePartitions: a poll's tick over partitions
// with nothing open starts no goroutine (each costs allocations), so its
// cost does not grow with partitions that have nothing to rotate. With
// 10,000 assigned (issue 25) every poll started 10,000 workers.
func TestTickAllStartsNoWorkerForIdlePartitions(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	cfg := k.config("ticks")
	cfg.Topics = []string{"unrelated"} // its own assignment would add partitions
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const idle = 1000
	for part := range int32(idle) {
		c.parts.put(c.newOwned(tp{testTopic, part}))
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(5, func() {
		if err := c.tickAll(ctx); err != nil {
			t.Fatal(err)
		}
	})
	// The partition list itself is one allocation; a worker each was
	// thousands.
	if allocs > 10 {
		t.Fatalf("tickAll over %d idle partitions made %.0f allocations, want a handful (no worker per idle partition)", idle, allocs)
	}
}
