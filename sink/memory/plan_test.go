package memory

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestNewPlan pins the split docs/design.md §9 describes: 5/16 for open
// files, 3/16 for fetching divided between connectors, and a Go soft limit
// of the ceiling minus max(10%, 64 MB).
func TestNewPlan(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name       string
		ceiling    int64
		connectors int
		want       Plan
		fetchMax   int32 // one fetch: FetchBytes/24, within [1 MiB, 1 GiB]
	}{
		{"no ceiling", 0, 3, Plan{}, 0},
		{"negative is no ceiling", -1, 1, Plan{}, 0},
		{"connector default 256 MiB", 256 * mib, 1, Plan{256 * mib, 80 * mib, 48 * mib, 192 * mib}, 2 * mib},
		{"zero connectors count as one", 256 * mib, 0, Plan{256 * mib, 80 * mib, 48 * mib, 192 * mib}, 2 * mib},
		{"1 GiB, two connectors: a tenth left", 1 << 30, 2, Plan{1 << 30, 320 * mib, 96 * mib, 1<<30 - 107374182}, 4 * mib},
		{"640 MiB: a tenth is 64 MB", 640 * mib, 1, Plan{640 * mib, 200 * mib, 120 * mib, 576 * mib}, 5 * mib},
		{"share rounds down, per connector first", 4 << 30, 3, Plan{4 << 30, 1280 * mib, 268435455, 4<<30 - 429496729}, 11184810},
		{"small: one fetch is at least 1 MiB", 16 * mib, 1, Plan{16 * mib, 5 * mib, 3 * mib, -48 * mib}, mib},
		{"not a multiple of 16", 1000, 1, Plan{1000, 310, 186, 1000 - 64*mib}, mib},
		{"huge: one fetch is at most 1 GiB", 1 << 40, 1, Plan{1 << 40, 5 << 36, 3 << 36, 1<<40 - 109951162777}, 1 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewPlan(tt.ceiling, tt.connectors)
			if got != tt.want {
				t.Fatalf("NewPlan(%d, %d) = %+v, want %+v", tt.ceiling, tt.connectors, got, tt.want)
			}
			if got.FetchBytes > 0 && got.fetchMaxBytes() != tt.fetchMax {
				t.Fatalf("one fetch = %d bytes, want %d", got.fetchMaxBytes(), tt.fetchMax)
			}
		})
	}
}

func TestMemoryPlanWithin(t *testing.T) {
	own := NewPlan(256<<20, 1) // fetch share 48 MiB
	tests := []struct {
		name    string
		process Plan
		want    int64
	}{
		{"no process ceiling", Plan{}, 48 << 20},
		{"process share larger", NewPlan(4<<30, 2), 48 << 20},
		{"process share smaller", NewPlan(1<<30, 8), 24 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := own.Within(tt.process)
			if got.FetchBytes != tt.want {
				t.Fatalf("fetch share = %d, want %d", got.FetchBytes, tt.want)
			}
			if got.FileBudget != own.FileBudget || got.GoLimit != own.GoLimit {
				t.Fatalf("Within changed more than the fetch share: %+v", got)
			}
		})
	}
}

// TestMemoryPlanFetchOpts reads the options back from a client.
func TestMemoryPlanFetchOpts(t *testing.T) {
	if opts := NewPlan(0, 1).FetchOpts(); opts != nil {
		t.Fatalf("no ceiling: %d options, want none", len(opts))
	}
	cl, err := kgo.NewClient(NewPlan(1<<30, 1).FetchOpts()...) // 192 MiB to fetch, 8 MiB a fetch
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, o := range []struct {
		name string
		opt  any
		want int32
	}{
		{"FetchMaxBytes", kgo.FetchMaxBytes, 8 << 20},
		{"FetchMaxPartitionBytes", kgo.FetchMaxPartitionBytes, 1 << 20},
		{"BrokerMaxReadBytes", kgo.BrokerMaxReadBytes, 9 << 20},
	} {
		if got := cl.OptValue(o.opt); got != o.want {
			t.Errorf("%s = %v, want %d", o.name, got, o.want)
		}
	}
	if got := cl.OptValue(kgo.MaxConcurrentFetches); got != 2 {
		t.Errorf("MaxConcurrentFetches = %v, want 2", got)
	}
}
