package main

import (
	"fmt"
	"sort"
	"strings"
)

// comparison is this build against a base build on the same backlog, in
// the same run: each figure is the median of the rounds' paired ratios
// (this build over the base, round by round), so a round the machine
// slowed for both sides does not move it.
type comparison struct {
	Throughput   float64   `json:"throughput_ratio"`     // records/s; > 1 is faster
	CPUPerRecord float64   `json:"cpu_per_record_ratio"` // CPU-s per record; < 1 is cheaper
	PeakRSS      float64   `json:"peak_rss_ratio"`       // < 1 is smaller
	Rounds       []float64 `json:"throughput_ratio_per_round"`
}

// compare pairs each round's sink with the base's. Rounds without a base
// result (no -base) give nil.
func compare(rounds []round) *comparison {
	var tput, cpu, rss []float64
	for _, r := range rounds {
		if r.BaseSink == nil {
			return nil
		}
		tput = append(tput, ratio(rate(r.Sink), rate(*r.BaseSink)))
		cpu = append(cpu, ratio(cpuPerM(r.Sink), cpuPerM(*r.BaseSink)))
		rss = append(rss, ratio(float64(r.Sink.PeakRSSBytes), float64(r.BaseSink.PeakRSSBytes)))
	}
	if len(tput) == 0 {
		return nil
	}
	return &comparison{Throughput: medianOf(tput), CPUPerRecord: medianOf(cpu), PeakRSS: medianOf(rss), Rounds: tput}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func medianOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printComparison is bench-compare's table: what a change does to each
// workload, next to the base's own figures.
func printComparison(b *strings.Builder, cases []caseReport) {
	fmt.Fprintln(b, "| workload | base rec/s | rec/s | throughput × | base CPU s / M rec | CPU s / M rec | CPU per record × | base peak RSS MB | peak RSS MB | throughput × per round |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range cases {
		if c.VsBase == nil || c.BaseSink == nil {
			continue
		}
		per := make([]string, len(c.VsBase.Rounds))
		for i, r := range c.VsBase.Rounds {
			per[i] = fmt.Sprintf("%.2f", r)
		}
		fmt.Fprintf(b, "| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f | %s |\n",
			c.Workload, rate(*c.BaseSink), rate(c.Sink), c.VsBase.Throughput, cpuPerM(*c.BaseSink), cpuPerM(c.Sink),
			c.VsBase.CPUPerRecord, mb(c.BaseSink.PeakRSSBytes), mb(c.Sink.PeakRSSBytes), strings.Join(per, " "))
	}
}

// baseName is how the report names the base: bench-compare passes the
// binary as <dir>/bench-<commit>.
func baseName(bin string) string {
	if bin == "" {
		return ""
	}
	name := bin[strings.LastIndex(bin, "/")+1:]
	return strings.TrimPrefix(name, "bench-")
}
