package memory

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestGovern: the plan's limit is set and the proportional trigger
// raised, unless the operator's environment says otherwise or the
// ceiling leaves no room for a limit.
func TestGovern(t *testing.T) {
	cases := []struct {
		name        string
		ceiling     int64
		gogc, limit string
		wantSet     bool
		wantPercent int // GC percent after Govern; 100 stands for "left as it was"
		wantGoLimit int64
	}{
		{name: "plan governs", ceiling: 256 << 20, wantSet: true, wantPercent: gcPercent, wantGoLimit: NewPlan(256<<20, 1).GoLimit},
		{name: "operator's GOGC kept", ceiling: 256 << 20, gogc: "200", wantSet: true, wantPercent: 100, wantGoLimit: NewPlan(256<<20, 1).GoLimit},
		{name: "operator's GOMEMLIMIT wins", ceiling: 256 << 20, limit: "1GiB", wantPercent: 100, wantGoLimit: math.MaxInt64},
		{name: "no ceiling", ceiling: 0, wantPercent: 100, wantGoLimit: math.MaxInt64},
		{name: "ceiling too small for a limit", ceiling: 32 << 20, wantPercent: 100, wantGoLimit: math.MaxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.limit)
			oldLimit := debug.SetMemoryLimit(math.MaxInt64)
			oldPercent := debug.SetGCPercent(100)
			defer func() {
				debug.SetMemoryLimit(oldLimit)
				debug.SetGCPercent(oldPercent)
			}()
			if got := NewPlan(tc.ceiling, 1).Govern(); got != tc.wantSet {
				t.Errorf("Govern() = %v, want %v", got, tc.wantSet)
			}
			if got := debug.SetGCPercent(100); got != tc.wantPercent {
				t.Errorf("GC percent %d, want %d", got, tc.wantPercent)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.wantGoLimit {
				t.Errorf("memory limit %d, want %d", got, tc.wantGoLimit)
			}
		})
	}
}
