package main

import (
	"slices"
	"testing"
)

// TestProduceOrder: every record is produced once, to the same partition
// either way; past groupedAbove partitions a partition's records are
// contiguous (full batches), below it the order is round-robin as before.
func TestProduceOrder(t *testing.T) {
	for _, tc := range []struct{ n, parts int }{{10, 2}, {2000, 1000}, {30000, 10000}, {7, 3}} {
		order := produceOrder(tc.n, tc.parts)
		sorted := slices.Sorted(slices.Values(order))
		for i, v := range sorted {
			if v != i {
				t.Fatalf("n=%d parts=%d: record %d missing or repeated", tc.n, tc.parts, i)
			}
		}
		changes := 0
		for i := 1; i < len(order); i++ {
			if order[i]%tc.parts != order[i-1]%tc.parts {
				changes++
			}
		}
		want := tc.n - 1 // round-robin: every step changes partition
		if tc.parts > groupedAbove {
			want = tc.parts - 1 // grouped: once per partition
		} else if tc.parts == 1 {
			want = 0
		}
		if changes != want {
			t.Errorf("n=%d parts=%d: partition changes %d, want %d", tc.n, tc.parts, changes, want)
		}
	}
}
