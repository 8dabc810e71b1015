package main

import (
	"reflect"
	"testing"
	"time"
)

// TestFenceCosts: the sink seconds lost per compaction of the fenced
// variant, by round, and their share of the pace (none without one).
func TestFenceCosts(t *testing.T) {
	round := func(alone, with float64, passes int64) besideRounds {
		return besideRounds{
			Alone: map[string]caseResult{fencedVariant: {Seconds: alone}},
			With:  map[string]caseResult{fencedVariant: {Seconds: with}},
			Loop:  map[string]caseResult{fencedVariant: {Passes: passes}},
		}
	}
	for _, tc := range []struct {
		name        string
		pace        time.Duration
		rounds      []besideRounds
		cost, share []float64
	}{
		{"one compaction per run, paced", time.Minute, []besideRounds{round(10, 16, 1), round(20, 23, 1)}, []float64{6, 3}, []float64{10, 5}},
		{"back to back: per pass, no share", 0, []besideRounds{round(10, 30, 4)}, []float64{5}, nil},
		{"no pass finished: counted as one", time.Minute, []besideRounds{round(10, 13, 0)}, []float64{3}, []float64{5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bc := besideCase{Rounds: tc.rounds}
			bc.fenceCosts(tc.pace)
			if !reflect.DeepEqual(bc.FenceCost, tc.cost) || !reflect.DeepEqual(bc.PaceShare, tc.share) {
				t.Fatalf("cost %v share %v, want %v and %v", bc.FenceCost, bc.PaceShare, tc.cost, tc.share)
			}
		})
	}
}
