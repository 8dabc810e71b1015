package main

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func TestLongestGap(t *testing.T) {
	tests := []struct {
		name     string
		writes   []float64
		from, to float64
		want     float64
	}{
		{name: "no writes: the whole window", from: 10, to: 14, want: 4},
		{name: "steady writes", writes: []float64{9.9, 10.2, 10.5, 10.8, 11.1}, from: 10, to: 11, want: 0.3},
		{name: "a gap inside", writes: []float64{10.1, 10.2, 12.7, 12.8}, from: 10, to: 13, want: 2.5},
		// A stall that began before the window and ends after it counts
		// whole: its edges are the writes just outside.
		{name: "spanning the window", writes: []float64{9, 15}, from: 10, to: 11, want: 6},
		{name: "from the last write before to the window's end", writes: []float64{8, 9.5}, from: 10, to: 12, want: 2.5},
		{name: "writes after the window stop the count", writes: []float64{10.5, 11.5, 30}, from: 10, to: 11, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ws []time.Time
			for _, w := range tt.writes {
				ws = append(ws, at(w))
			}
			got := longestGap(ws, at(tt.from), at(tt.to)).Seconds()
			if d := got - tt.want; d > 1e-9 || d < -1e-9 {
				t.Fatalf("longest gap %v, want %v", got, tt.want)
			}
		})
	}
}

// A cooperative rebalance (B takes partitions 2 and 3 of A's four) and an
// eager one (A loses all four, gets 0 and 1 back) are told apart, and only
// the needless revocations count as revoked-but-not-moved.
func TestScenarioMoves(t *testing.T) {
	sc := assignScenario{freshDone: at(12), joinAt: at(20), joinDone: at(35), leaveAt: at(50), leaveDone: at(65)}
	fresh := func(p int32, released float64) assignment {
		a := assignment{Partition: p, Assigned: at(0.1), Committed: at(11)}
		if released > 0 {
			a.Released = at(released)
		}
		return a
	}
	toB := func(p int32) assignment {
		return assignment{Partition: p, Assigned: at(23), Committed: at(34), Released: at(51)}
	}
	tests := []struct {
		name string
		a, b []assignment
		want moves
	}{
		{
			name: "cooperative",
			a:    []assignment{fresh(0, 0), fresh(1, 0), fresh(2, 21), fresh(3, 21), {Partition: 2, Assigned: at(52), Committed: at(63)}, {Partition: 3, Assigned: at(52), Committed: at(63)}},
			b:    []assignment{toB(2), toB(3)},
			want: moves{RevokedOnA: 2, AssignedToB: 2, KeptOnA: 2, AssignedInLeave: 2, JoinSec: 3, LeaveSec: 2},
		},
		{
			name: "eager",
			a: []assignment{fresh(0, 21), fresh(1, 21), fresh(2, 21), fresh(3, 21),
				{Partition: 0, Assigned: at(23), Committed: at(34)}, {Partition: 1, Assigned: at(23), Committed: at(34)},
				{Partition: 2, Assigned: at(52), Committed: at(63)}, {Partition: 3, Assigned: at(52), Committed: at(63)}},
			b:    []assignment{toB(2), toB(3)},
			want: moves{RevokedOnA: 4, AssignedToB: 2, RevokedNotMoved: 2, ReassignedToA: 2, AssignedInLeave: 2, JoinSec: 3, LeaveSec: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := sc
			sc.b = tt.b
			r := sc.result(caseSpec{Partitions: 4, Rotate: 10 * time.Second}, t0, tt.a)
			if r.Moves != tt.want {
				t.Fatalf("moves\n got %+v\nwant %+v", r.Moves, tt.want)
			}
			if r.Join.Partitions != 2 || r.Join.AssignToCommit.Max != 11 {
				t.Fatalf("B's latency %+v, want 2 partitions, 11 s", r.Join)
			}
		})
	}
}

func TestAllCommitted(t *testing.T) {
	as := []assignment{
		{Partition: 0, Assigned: at(0), Committed: at(11)},
		{Partition: 1, Assigned: at(0), Released: at(5)}, // released: no longer waited for
		{Partition: 1, Assigned: at(20)},
	}
	if allCommitted(as, time.Time{}) {
		t.Fatal("partition 1's second assignment has not committed")
	}
	if !allCommitted(as, at(30)) {
		t.Fatal("nothing was assigned since 30 s")
	}
	if got := len(owned(as)); got != 2 {
		t.Fatalf("owned %d, want 2", got)
	}
}
