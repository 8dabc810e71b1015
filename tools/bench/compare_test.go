package main

import (
	"math"
	"strings"
	"testing"
)

func sinkResult(records int64, seconds, cpu float64, rss int64) caseResult {
	return caseResult{Records: records, Seconds: seconds, CPUSeconds: cpu, PeakRSSBytes: rss}
}

func TestCompare(t *testing.T) {
	base := sinkResult(1000, 1, 2, 100)
	tests := []struct {
		name                 string
		rounds               []round
		wantTput, wantCPU    float64
		wantRSS              float64
		wantNil              bool
		wantPerRoundOfLength int
	}{
		{name: "no base", rounds: []round{{Sink: base}}, wantNil: true},
		{name: "no rounds", wantNil: true},
		{name: "same build", rounds: []round{{Sink: base, BaseSink: &base}}, wantTput: 1, wantCPU: 1, wantRSS: 1, wantPerRoundOfLength: 1},
		{
			// Round 2 ran on a machine twice as slow for both sides: the
			// paired ratio is unchanged, where medians of each side apart
			// would mix rounds.
			name: "paired by round",
			rounds: []round{
				{Sink: sinkResult(1000, 0.5, 1, 50), BaseSink: &base},
				{Sink: sinkResult(1000, 1, 2, 50), BaseSink: ptrTo(sinkResult(1000, 2, 4, 100))},
				{Sink: sinkResult(1000, 0.4, 1, 50), BaseSink: &base},
			},
			wantTput: 2, wantCPU: 0.5, wantRSS: 0.5, wantPerRoundOfLength: 3,
		},
		{
			name: "a regression",
			rounds: []round{
				{Sink: sinkResult(1000, 1.3, 2.6, 100), BaseSink: &base},
				{Sink: sinkResult(1000, 1.25, 2.5, 100), BaseSink: &base},
			},
			wantTput: (1/1.3 + 1/1.25) / 2, wantCPU: 1.275, wantRSS: 1, wantPerRoundOfLength: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := compare(tt.rounds)
			if tt.wantNil {
				if c != nil {
					t.Fatalf("compare = %+v, want nil", c)
				}
				return
			}
			if c == nil {
				t.Fatal("compare = nil")
			}
			for _, f := range []struct {
				what      string
				got, want float64
			}{{"throughput", c.Throughput, tt.wantTput}, {"cpu per record", c.CPUPerRecord, tt.wantCPU}, {"peak rss", c.PeakRSS, tt.wantRSS}} {
				if math.Abs(f.got-f.want) > 1e-9 {
					t.Errorf("%s ratio = %v, want %v", f.what, f.got, f.want)
				}
			}
			if len(c.Rounds) != tt.wantPerRoundOfLength {
				t.Errorf("per-round ratios %v, want %d", c.Rounds, tt.wantPerRoundOfLength)
			}
		})
	}
}

func ptrTo(r caseResult) *caseResult { return &r }

func TestPrintComparisonSkipsCasesWithoutBase(t *testing.T) {
	base := sinkResult(1000, 1, 2, 100e6)
	cases := []caseReport{
		{Workload: workload{"1KB", 8, "avro", "default"}, Sink: sinkResult(1000, 0.5, 1, 50e6), BaseSink: &base,
			VsBase: &comparison{Throughput: 2, CPUPerRecord: 0.5, PeakRSS: 0.5, Rounds: []float64{2, 2.1}}},
		{Workload: workload{"100B", 8, "avro", "default"}, Sink: base},
	}
	var b strings.Builder
	printComparison(&b, cases)
	out := b.String()
	if !strings.Contains(out, "| 1KB×8p×avro×default | 1000 | 2000 | 2.00 | 2000.00 | 1000.00 | 0.50 | 100 | 50 | 2.00 2.10 |") {
		t.Errorf("table row missing or wrong:\n%s", out)
	}
	if strings.Contains(out, "100B") {
		t.Errorf("a case without a base result is in the table:\n%s", out)
	}
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{"": "", "/tmp/x/bench-a26a589f75f7": "a26a589f75f7", "/opt/bench": "bench"} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}
