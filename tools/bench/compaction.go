package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/compact"
	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// The compaction cases (issue 24, -compaction): one directory of many
// small committed files of one Kafka partition, in Avro and in Parquet,
// compacted by the real compactor (compact.Compactor.Run, steps C2 to C7;
// C8's removal waits for the grace period and is not timed) against the
// raw rate of reading the same bytes and writing them back as one file
// through storage/hdfs, in the same run; then the sink's throughput alone
// and with a compaction running beside it, in another process, over and
// over for the sink case's whole length.

// compactionTopic is the topic name in the compacted files' names; it
// needs no Kafka topic (the compaction reads HDFS only).
const compactionTopic = "cbench"

// compactionEncoded is the directory compacted, as the Default
// partitioner names it.
const compactionEncoded = "partition=0"

// compactionCase is one format's directory, compacted and copied raw.
type compactionCase struct {
	Format  string `json:"format"`
	Files   int    `json:"files"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"` // the inputs' size in HDFS
	// Raw and Compaction are the median rounds by bytes/s; Ratio is the
	// median of the rounds' compaction/raw ratios (each round's pair ran
	// back to back).
	Raw        caseResult         `json:"raw_read_write"`
	Compaction caseResult         `json:"compaction"`
	Ratio      float64            `json:"ratio_to_raw"`
	Rounds     []compactionRounds `json:"rounds"`
	// Failures are the runs that failed and were run again (a loaded
	// machine's NameNode can leave a Close "replicating" past the
	// client's retries: the daemon's pass then fails and is retried).
	Failures []string `json:"failures,omitempty"`
}

// retried runs a case up to three times, keeping each failure.
func retried(cc *compactionCase, run func() (caseResult, error)) (caseResult, error) {
	var res caseResult
	var err error
	for range 3 {
		if res, err = run(); err == nil {
			return res, nil
		}
		cc.Failures = append(cc.Failures, err.Error())
		fmt.Fprintln(os.Stderr, "bench: compaction run failed, running it again:", err)
	}
	return res, err
}

type compactionRounds struct {
	Raw        caseResult `json:"raw_read_write"`
	Compaction caseResult `json:"compaction"`
	Ratio      float64    `json:"ratio_to_raw"`
}

// besideCase is the sink's throughput alone and with each variant's
// compaction running beside it: per round and variant, a pair of sink
// runs back to back (alone, with; the order alternating by round), so a
// neighbour's load that comes and goes moves both runs of a pair.
type besideCase struct {
	Workload workload       `json:"workload"`
	Rounds   []besideRounds `json:"rounds"`
	// Drop is, by variant, 1 - (sink rec/s with the compaction beside) /
	// (sink rec/s alone, same pair), in %, the median of the rounds'.
	Drop map[string]float64 `json:"drop_pct"`
	// CPUChange is, by variant, the sink's CPU seconds per record with the
	// compaction beside over alone, - 1, in %, the median of the rounds':
	// the sink's own work, which the neighbours' load does not move.
	CPUChange map[string]float64 `json:"sink_cpu_change_pct"`
	// Variants are the compactions run beside the sink; PaceSeconds the
	// fenced variant's pace (0: back to back).
	Variants    []string `json:"variants"`
	PaceSeconds float64  `json:"fence_pace_seconds"`
	// FenceCost is, per round of the fenced variant, the seconds the sink
	// run took longer with the compaction beside, per compaction pass;
	// PaceShare is that over the pace, in %: the share of the sink's
	// time the fences take once a run spans many paces (a run shorter
	// than the pace still holds one compaction).
	FenceCost []float64 `json:"fence_cost_seconds,omitempty"`
	PaceShare []float64 `json:"pace_share_pct,omitempty"`
}

// besideRounds are, by variant, one round's pair and the compaction
// loop's result beside the second run.
type besideRounds struct {
	Alone map[string]caseResult `json:"sink_alone"`
	With  map[string]caseResult `json:"sink_with_compaction"`
	Loop  map[string]caseResult `json:"compaction_loop"`
}

// compactionReport is the JSON of the compaction cases.
type compactionReport struct {
	Cases  []compactionCase `json:"cases"`
	Beside *besideCase      `json:"sink_beside,omitempty"`
}

var compactionFormats = []string{"avro", "parquet"}

// besideVariants are the compactions run beside the sink: each format's
// directory of another topic, and the Avro one fencing the sink's own
// partitions after each pass, as a compaction of the sink's own topic
// does (its C4 claims every partition with a WAL; the sink's partition
// then re-reads its open files and goes on, docs/design.md §12).
var besideVariants = []string{"avro", "parquet", fencedVariant}

const fencedVariant = "avro+fence"

// runCompaction prepares a directory per format, then runs o.repeat
// rounds of the raw copy and the compaction (alternating which goes
// first), then the sink alone and beside each format's compaction.
func (e *env) runCompaction(o options) (compactionReport, error) {
	var rep compactionReport
	dirs := map[string]string{}
	for _, f := range compactionFormats {
		dir := e.dir("compact-" + f)
		fmt.Fprintf(os.Stderr, "bench: compaction %s: writing %d files of %d records\n", f, o.compFiles, o.compRecords)
		bytes, err := prepareSmallFiles(dir, f, o.compFiles, o.compRecords)
		if err != nil {
			return rep, fmt.Errorf("prepare %s files: %w", f, err)
		}
		dirs[f] = dir
		if o.compBesideOnly {
			continue
		}
		cc, err := e.compactionRounds(o, f, dir, bytes)
		if err != nil {
			return rep, err
		}
		rep.Cases = append(rep.Cases, cc)
		fmt.Fprintf(os.Stderr, "bench: compaction %s: %.1f MB/s against raw %.1f MB/s (ratio %.2f), peak RSS %.0f MB\n",
			f, byteRate(cc.Compaction)/1e6, byteRate(cc.Raw)/1e6, cc.Ratio, mb(cc.Compaction.PeakRSSBytes))
	}
	if o.compNoSink {
		return rep, nil
	}
	return e.besideOnly(o, dirs, rep)
}

// besideOnly runs the sink alone and beside each compaction variant.
func (e *env) besideOnly(o options, dirs map[string]string, rep compactionReport) (compactionReport, error) {
	b, err := e.sinkBeside(o, dirs)
	if err != nil {
		return rep, err
	}
	rep.Beside = &b
	return rep, nil
}

func (e *env) compactionRounds(o options, f, dir string, bytes int64) (compactionCase, error) {
	cc := compactionCase{Format: f, Files: o.compFiles, Records: int64(o.compFiles) * int64(o.compRecords), Bytes: bytes}
	spec := caseSpec{Topic: compactionTopic, Dir: dir, Format: f, Records: cc.Records, Bytes: bytes, MemoryMax: o.memoryMax}
	for i := range max(o.repeat, 1) {
		raw, comp := spec, spec
		raw.Kind, comp.Kind = "compactraw", "compact"
		if i == 0 && o.compProfile != "" {
			comp.CPUProfile = o.compProfile + "." + f
		}
		var r compactionRounds
		order := []struct {
			spec caseSpec
			into *caseResult
		}{{raw, &r.Raw}, {comp, &r.Compaction}}
		if i%2 == 1 { // the second input read may find the DataNode's page cache warm: alternate
			order[0], order[1] = order[1], order[0]
		}
		for _, step := range order {
			res, err := retried(&cc, func() (caseResult, error) {
				if err := resetCompaction(dir); err != nil {
					return caseResult{}, err
				}
				fmt.Fprintf(os.Stderr, "bench: compaction %s round %d: %s\n", f, i+1, step.spec.Kind)
				return child(o.binary, step.spec)
			})
			if err != nil {
				return cc, err
			}
			*step.into = res
		}
		r.Ratio = byteRate(r.Compaction) / byteRate(r.Raw)
		cc.Rounds = append(cc.Rounds, r)
	}
	if err := resetCompaction(dir); err != nil {
		return cc, err
	}
	cc.Raw = medianBy(cc.Rounds, func(r compactionRounds) caseResult { return r.Raw }, byteRate)
	cc.Compaction = medianBy(cc.Rounds, func(r compactionRounds) caseResult { return r.Compaction }, byteRate)
	ratios := make([]float64, len(cc.Rounds))
	for i, r := range cc.Rounds {
		ratios[i] = r.Ratio
	}
	cc.Ratio = medianFloat(ratios)
	return cc, nil
}

// sinkBeside runs the 1 KB × 8 partitions Avro workload's sink alone and
// with each format's compaction looping beside it, in turn, o.repeat
// rounds, each run in its own group and directory on the same backlog.
func (e *env) sinkBeside(o options, dirs map[string]string) (besideCase, error) {
	w := workload{"1KB", 8, "avro", "default"}
	n := records(w, o.scale)
	fmt.Fprintf(os.Stderr, "bench: compaction beside the sink: producing %d records\n", n)
	topic, bytes, err := e.topic(w.Size, w.Partitions, n)
	if err != nil {
		return besideCase{}, err
	}
	defer e.dropTopic(topic)
	bc := besideCase{Workload: w, Drop: map[string]float64{}, CPUChange: map[string]float64{}, Variants: o.compBeside,
		PaceSeconds: o.compPace.Seconds()}
	base := caseSpec{Kind: "sink", Topic: topic, Partitions: w.Partitions, Records: int64(n), Bytes: bytes, Format: w.Format,
		Partitioner: w.Partitioner, FlushSize: max(1000, int64(n/w.Partitions)/5), MemoryMax: o.memoryMax, Rotate: 3 * time.Second, Size: w.Size,
		RetryBackoff: o.retryBackoff}
	group := 3000 // consumer groups of their own, apart from the matrix's
	for i := range max(o.repeat, 1) {
		r := besideRounds{Alone: map[string]caseResult{}, With: map[string]caseResult{}, Loop: map[string]caseResult{}}
		for _, v := range o.compBeside {
			for _, with := range pairOrder(i) {
				spec := base
				group++
				spec.Round, spec.Dir = group, e.dir(fmt.Sprintf("%s/beside-r%d-%s-%v", topic, i, v, with))
				if !with {
					fmt.Fprintf(os.Stderr, "bench: sink beside round %d, %s: sink alone\n", i+1, v)
					res, err := child(o.binary, spec)
					if err != nil {
						return bc, err
					}
					r.Alone[v] = res
					continue
				}
				fmt.Fprintf(os.Stderr, "bench: sink beside round %d, %s: sink with the compaction beside\n", i+1, v)
				sinkRes, loopRes, err := e.sinkWithLoop(o, spec, v, dirs)
				if err != nil {
					return bc, err
				}
				r.With[v], r.Loop[v] = sinkRes, loopRes
			}
		}
		bc.Rounds = append(bc.Rounds, r)
	}
	for _, v := range o.compBeside {
		drops, cpu := make([]float64, len(bc.Rounds)), make([]float64, len(bc.Rounds))
		for i, r := range bc.Rounds {
			drops[i] = 100 * (1 - rate(r.With[v])/rate(r.Alone[v]))
			cpu[i] = 100 * (cpuPerM(r.With[v])/cpuPerM(r.Alone[v]) - 1)
		}
		bc.Drop[v], bc.CPUChange[v] = medianFloat(drops), medianFloat(cpu)
		if v == fencedVariant {
			bc.fenceCosts(o.compPace)
		}
		fmt.Fprintf(os.Stderr, "bench: sink beside %s compaction: throughput drop %.1f %% (rounds %s), sink CPU per record %+.1f %% (rounds %s)\n",
			v, bc.Drop[v], floats(drops), bc.CPUChange[v], floats(cpu))
	}
	return bc, resetAll(dirs)
}

// fenceCosts fills FenceCost and, with a pace, PaceShare.
func (bc *besideCase) fenceCosts(pace time.Duration) {
	for _, r := range bc.Rounds {
		cost := (r.With[fencedVariant].Seconds - r.Alone[fencedVariant].Seconds) / float64(max(r.Loop[fencedVariant].Passes, 1))
		bc.FenceCost = append(bc.FenceCost, cost)
		if pace > 0 {
			bc.PaceShare = append(bc.PaceShare, 100*cost/pace.Seconds())
		}
	}
}

// pairOrder is the order of a pair's runs in round i (false: alone).
func pairOrder(i int) []bool {
	if i%2 == 1 {
		return []bool{true, false}
	}
	return []bool{false, true}
}

// sinkWithLoop starts the compaction loop of dir, runs the sink case, and
// stops the loop (closing its stdin) once the sink is done.
func (e *env) sinkWithLoop(o options, sinkSpec caseSpec, variant string, dirs map[string]string) (caseResult, caseResult, error) {
	f, fenced := strings.CutSuffix(variant, "+fence")
	dir := dirs[f]
	if err := resetCompaction(dir); err != nil {
		return caseResult{}, caseResult{}, err
	}
	loop := caseSpec{Kind: "compactloop", Topic: compactionTopic, Dir: dir, Format: f, MemoryMax: o.memoryMax}
	if fenced {
		loop.FenceTopic, loop.FenceDir, loop.FencePace = sinkSpec.Topic, sinkSpec.Dir, o.compPace
	}
	b, err := json.Marshal(loop)
	if err != nil {
		return caseResult{}, caseResult{}, err
	}
	cmd := exec.Command(o.binary, "-case", string(b))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return caseResult{}, caseResult{}, err
	}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return caseResult{}, caseResult{}, fmt.Errorf("start the compaction loop: %w", err)
	}
	sinkRes, sinkErr := child(o.binary, sinkSpec)
	_ = stdin.Close() // the loop's signal to stop
	waitErr := cmd.Wait()
	var loopRes caseResult
	if waitErr == nil {
		waitErr = json.Unmarshal([]byte(out.String()), &loopRes)
	}
	if err := errors.Join(sinkErr, waitErr); err != nil {
		return sinkRes, loopRes, fmt.Errorf("sink with %s compaction beside: %w", f, err)
	}
	return sinkRes, loopRes, nil
}

// prepareSmallFiles writes `files` committed files of `records` records
// each (partition 0, consecutive offsets) into the directory the cases
// compact, four at a time, and returns their total size.
func prepareSmallFiles(dir, f string, files, records int) (int64, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser})
	if err != nil {
		return 0, err
	}
	defer store.Close()
	fm, err := benchFormat(f)
	if err != nil {
		return 0, err
	}
	pool, text, err := datumPool("1KB")
	if err != nil {
		return 0, err
	}
	s, err := schema.New(1, text)
	if err != nil {
		return 0, err
	}
	lay := compactionLayout(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	jobs := make(chan int)
	var mu sync.Mutex
	var total int64
	var errs []error
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				start := int64(i) * int64(records)
				name := lay.FinalPath(compactionEncoded, 0, start, start+int64(records)-1, 10, fm.Extension())
				n, err := writeSmallFile(ctx, store, fm, s, pool, name, start, records)
				mu.Lock()
				total += n
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range files {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return total, errors.Join(errs...)
}

func writeSmallFile(ctx context.Context, store storage.FS, fm format.Format, s *schema.Schema, pool [][]byte, name string, start int64, records int) (int64, error) {
	out, err := store.Create(ctx, name)
	if err != nil {
		return 0, err
	}
	rw, err := fm.NewWriter(out, s)
	if err != nil {
		_ = out.Close()
		return 0, err
	}
	for off := start; off < start+int64(records); off++ {
		if err := rw.WriteDatum(pool[off%int64(len(pool))]); err != nil {
			_ = out.Close()
			return 0, fmt.Errorf("write %s: %w", name, err)
		}
	}
	if err := rw.Close(); err != nil {
		_ = out.Close()
		return 0, fmt.Errorf("write %s: %w", name, err)
	}
	if err := out.Close(); err != nil {
		return 0, fmt.Errorf("close %s: %w", name, err)
	}
	fi, err := store.Stat(ctx, name)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// compactionLayout is the bench topic's paths under dir.
func compactionLayout(dir string) layout.Topic {
	return layout.Topic{TopicsDir: dir + "/topics", LogsDir: dir + "/logs", Name: compactionTopic}
}

// resetCompaction undoes a compaction of dir's directory that has not
// removed its inputs (the grace period keeps them): without its
// generation the directory is uncompacted again. The raw copy's output
// goes too.
func resetCompaction(dir string) error {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser})
	if err != nil {
		return err
	}
	defer store.Close()
	return resetWith(context.Background(), store, dir)
}

func resetWith(ctx context.Context, store storage.FS, dir string) error {
	lay := compactionLayout(dir)
	for _, p := range []string{lay.CompactedDir(compactionEncoded), lay.CompactionStagingRoot(), dir + "/raw"} {
		if err := store.RemoveAll(ctx, p); err != nil {
			return fmt.Errorf("reset the compaction bench: %w", err)
		}
	}
	return nil
}

func resetAll(dirs map[string]string) error {
	var errs []error
	for _, d := range dirs {
		errs = append(errs, resetCompaction(d))
	}
	return errors.Join(errs...)
}

// benchCompactor is the compactor of dir's bench topic as the daemon's
// policy wires it (internal/wiring.CompactionPolicies): the default target
// size, Parquet row groups of at most an eighth of the memory ceiling, no
// minimum age; no partition has a WAL to fence and no Hive partition to
// switch, so both are no-ops here (a claim per partition and one metastore
// call in the daemon, not timed here).
func benchCompactor(store storage.FS, spec caseSpec) (*compact.Compactor, error) {
	fm, err := benchFormat(spec.Format)
	if err != nil {
		return nil, err
	}
	return compact.New(compact.Options{
		FS: store, Topic: compactionLayout(spec.Dir), Ext: fm.Extension(), Pad: 10,
		TargetBytes: compact.DefaultTargetBytes, RowGroupBytes: min(compact.DefaultRowGroupBytes, spec.MemoryMax/8),
		Grace:   time.Hour,
		Fence:   func(context.Context, int32) error { return nil },
		Catalog: noCatalog{},
	}), nil
}

type noCatalog struct{}

func (noCatalog) SetLocation(context.Context, string, string, string) error { return nil }

// runCompactCase is one compaction of the directory, timed from the plan
// to the marker (C1 to C7), through a counting store.
func runCompactCase(ctx context.Context, spec caseSpec) (caseResult, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser})
	if err != nil {
		return caseResult{}, err
	}
	defer store.Close()
	counted := storagetest.NewCounting(store)
	c, err := benchCompactor(counted, spec)
	if err != nil {
		return caseResult{}, err
	}
	m := startMeter()
	res, err := c.Run(ctx, compactionEncoded)
	var out caseResult
	m.stop(&out)
	if err != nil {
		return out, fmt.Errorf("compact %s: %w", spec.Dir, err)
	}
	if !res.Switched {
		return out, fmt.Errorf("compact %s: readers not switched (%+v)", spec.Dir, res.Plan)
	}
	out.Records, out.Bytes, out.Files = spec.Records, res.Plan.Bytes, int64(res.Built)
	out.Inputs = int64(res.Plan.Files)
	out.Calls, out.BytesRead = callsOf(counted), counted.BytesRead()
	return out, nil
}

// runCompactRawCase is the raw limit: list the directory, read every
// file once in name order and write the bytes back as one file, closed.
func runCompactRawCase(ctx context.Context, spec caseSpec) (caseResult, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser})
	if err != nil {
		return caseResult{}, err
	}
	defer store.Close()
	counted := storagetest.NewCounting(store)
	dir := path.Join(compactionLayout(spec.Dir).Dir(), compactionEncoded)
	var out caseResult
	m := startMeter()
	infos, err := counted.ReadDir(ctx, dir)
	if err != nil {
		return out, err
	}
	f, err := counted.Create(ctx, spec.Dir+"/raw/all")
	if err != nil {
		return out, err
	}
	for _, fi := range infos {
		if err := copyInto(ctx, counted, f, path.Join(dir, fi.Name())); err != nil {
			_ = f.Close()
			return out, err
		}
		out.Inputs++
	}
	if err := f.Close(); err != nil {
		return out, fmt.Errorf("raw copy: close: %w", err)
	}
	m.stop(&out)
	out.Records, out.Files = spec.Records, 1
	out.Calls, out.BytesRead = callsOf(counted), counted.BytesRead()
	out.Bytes = out.BytesRead
	return out, nil
}

func copyInto(ctx context.Context, store storage.FS, w io.Writer, name string) error {
	rc, err := store.Open(ctx, name)
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("raw copy of %s: %w", name, err)
	}
	return nil
}

// runCompactLoop compacts the directory again and again (removing the
// generation between passes) until its stdin closes, and reports the
// passes and the bytes compacted: the load beside the sink case.
func runCompactLoop(ctx context.Context, spec caseSpec) (caseResult, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser})
	if err != nil {
		return caseResult{}, err
	}
	defer store.Close()
	c, err := benchCompactor(store, spec)
	if err != nil {
		return caseResult{}, err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); stop() }()
	var out caseResult
	m := startMeter()
	var held time.Time // the pace: no compaction before this (the fenced variant)
	for ctx.Err() == nil {
		if !sleepUntil(ctx, held) {
			break
		}
		res, err := c.Run(ctx, compactionEncoded)
		if ctx.Err() != nil {
			break // stopped mid-pass: not counted
		}
		if err != nil {
			return out, fmt.Errorf("compaction loop: %w", err)
		}
		out.Passes++
		out.Bytes += res.Plan.Bytes
		if spec.FenceTopic != "" {
			n, err := fenceSink(ctx, store, spec)
			out.Fences += n
			if n > 0 { // as compact.Policy: the next compaction waits the pace after one that fenced
				held = time.Now().Add(spec.FencePace)
			}
			if err != nil && ctx.Err() == nil {
				// A claim can lose a race with the writer's own recovery
				// (seen: its staging directory removed under it); the
				// daemon's pass then fails and is retried next interval.
				// Counted, and the loop goes on as the daemon would.
				out.FenceErrors++
				fmt.Fprintln(os.Stderr, "bench: compaction loop: fence failed (the daemon retries next interval):", err)
			}
		}
		if err := resetWith(ctx, store, spec.Dir); err != nil && ctx.Err() == nil {
			return out, err
		}
	}
	m.stop(&out)
	return out, nil
}

// sleepUntil waits until at, or until ctx ends (false).
func sleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// fenceSink claims every partition of the sink case's topic that has a
// WAL, as compact.Compactor's C4 does with the daemon's fence
// (internal/wiring.Compactor: sink.FenceForCompaction under the
// connector's name, "bench" in the sink case).
func fenceSink(ctx context.Context, store storage.FS, spec caseSpec) (int64, error) {
	ws := sink.WriteSettings{FS: store, Partitioner: partitioner.Default{}, Now: time.Now,
		TopicsDir: func(string) string { return spec.FenceDir + "/topics" },
		LogsDir:   func(string) string { return spec.FenceDir + "/logs" }}
	infos, err := store.ReadDir(ctx, path.Join(spec.FenceDir, "logs", spec.FenceTopic))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // the sink has not claimed yet
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, fi := range infos {
		p, err := strconv.ParseInt(fi.Name(), 10, 32)
		if err != nil || !fi.IsDir() {
			continue
		}
		if _, err := sink.FenceForCompaction(ctx, ws, "bench", spec.FenceTopic, int32(p), nil); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// medianBy returns the result with the median of by among rounds.
func medianBy[R any](rounds []R, pick func(R) caseResult, by func(caseResult) float64) caseResult {
	rs := make([]caseResult, len(rounds))
	for i, r := range rounds {
		rs[i] = pick(r)
	}
	sort.Slice(rs, func(i, j int) bool { return by(rs[i]) < by(rs[j]) })
	return rs[len(rs)/2]
}

func medianFloat(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func floats(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, " ")
}

// byteRate is a result's bytes per second.
func byteRate(r caseResult) float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Seconds
}

// printCompaction writes the compaction tables.
func printCompaction(w io.Writer, rep *compactionReport) {
	if rep == nil {
		return
	}
	fmt.Fprintln(w, "\n| compaction | files | input MB | raw read+write MB/s | compaction MB/s | ratio | ratio per round | compaction CPU s | raw peak RSS MB | compaction peak RSS MB | bytes read / input | store calls (compaction) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range rep.Cases {
		ratios := make([]float64, len(c.Rounds))
		for i, r := range c.Rounds {
			ratios[i] = r.Ratio
		}
		fmt.Fprintf(w, "| %s | %d → %d | %.1f | %.1f | %.1f | %.2f | %s | %.2f | %.0f | %.0f | %.2f | %d %v |\n",
			c.Format, c.Files, c.Compaction.Files, mb(c.Bytes), byteRate(c.Raw)/1e6, byteRate(c.Compaction)/1e6, c.Ratio,
			floatsPrec(ratios), c.Compaction.CPUSeconds, mb(c.Raw.PeakRSSBytes), mb(c.Compaction.PeakRSSBytes),
			float64(c.Compaction.BytesRead)/float64(max(c.Bytes, 1)), sumCalls(c.Compaction.Calls), c.Compaction.Calls)
	}
	for _, c := range rep.Cases {
		if len(c.Failures) > 0 {
			fmt.Fprintf(w, "%s: %d runs failed and were run again (the log has why)\n", c.Format, len(c.Failures))
		}
	}
	if b := rep.Beside; b != nil {
		fmt.Fprintf(w, "\nsink %s alone and with a compaction looping beside it, pairs back to back:\n\n", b.Workload)
		fmt.Fprintln(w, "| compaction beside | round | sink alone rec/s | sink with rec/s | drop % | sink CPU s / M rec alone | with | compaction loop: passes, CPU s, fences |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		if b.PaceSeconds > 0 {
			fmt.Fprintf(w, "the fenced variant paced: at most one compaction per %.0f s, as hdfs.sink.compaction.pace.ms does\n\n", b.PaceSeconds)
		}
		for _, v := range b.Variants {
			for i, r := range b.Rounds {
				l := r.Loop[v]
				fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.1f | %.2f | %.2f | %d, %.2f, %d (%d failed) |\n", v, i+1, rate(r.Alone[v]), rate(r.With[v]),
					100*(1-rate(r.With[v])/rate(r.Alone[v])), cpuPerM(r.Alone[v]), cpuPerM(r.With[v]), l.Passes, l.CPUSeconds, l.Fences, l.FenceErrors)
			}
		}
		fmt.Fprintln(w)
		for _, v := range b.Variants {
			fmt.Fprintf(w, "beside %s: throughput drop %.1f %%, sink CPU per record %+.1f %% (medians of the rounds' pairs)\n", v, b.Drop[v], b.CPUChange[v])
		}
		if len(b.FenceCost) > 0 {
			fmt.Fprintf(w, "fenced: sink seconds lost per compaction, by round: %s (median %.1f)", floats(b.FenceCost), medianFloat(b.FenceCost))
			if len(b.PaceShare) > 0 {
				fmt.Fprintf(w, "; over the %.0f s pace: %s %% (median %.1f %%)", b.PaceSeconds, floats(b.PaceShare), medianFloat(b.PaceShare))
			}
			fmt.Fprintln(w)
		}
	}
}

func floatsPrec(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}
