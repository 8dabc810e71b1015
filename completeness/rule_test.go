package completeness

import (
	"math"
	"reflect"
	"testing"
	"time"
)

// TestFrontier is the completeness rule, case by case, for the directory
// 14:00-15:00 with ten minutes of lateness: it is complete when the
// frontier reaches 15:00, that is every partition's horizon 15:10.
func TestFrontier(t *testing.T) {
	hour := func(h, m int) int64 { return time.Date(2026, 5, 1, h, m, 0, 0, time.UTC).UnixMilli() }
	const lateness = 10 * time.Minute
	end := hour(15, 0)
	now := time.Date(2026, 5, 1, 16, 0, 0, 0, time.UTC)
	busy := func(p int32, maxAt int64) Progress {
		return Progress{Partition: p, MaxRecordMillis: maxAt, Committed: 99, LogEnd: 500}
	}
	idle := func(p int32, maxAt int64) Progress {
		return Progress{Partition: p, MaxRecordMillis: maxAt, Committed: 99, LogEnd: 100}
	}
	tests := []struct {
		name     string
		parts    []Progress
		now      time.Time
		complete bool
		holding  []int32
		idle     []int32
	}{
		{"all past end+lateness", []Progress{busy(0, hour(15, 10)), busy(1, hour(15, 30))}, now, true, []int32{0}, nil},
		{"one partition short of the lateness", []Progress{busy(0, hour(15, 9)), busy(1, hour(15, 30))}, now, false, []int32{0}, nil},
		{"past the end but not the lateness", []Progress{busy(0, hour(15, 5)), busy(1, hour(15, 5))}, now, false, []int32{0, 1}, nil},
		{"idle partition, clock past end+lateness", []Progress{idle(0, hour(9, 0)), busy(1, hour(15, 30))}, now, true, []int32{1}, []int32{0}},
		{"idle partition, clock short of end+lateness", []Progress{idle(0, hour(9, 0)), busy(1, hour(15, 30))}, time.UnixMilli(hour(15, 5)), false, []int32{0}, []int32{0}},
		{"idle but with an unknown log end is not idle", []Progress{{Partition: 0, MaxRecordMillis: hour(9, 0), Committed: 99, LogEnd: -1}}, now, false, []int32{0}, nil},
		{"lagging partition holds back even if the clock is past", []Progress{{Partition: 0, MaxRecordMillis: hour(9, 0), Committed: 99, LogEnd: 101}, busy(1, hour(17, 0))}, now, false, []int32{0}, nil},
		{"never-written empty partition is idle", []Progress{{Partition: 0, Committed: -1, LogEnd: 0}, busy(1, hour(15, 10))}, now, true, []int32{1}, []int32{0}},
		{"never-written partition with records holds back", []Progress{{Partition: 0, Committed: -1, LogEnd: 3}, busy(1, hour(17, 0))}, now, false, []int32{0}, nil},
		{"committed beyond the log end (read before the WAL) is idle", []Progress{{Partition: 0, MaxRecordMillis: hour(9, 0), Committed: 120, LogEnd: 100}}, now, true, []int32{0}, []int32{0}},
		{"no partitions: never complete", nil, now, false, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Frontier(tc.parts, tc.now, lateness)
			if got := v.Complete(end); got != tc.complete {
				t.Errorf("Complete(15:00) = %v (frontier %v), want %v", got, time.UnixMilli(v.Frontier).UTC(), tc.complete)
			}
			if !reflect.DeepEqual(v.Holding, tc.holding) || !reflect.DeepEqual(v.Idle, tc.idle) {
				t.Errorf("holding %v idle %v, want %v and %v", v.Holding, v.Idle, tc.holding, tc.idle)
			}
		})
	}
}

// TestFrontierIsTheLowestHorizon: the frontier is exact, so a directory
// ending one millisecond later is not complete.
func TestFrontierIsTheLowestHorizon(t *testing.T) {
	v := Frontier([]Progress{{Partition: 0, MaxRecordMillis: 5000, Committed: 1, LogEnd: 9}, {Partition: 1, MaxRecordMillis: 7000, Committed: 1, LogEnd: 9}}, time.UnixMilli(math.MaxInt32), time.Second)
	if v.Frontier != 4000 || !v.Complete(4000) || v.Complete(4001) {
		t.Fatalf("frontier %d; Complete(4000) %v, Complete(4001) %v; want 4000, true, false", v.Frontier, v.Complete(4000), v.Complete(4001))
	}
}
