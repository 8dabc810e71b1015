package main

import (
	"strings"
	"testing"
	"time"
)

func TestBusyTicks(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       int64
		err        string
	}{
		{name: "user nice system irq softirq steal; idle, iowait and guest left out",
			stat: "cpu  100 2 30 5000 70 4 5 6 50 0\ncpu0 50 1 15 2500 35 2 2 3 25 0\n", want: 100 + 2 + 30 + 4 + 5 + 6},
		{name: "the aggregate line found after others", stat: "intr 1 2 3\ncpu  1 1 1 1 1 1 1 1 0 0\n", want: 6},
		{name: "no aggregate line", stat: "cpu0 1 1 1 1 1 1 1 1\n", err: "no aggregate cpu line"},
		{name: "a field not a number", stat: "cpu  1 x 1 1 1 1 1 1 0 0\n", err: "field 2 of the cpu line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := busyTicks(strings.NewReader(tc.stat))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("busyTicks = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestMachineBusyAdvancesWithWork(t *testing.T) {
	before := machineBusy()
	if before == 0 {
		t.Skip("no /proc/stat on this system")
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ { // spin: this process's CPU is the machine's too
		_ = n * n
	}
	if after := machineBusy(); after-before < 100*time.Millisecond {
		t.Fatalf("machine busy time rose %v over 300 ms of spinning, want ≥ 100 ms", after-before)
	}
}

func TestMachineShare(t *testing.T) {
	r := caseResult{Seconds: 10, CPUSeconds: 4, MachineCPUSeconds: 15}
	if got := machineShare(r, 2); got != 0.75 {
		t.Fatalf("machineShare = %v, want 0.75", got)
	}
	if got := machineShare(caseResult{}, 2); got != 0 {
		t.Fatalf("machineShare of an empty phase = %v, want 0", got)
	}
}
