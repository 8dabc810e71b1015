package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// The machine's CPU beside the process's own. On a machine that also runs
// Kafka and HDFS, the sink's CPU per record says what the sink costs, not
// whether the machine had any left: with 64 partitions or 100-byte records
// the services' share decides that (docs/benchmarks.md, "The whole
// machine's CPU"). /proc/stat counts every process on the machine, the
// services of testenv.sh included, whatever namespace they run in.

// userHZ is the unit of /proc/stat's times: USER_HZ, which Linux fixes at
// 100 for user space on every architecture Go builds bench for.
const userHZ = 100

// machineBusy is the CPU time every core of the machine has spent not
// idle since boot (user, nice, system, irq, softirq, steal), or 0 when
// /proc/stat cannot be read (not Linux).
func machineBusy() time.Duration {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer f.Close()
	ticks, err := busyTicks(f)
	if err != nil {
		return 0
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// busyTicks parses the aggregate "cpu" line of /proc/stat. Guest time is
// already counted in user and nice, iowait is idle.
func busyTicks(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || fields[0] != "cpu" {
			continue
		}
		var busy int64
		for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
			n, err := strconv.ParseInt(fields[i], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: field %d of the cpu line: %w", i, err)
			}
			busy += n
		}
		return busy, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/stat: no aggregate cpu line")
}

// machineShare is the fraction of the machine's cores that were busy
// during r's phase (0 when not measured).
func machineShare(r caseResult, nproc int) float64 { return coreShare(r.MachineCPUSeconds, r, nproc) }

// coreShare is cpuSeconds as a fraction of all nproc cores over r's phase.
func coreShare(cpuSeconds float64, r caseResult, nproc int) float64 {
	if r.Seconds <= 0 || nproc <= 0 {
		return 0
	}
	return cpuSeconds / (float64(nproc) * r.Seconds)
}

// printMachineCPU prints, per workload (median round), how busy the whole
// machine was while the sink and each raw baseline ran, and what the sink
// took of it. A machine near 100 % busy with the sink taking a fraction is
// bound by the services beside it, not by the sink.
func printMachineCPU(w io.Writer, cases []caseReport, nproc int) {
	if len(cases) == 0 || cases[0].Sink.MachineCPUSeconds == 0 {
		return
	}
	fmt.Fprintf(w, "\nthe whole machine's CPU (%d cores; every process, the services included; median round):\n\n", nproc)
	fmt.Fprintln(w, "| workload | machine busy, sink | sink's own share | services and the rest | machine CPU s / M rec | machine busy, raw consume | machine busy, raw HDFS write |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, c := range cases {
		s := c.Sink
		busy, own := machineShare(s, nproc), coreShare(s.CPUSeconds, s, nproc)
		perM := cpuPerM(caseResult{Records: s.Records, CPUSeconds: s.MachineCPUSeconds})
		fmt.Fprintf(w, "| %s | %.0f %% | %.0f %% | %.0f %% | %.2f | %.0f %% | %.0f %% |\n", c.Workload, 100*busy, 100*own,
			100*(busy-own), perM, 100*machineShare(c.Consume, nproc), 100*machineShare(c.HDFSWrite, nproc))
	}
}
