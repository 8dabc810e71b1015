// Command bench is hdfs-sink's end-to-end benchmark harness (make bench):
// it measures hdfs-sink against the real test services (Kafka, HDFS,
// registry) and against the same machine's raw limits measured in the same
// run — franz-go consuming the same topic, and the Go HDFS client writing
// the same bytes in files of the same size — and reports memory with many
// partitions, the time to resume after SIGKILL, and the time from assignment
// to first commit with a second member joining and leaving the group
// (assign.go); with -compaction, the compactor against the raw HDFS
// read+write of the same bytes, and the sink alone against the sink beside
// a compaction (compaction.go). Each measured case runs in a fresh child
// process (this binary with -case) so CPU and peak RSS are its own.
// docs/benchmarks.md holds the results and how to reproduce them.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// workload is one row of the matrix.
type workload struct {
	Size        string `json:"size"` // "1KB" or "100B"
	Partitions  int    `json:"partitions"`
	Format      string `json:"format"`
	Partitioner string `json:"partitioner"`
}

func (w workload) String() string {
	return fmt.Sprintf("%s×%dp×%s×%s", w.Size, w.Partitions, w.Format, w.Partitioner)
}

type options struct {
	out, cpuprofile, binary string
	trace, memprofile       string
	base                    string // a base build's bench binary: each round also runs its sink (bench-compare)
	only                    string
	full, noMemory, noRecov bool
	scale                   float64
	repeat                  int
	memParts, memRecords    int
	// The many-partitions case's shape (issue 25's 10,000 partitions):
	// topics it is spread over, format, partitioner, flush.size (0:
	// ten times the records per partition) and a second start measured.
	memTopics, memFlush       int
	memFormat, memPartitioner string
	memRestart                bool
	recovParts                []int
	recovMembership           []bool // static membership of each recovery run (false: dynamic)
	memoryMax                 int64
	memMemoryMax              int64
	transforms                bool
	// -compaction: the compaction cases (compaction.go).
	compaction, compNoSink bool
	compFiles, compRecords int
	compProfile            string
	// compPace is the fenced loop's pace (hdfs.sink.compaction.pace.ms);
	// compBeside the variants beside the sink; compBesideOnly skips the
	// rate rounds.
	compPace time.Duration
	// retryBackoff is the beside cases' sink retry.backoff.ms.
	retryBackoff   time.Duration
	compBeside     []string
	compBesideOnly bool
	// The assignment case (assign.go): partition counts, rotate.interval.ms
	// and the trickle's period.
	noAssign                    bool
	assignParts                 []int
	assignRotate, assignTrickle time.Duration
	assignProfile               string // CPU profile and trace of the first round: <this>.cpu, <this>.trace
	// assignConns and assignParallel override the HDFS client's NameNode
	// connections (D12) and the connector's partitions at once (D13) in
	// the assignment case; 0: the daemon's defaults.
	assignConns, assignParallel int
	// assignTimedPerPoll overrides the members' budget of timed rotations
	// per poll (sink.Config.TimedRotationsPerPoll).
	assignTimedPerPoll int
	// -commit-limit (commitlimit.go): files per variant and round, bytes
	// per file, files committed at once, NameNode connections.
	commitLimit              bool
	commitFiles, commitConns int
	commitFileBytes          int64
	commitWriters            []int
}

func main() {
	caseJSON := flag.String("case", "", "internal: run one case in this process (JSON spec)")
	var o options
	flag.StringVar(&o.out, "out", "", "write the JSON result here (default tools/bench/results/<ts>.json)")
	flag.BoolVar(&o.full, "full", false, "run the full matrix (2 sizes × 3 partition counts × 2 formats × 2 partitioners)")
	flag.Float64Var(&o.scale, "scale", 1, "multiply record counts (0.1 for a quick smoke run)")
	flag.IntVar(&o.repeat, "repeat", 3, "rounds of each workload (sink, consume, HDFS write in turn); the table shows medians")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "CPU profile of the first sink case (1KB×8p×avro×default) to this file")
	flag.StringVar(&o.trace, "trace", "", "execution trace (go tool trace) of the first sink case to this file")
	flag.StringVar(&o.memprofile, "memprofile", "", "heap profile (in use, at the largest heap) of the first sink case (the memory case when -only matches nothing) to this file")
	flag.StringVar(&o.only, "only", "", "run only these workloads, any of the full matrix, in this order (comma list of names as in the table, e.g. 1KB×64p×avro×default or 1KBx64pxavroxdefault; none: no sink workload)")
	flag.BoolVar(&o.noMemory, "no-memory", false, "skip the many-partitions memory case")
	flag.BoolVar(&o.noRecov, "no-recovery", false, "skip the SIGKILL recovery cases")
	flag.IntVar(&o.memParts, "mem-partitions", 1000, "partitions of the memory case")
	flag.IntVar(&o.memRecords, "mem-records", 200, "records per partition in the memory case")
	flag.IntVar(&o.memTopics, "mem-topics", 1, "topics the memory case's partitions are spread over (-mem-partitions 10000 -mem-topics 100: 100 topics × 100 partitions)")
	flag.StringVar(&o.memFormat, "mem-format", "parquet", "format of the memory case (avro or parquet)")
	flag.StringVar(&o.memPartitioner, "mem-partitioner", "hourly", "partitioner of the memory case (default or hourly)")
	flag.IntVar(&o.memFlush, "mem-flush", 0, "flush.size of the memory case (0: 10 × -mem-records)")
	flag.BoolVar(&o.memRestart, "mem-restart", false, "the memory case then restarts the sink on what it wrote and measures the time to every partition recovered and the store calls made")
	flag.Int64Var(&o.memMemoryMax, "mem-memory-max", 0, "hdfs.sink.memory.max.bytes of the memory case (0: -memory-max)")
	flag.Int64Var(&o.memoryMax, "memory-max", 256<<20, "hdfs.sink.memory.max.bytes for every sink case")
	flag.StringVar(&o.base, "base", "", "bench binary built from a base commit: every round also runs its sink case, interleaved, and the table compares (make bench-compare)")
	flag.BoolVar(&o.transforms, "transforms", false, "each round also runs the sink with a chain of three transforms (issue 23: at most 15 % slower)")
	flag.BoolVar(&o.compaction, "compaction", false, "also run the compaction cases (issue 24): a directory of small files compacted against the raw HDFS read+write of the same bytes, and the sink alone and beside a compaction")
	flag.BoolVar(&o.compNoSink, "compaction-no-sink", false, "with -compaction: skip the sink alone and beside a compaction")
	flag.IntVar(&o.compFiles, "compaction-files", 1000, "files of the compacted directory")
	flag.IntVar(&o.compRecords, "compaction-records", 400, "1 KB records per file of the compacted directory")
	flag.StringVar(&o.compProfile, "compaction-cpuprofile", "", "CPU profile of the first round's compaction to this file (.avro, .parquet appended)")
	flag.DurationVar(&o.compPace, "compaction-pace", configs.DefaultCompactionPace(benchRetryBackoff),
		"the fenced variant's pace: after a compaction that fenced the sink's topic, the loop waits this long before the next, as the daemon's policy does (hdfs.sink.compaction.pace.ms; the default is the daemon's for -compaction-retry-backoff); 0: back to back")
	flag.DurationVar(&o.retryBackoff, "compaction-retry-backoff", benchRetryBackoff,
		"with -compaction: retry.backoff.ms of the sink beside a compaction, how long a fenced partition waits (the daemon's default is 5s)")
	beside := flag.String("compaction-beside", strings.Join(besideVariants, ","), "with -compaction: the compactions run beside the sink (comma list of "+strings.Join(besideVariants, ", ")+")")
	flag.BoolVar(&o.compBesideOnly, "compaction-beside-only", false, "with -compaction: skip the rate rounds, run only the sink alone and beside a compaction")
	recov := flag.String("recovery-partitions", "100,1000", "partition counts of the recovery cases")
	membership := flag.String("recovery-membership", "both", "group membership of the recovery cases: dynamic, static or both")
	flag.BoolVar(&o.noAssign, "no-assignment", false, "skip the assignment case (first commit after assignment; a second member joining and leaving)")
	flag.BoolVar(&o.commitLimit, "commit-limit", false, "also measure the machine's commit limit: files committed per second by the bare HDFS client, one per partition directory, with and without a WAL segment each (commitlimit.go)")
	flag.IntVar(&o.commitFiles, "commit-limit-files", 1000, "files of each commit-limit run (the assignment case's 1,000 partitions' first commits)")
	flag.Int64Var(&o.commitFileBytes, "commit-limit-bytes", 100<<10, "bytes per committed file of the commit limit")
	commitWriters := flag.String("commit-limit-writers", "8,32,128", "files committed at once by the commit limit (comma list; the sink's parallelism is 8)")
	flag.IntVar(&o.commitConns, "commit-limit-hdfs-connections", 0, "NameNode connections of the commit limit (0: the daemon's default)")
	assign := flag.String("assignment-partitions", "8,1000", "partition counts of the assignment case")
	flag.DurationVar(&o.assignRotate, "assignment-rotate", 10*time.Second, "rotate.interval.ms of the assignment case")
	flag.StringVar(&o.assignProfile, "assignment-profile", "", "CPU profile (<file>.cpu) and execution trace (<file>.trace) of the assignment case's first round (member A's process)")
	flag.IntVar(&o.assignConns, "assignment-hdfs-connections", 0, "NameNode connections of the assignment case's members (0: the daemon's 4)")
	flag.IntVar(&o.assignParallel, "assignment-parallelism", 0, "partitions processed at once by the assignment case's members (0: the daemon's 8)")
	flag.IntVar(&o.assignTimedPerPoll, "assignment-timed-per-poll", 0, "time-driven commits a poll of the assignment case's members may start (0: the sink's default, 4 × parallelism; negative: no bound)")
	flag.DurationVar(&o.assignTrickle, "assignment-trickle", 100*time.Millisecond, "the assignment case produces one record to every partition this often")
	flag.Parse()
	if !flagSet("compaction-pace") {
		o.compPace = configs.DefaultCompactionPace(o.retryBackoff)
	}
	o.compBeside = strings.Split(*beside, ",")
	for _, v := range o.compBeside {
		if !slices.Contains(besideVariants, v) {
			fmt.Fprintf(os.Stderr, "bench: -compaction-beside %q: want some of %s\n", v, strings.Join(besideVariants, ", "))
			os.Exit(2)
		}
	}
	if *caseJSON != "" {
		if err := runChild(*caseJSON); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	o.recovParts = counts(*recov)
	switch *membership {
	case "both":
		o.recovMembership = []bool{false, true}
	case "dynamic", "static":
		o.recovMembership = []bool{*membership == "static"}
	default:
		fmt.Fprintf(os.Stderr, "bench: -recovery-membership %q: want dynamic, static or both\n", *membership)
		os.Exit(2)
	}
	o.assignParts = counts(*assign)
	o.commitWriters = counts(*commitWriters)
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench: FAILED:", err)
		os.Exit(1)
	}
}

// counts parses a comma list of positive counts ("100,1000").
func counts(list string) []int {
	var out []int
	for _, s := range strings.Split(list, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// defaultMatrix is the representative subset that fits in ~10 minutes.
func defaultMatrix() []workload {
	return []workload{
		{"1KB", 8, "avro", "default"}, // first: the profiled case
		{"1KB", 1, "avro", "default"},
		{"1KB", 64, "avro", "default"},
		{"1KB", 8, "parquet", "default"},
		{"100B", 8, "avro", "default"},
		{"1KB", 8, "avro", "hourly"},
	}
}

// selectWorkloads is the matrix to run: the default workloads, every
// workload with full, or those only names, in its order and from the full
// matrix, so that -only reaches any workload without -full. x may stand for
// × so that names are easy to type. "none" names no workload (only the
// memory, recovery or assignment cases run); any other name that is not a
// workload is an error, not a silently shorter run.
func selectWorkloads(full bool, only string) ([]workload, error) {
	if only == "" {
		if full {
			return fullMatrix(), nil
		}
		return defaultMatrix(), nil
	}
	byName := map[string]workload{}
	for _, w := range fullMatrix() {
		byName[w.String()] = w
	}
	var out []workload
	for _, name := range strings.Split(strings.ReplaceAll(only, "x", "×"), ",") {
		name = strings.TrimSpace(name)
		w, ok := byName[name]
		switch {
		case ok:
			out = append(out, w)
		case name != "none":
			return nil, fmt.Errorf("-only: no workload %q (names as in the table, e.g. 1KBx64pxparquetxdefault, or none)", name)
		}
	}
	return out, nil
}

func fullMatrix() []workload {
	var m []workload
	for _, size := range []string{"1KB", "100B"} {
		for _, p := range []int{1, 8, 64} {
			for _, f := range []string{"avro", "parquet"} {
				for _, part := range []string{"default", "hourly"} {
					m = append(m, workload{size, p, f, part})
				}
			}
		}
	}
	return m
}

// report is the machine-readable result.
type report struct {
	Started    time.Time         `json:"started"`
	Machine    machine           `json:"machine"`
	Command    string            `json:"command"`
	Base       string            `json:"base,omitempty"` // -base: the base build compared with
	Cases      []caseReport      `json:"cases"`
	Memory     *caseReport       `json:"memory,omitempty"`
	Recovery   []recoveryCase    `json:"recovery,omitempty"`
	Compaction *compactionReport `json:"compaction,omitempty"`
	// Assignment is the assignment case (assign.go).
	Assignment []assignCase `json:"assignment,omitempty"`
	// CommitLimit is the machine's commit limit (commitlimit.go).
	CommitLimit []commitLimitRow `json:"commit_limit,omitempty"`
	Errors      []string         `json:"errors,omitempty"`
}

type caseReport struct {
	Workload  workload   `json:"workload"`
	FlushSize int64      `json:"flush_size"`
	MemoryMax int64      `json:"memory_max_bytes"`
	Sink      caseResult `json:"sink"`
	Consume   caseResult `json:"baseline_consume"`
	HDFSWrite caseResult `json:"baseline_hdfs_write"`
	// Ratio is sink records/s over min(consume, hdfs write) records/s,
	// each the median of the rounds; Sink, Consume and HDFSWrite are the
	// median rounds by records/s.
	Ratio float64 `json:"ratio_to_raw_limit"`
	// Rounds holds every round: the spread says how noisy the machine was.
	Rounds []round `json:"rounds"`
	// BaseSink is the base build's sink (median round) when -base is set;
	// VsBase compares this build with it.
	BaseSink *caseResult `json:"base_sink,omitempty"`
	VsBase   *comparison `json:"vs_base,omitempty"`
	// TransformsCost is 1 - (median sink records/s with the chain of three)
	// / (median without), in %, when -transforms ran.
	TransformsCost float64 `json:"transforms_cost_pct,omitempty"`
}

// round is one pass of a workload: the sink and both baselines.
type round struct {
	Sink      caseResult  `json:"sink"`
	Consume   caseResult  `json:"baseline_consume"`
	HDFSWrite caseResult  `json:"baseline_hdfs_write"`
	Ratio     float64     `json:"ratio_to_raw_limit"`
	BaseSink  *caseResult `json:"base_sink,omitempty"`
	// SinkTransforms is the sink with a chain of three transforms (-transforms).
	SinkTransforms *caseResult `json:"sink_transforms,omitempty"`
}

func run(o options) error {
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	o.binary = bin
	env, err := newEnv()
	if err != nil {
		return err
	}
	defer env.cleanup()
	rep := report{Started: time.Now().UTC(), Machine: describeMachine(), Command: strings.Join(os.Args, " "), Base: baseName(o.base)}
	matrix, err := selectWorkloads(o.full, o.only)
	if err != nil {
		return err
	}
	for i, w := range matrix {
		var prof profiles
		if i == 0 {
			prof = profiles{cpu: o.cpuprofile, trace: o.trace, heap: o.memprofile}
		}
		cr, err := env.runWorkload(o, w, prof)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", w, err))
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", w, err)
			continue
		}
		rep.Cases = append(rep.Cases, cr)
		printRow(cr)
	}
	if o.compaction {
		cr, err := env.runCompaction(o)
		rep.Compaction = &cr
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("compaction: %v", err))
		}
	}
	if !o.noMemory {
		var prof profiles
		if len(matrix) == 0 { // profile the memory case when it is the only sink case
			prof = profiles{cpu: o.cpuprofile, trace: o.trace, heap: o.memprofile}
		}
		mr, err := env.runMemory(o, prof)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("memory: %v", err))
		} else {
			rep.Memory = &mr
		}
	}
	if !o.noRecov {
		rep.Recovery, err = env.runRecovery(o)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("recovery: %v", err))
		}
	}
	if !o.noAssign {
		rep.Assignment, err = env.runAssignment(o)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("assignment: %v", err))
		}
	}
	if o.commitLimit {
		rep.CommitLimit, err = env.runCommitLimit(o)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("commit limit: %v", err))
		}
	}
	printReport(os.Stdout, rep)
	return writeJSON(o.out, rep)
}

func writeJSON(out string, rep report) error {
	if out == "" {
		out = filepath.Join("tools", "bench", "results", rep.Started.Format("20060102T150405Z")+".json")
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println("result:", out)
	return os.WriteFile(out, b, 0o644)
}

// child runs one case in a fresh process of this binary.
func child(bin string, spec caseSpec) (caseResult, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return caseResult{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 11*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-case", string(b))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return caseResult{}, fmt.Errorf("%s case on %s: %w", spec.Kind, spec.Topic, err)
	}
	var res caseResult
	if err := json.Unmarshal(out, &res); err != nil {
		return res, fmt.Errorf("%s case on %s: bad result %q: %w", spec.Kind, spec.Topic, out, err)
	}
	return res, nil
}

// flagSet reports whether the command line set flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
