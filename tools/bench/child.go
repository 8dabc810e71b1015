package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// caseSpec is what the parent asks one child process to run. Each case runs
// in a fresh process so that its peak RSS (VmHWM) and CPU are its own.
type caseSpec struct {
	Kind  string // "sink", "consume", "hdfswrite", "compact", "compactraw", "compactloop", "assign", "member" (assign.go) or "commitlimit" (commitlimit.go)
	Topic string
	// Topics, when set, are all the topics the sink case reads (Topic is
	// the first): the many-partitions case spread over topics (-mem-topics).
	Topics []string
	// Restart: the sink case then stops the connector and starts a new one
	// on the same directory and group, and measures its start-up: the time
	// to every partition recovered and the store calls made by then.
	Restart     bool
	Partitions  int
	Records     int64 // produced (the whole topic)
	Bytes       int64 // sum of record value sizes
	Format      string
	Partitioner string // "default" or "hourly"
	Dir         string // HDFS base dir for this case
	FlushSize   int64
	MemoryMax   int64 // hdfs.sink.memory.max.bytes (the sink gets half for buffers)
	FileBytes   int64 // hdfswrite: bytes per file
	Writers     int   // hdfswrite: files written at once
	Rotate      time.Duration
	CPUProfile  string
	Trace       string
	HeapProfile string
	TailProbe   bool // sink: after the backlog, time one more record per partition
	Round       int  // which round of a repeated workload (its own consumer group)
	Size        string
	Transforms  bool // sink: a chain of three transforms (cases.go, benchTransforms)
	// RetryBackoff: sink: retry.backoff.ms (0: benchRetryBackoff), how long
	// a partition fenced by a compaction waits before it recovers.
	RetryBackoff time.Duration
	// compactloop: after each compaction, fence every partition of this
	// topic that has a WAL under FenceDir (the sink case's Dir) as a
	// compaction of the sink's own topic does (compaction.go).
	FenceTopic string
	FenceDir   string
	// FencePace: after a compaction that fenced, the loop waits this long
	// before the next (hdfs.sink.compaction.pace.ms); 0: back to back.
	FencePace time.Duration
	// Trickle is how often the assignment case produces one record to
	// every partition.
	Trickle time.Duration
	// HDFSConns and Parallelism override the defaults (0: keep them):
	// the assignment case's what-if runs.
	HDFSConns, Parallelism int
	// TimedPerPoll overrides sink.Config.TimedRotationsPerPoll (0: the
	// default; negative: no bound).
	TimedPerPoll int
}

// caseResult is what a child reports on stdout as JSON.
type caseResult struct {
	Records    int64   `json:"records"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// MachineCPUSeconds is the whole machine's busy CPU time over the same
	// phase: every process, Kafka and HDFS included (machinecpu.go).
	MachineCPUSeconds float64 `json:"machine_cpu_seconds,omitempty"`
	PeakRSSBytes      int64   `json:"peak_rss_bytes"`
	Files             int64   `json:"files,omitempty"`
	StartupSec        float64 `json:"startup_seconds,omitempty"` // sink: start → partitions assigned
	TailSeconds       float64 `json:"tail_seconds,omitempty"`    // sink: last produce → last commit
	PeakBuffered      int64   `json:"peak_buffered_bytes,omitempty"`
	MemRotations      int64   `json:"memory_rotations,omitempty"`
	PeakOpenFiles     int64   `json:"peak_open_files,omitempty"`
	BufferCeiling     int64   `json:"buffer_ceiling_bytes,omitempty"`
	// The compaction cases: the files read, the bytes read from the
	// store, its calls by operation, and the loop's passes.
	Inputs      int64            `json:"inputs,omitempty"`
	BytesRead   int64            `json:"bytes_read,omitempty"`
	Calls       map[string]int64 `json:"store_calls,omitempty"`
	Passes      int64            `json:"passes,omitempty"`
	Fences      int64            `json:"fences,omitempty"`
	FenceErrors int64            `json:"fence_errors,omitempty"`
	// FirstCommitSec is the sink case's partitions assigned → first commit:
	// the start-up recovery of every partition (fetching starts after it).
	FirstCommitSec float64 `json:"first_commit_seconds,omitempty"`
	// SteadySec is first commit → last commit, SteadyRecords the records
	// committed in it (the steady rate's window).
	SteadySec     float64 `json:"steady_seconds,omitempty"`
	SteadyRecords int64   `json:"steady_records,omitempty"`
	// TimedTailSec is the end of the steady window spent waiting for the
	// rotation timers: from the last commit for another reason (flush.size,
	// the memory ceiling) to the last commit. A finite backlog ends in files
	// that only the timer commits; a stream would not wait for them.
	TimedTailSec float64 `json:"timed_tail_seconds,omitempty"`
	// StartupCalls are the store calls made from start to the first commit
	// (the start-up recovery of every partition; each is one NameNode
	// RPC or more); Calls (above) all the sink case's calls.
	StartupCalls map[string]int64 `json:"startup_store_calls,omitempty"`
	// Restart is the second start of the sink case (caseSpec.Restart).
	Restart *restartResult `json:"restart,omitempty"`
	// Assign is the assignment case's round (assign.go).
	Assign *assignResult `json:"assign,omitempty"`
}

// runChild executes spec and prints its result; it is the -case mode.
func runChild(specJSON string) error {
	var spec caseSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("bench -case: bad spec: %w", err)
	}
	stopCPU, err := record(spec.CPUProfile, "cpuprofile", pprof.StartCPUProfile, pprof.StopCPUProfile)
	if err != nil {
		return err
	}
	defer stopCPU()
	stopTrace, err := record(spec.Trace, "trace", trace.Start, trace.Stop)
	if err != nil {
		return err
	}
	defer stopTrace()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if spec.HeapProfile != "" {
		go heapAtPeak(ctx, spec.HeapProfile)
	}
	var res caseResult
	switch spec.Kind {
	case "sink":
		res, err = runSinkCase(ctx, spec)
	case "consume":
		res, err = runConsumeCase(ctx, spec)
	case "hdfswrite":
		res, err = runHDFSWriteCase(ctx, spec)
	case "compact":
		res, err = runCompactCase(ctx, spec)
	case "compactraw":
		res, err = runCompactRawCase(ctx, spec)
	case "compactloop":
		res, err = runCompactLoop(ctx, spec)
	case "assign":
		res, err = runAssignCase(ctx, spec)
	case "member":
		res, err = runMemberCase(ctx, spec)
	case "commitlimit":
		res, err = runCommitLimitCase(ctx, spec)
	default:
		err = fmt.Errorf("bench -case: unknown kind %q", spec.Kind)
	}
	if err != nil {
		return err
	}
	res.PeakRSSBytes = peakRSS()
	return json.NewEncoder(os.Stdout).Encode(res)
}

// cpuTime is the process's user+system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is VmHWM from /proc/self/status, in bytes (0 when unreadable).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// meter measures wall and CPU time of one phase.
type meter struct {
	wall    time.Time
	cpu     time.Duration
	machine time.Duration
}

func startMeter() meter { return meter{time.Now(), cpuTime(), machineBusy()} }

func (m meter) stop(r *caseResult) {
	r.Seconds = time.Since(m.wall).Seconds()
	r.CPUSeconds = (cpuTime() - m.cpu).Seconds()
	if m.machine > 0 {
		r.MachineCPUSeconds = (machineBusy() - m.machine).Seconds()
	}
}

// record starts a CPU profile or execution trace into the file name (none
// when name is empty); the returned func stops it and closes the file.
func record(name, what string, start func(io.Writer) error, stop func()) (func(), error) {
	if name == "" {
		return func() {}, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("bench -case: %s: %w", what, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench -case: %s: %w", what, err)
	}
	return func() { stop(); f.Close() }, nil
}

// heapAtPeak writes the in-use heap profile to name each time the live heap
// reaches a new high, so the file shows what the largest heap held.
func heapAtPeak(ctx context.Context, name string) {
	var peak uint64
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse <= peak {
			continue
		}
		peak = ms.HeapInuse
		if f, err := os.Create(name); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
}
