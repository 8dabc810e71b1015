package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// assignCase is the assignment case's rounds for one partition count.
type assignCase struct {
	Partitions int            `json:"partitions"`
	RotateSec  float64        `json:"rotate_interval_seconds"`
	Trickle    string         `json:"trickle"` // one record to every partition this often
	Rounds     []assignResult `json:"rounds"`
}

// runAssignment runs the assignment case (assign.go) o.repeat times for
// each partition count, each round on a fresh topic, group and directory.
func (e *env) runAssignment(o options) ([]assignCase, error) {
	var out []assignCase
	for _, parts := range o.assignParts {
		ac := assignCase{Partitions: parts, RotateSec: o.assignRotate.Seconds(), Trickle: o.assignTrickle.String()}
		for i := range max(o.repeat, 1) {
			r, err := e.assignRound(o, parts, i)
			if err != nil {
				return append(out, ac), fmt.Errorf("%d partitions, round %d: %w", parts, i+1, err)
			}
			ac.Rounds = append(ac.Rounds, r)
			fmt.Fprintf(os.Stderr, "bench: assignment %dp round %d: fresh assign→commit max %.2f s, B's max %.2f s, A's on leave max %.2f s; revoked on A %d, to B %d; stall max %.2f s (baseline %.2f s); slowest first commit %.2f s past the interval\n",
				parts, i+1, r.Fresh.AssignToCommit.Max, r.Join.AssignToCommit.Max, r.Leave.AssignToCommit.Max,
				r.Moves.RevokedOnA, r.Moves.AssignedToB, r.JoinStall.LongestGap.Max, r.Baseline.LongestGap.Max, assignOver(r).Seconds())
		}
		out = append(out, ac)
	}
	return out, nil
}

func (e *env) assignRound(o options, parts, i int) (assignResult, error) {
	const size = "100B"
	topic, _, err := e.topic(size, parts, 0)
	if err != nil {
		return assignResult{}, err
	}
	defer e.dropTopic(topic)
	spec := caseSpec{Kind: "assign", Topic: topic, Partitions: parts, Format: "avro", Partitioner: "default",
		Dir: e.dir(topic), FlushSize: 1 << 40, MemoryMax: o.memoryMax, Rotate: o.assignRotate, Size: size,
		Round: i, Trickle: o.assignTrickle, HDFSConns: o.assignConns, Parallelism: o.assignParallel, TimedPerPoll: o.assignTimedPerPoll}
	if i == 0 && o.assignProfile != "" {
		spec.CPUProfile, spec.Trace = fmt.Sprintf("%s-%dp.cpu", o.assignProfile, parts), fmt.Sprintf("%s-%dp.trace", o.assignProfile, parts)
	}
	fmt.Fprintf(os.Stderr, "bench: assignment %dp round %d\n", parts, i+1)
	res, err := child(o.binary, spec)
	if err != nil {
		return assignResult{}, err
	}
	if res.Assign == nil {
		return assignResult{}, fmt.Errorf("assignment case on %s: no result", topic)
	}
	return *res.Assign, nil
}

// printAssignment prints one table row per round: the target is
// assignment → first commit ≤ rotate.interval.ms + 2 s, and a rebalance
// that revokes only what moves and stalls the rest < 1 s.
func printAssignment(w io.Writer, cases []assignCase) {
	if len(cases) == 0 {
		return
	}
	fmt.Fprintln(w, "\n| partitions | round | rotate s | start→assigned s | fresh: assign→commit median / max s | B joins: assign→commit median / max s | B leaves, A: assign→commit median / max s | revoked on A | to B | revoked not to B | re-assigned to A | revoked on A when B left | B start→assigned s | stall when B joins: median / max s | when B leaves | steady gap median / max s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range cases {
		for i, r := range c.Rounds {
			fmt.Fprintf(w, "| %d | %d | %.0f | %.2f | %s | %s | %s | %d | %d | %d | %d | %d | %.2f | %s | %s | %s |\n",
				c.Partitions, i+1, r.RotateSec, r.StartToAssignedSec, r.Fresh.AssignToCommit, r.Join.AssignToCommit,
				r.Leave.AssignToCommit, r.Moves.RevokedOnA, r.Moves.AssignedToB, r.Moves.RevokedNotMoved, r.Moves.ReassignedToA,
				r.Moves.RevokedInLeave, r.BStartToAssignedSec, r.JoinStall.LongestGap, r.LeaveStall.LongestGap, r.Baseline.LongestGap)
		}
	}
	fmt.Fprintln(w, "\nwhere the time went, assignment → first commit (median / max s of each step, round by round):")
	fmt.Fprintln(w, "\n| partitions | round | phase | partitions | assigned→recovered | recovered→first write | first write→rotation | rotation→committed | total |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, c := range cases {
		for i, r := range c.Rounds {
			for _, ph := range []struct {
				name string
				l    phaseLatency
			}{{"fresh (A)", r.Fresh}, {"B joins (B)", r.Join}, {"B leaves (A)", r.Leave}} {
				l := ph.l
				fmt.Fprintf(w, "| %d | %d | %s | %d | %s | %s | %s | %s | %s |\n", c.Partitions, i+1, ph.name, l.Partitions,
					l.Recovery, l.FirstWrite, l.Interval, l.Commit, l.AssignToCommit)
			}
		}
	}
}

func (s stat) String() string { return fmt.Sprintf("%.2f / %.2f", s.Median, s.Max) }

// assignOver is how far the slowest first commit of any phase went past
// rotate.interval.ms (the target: ≤ 2 s).
func assignOver(r assignResult) time.Duration {
	worst := max(r.Fresh.AssignToCommit.Max, r.Join.AssignToCommit.Max, r.Leave.AssignToCommit.Max)
	return time.Duration((worst - r.RotateSec) * float64(time.Second))
}
