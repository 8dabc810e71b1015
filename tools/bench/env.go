package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/riferrei/srclient"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

// env is one run's view of the services: a unique prefix for its topics
// and its HDFS directory (/bench/<run>), both removed at the end.
type env struct {
	run      string
	cl       *kgo.Client
	adm      *kadm.Client
	topics   []string
	n        int
	memTopic string // reused by the 1,000-partition recovery case
	// memTopics are all the memory case's topics (memTopic is the first).
	memTopics []string
}

func newEnv() (*env, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr()))
	if err != nil {
		return nil, err
	}
	return &env{run: fmt.Sprintf("bench-%d", time.Now().Unix()), cl: cl, adm: kadm.NewClient(cl)}, nil
}

func (e *env) dir(name string) string { return "/bench/" + e.run + "/" + name }

func (e *env) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if len(e.topics) > 0 {
		if _, err := e.adm.DeleteTopics(ctx, e.topics...); err != nil {
			fmt.Fprintln(os.Stderr, "bench: delete topics:", err)
		}
	}
	e.cl.Close()
	if store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser}); err == nil {
		if err := store.RemoveAll(ctx, "/bench/"+e.run); err != nil {
			fmt.Fprintln(os.Stderr, "bench: remove HDFS dir:", err)
		}
		store.Close()
	}
}

// topic creates a fresh topic and fills it with n records round-robin.
func (e *env) topic(size string, parts, n int) (name string, bytes int64, err error) {
	e.n++
	name = fmt.Sprintf("%s-%d-%s-%dp", e.run, e.n, strings.ToLower(size), parts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := e.createTopic(ctx, name, parts); err != nil {
		return "", 0, err
	}
	bytes, err = produce(ctx, name, size, parts, n)
	return name, bytes, err
}

func ptr(s string) *string { return &s }

// partitionsPerRequest is how many partitions one request creates: the
// KRaft controller writes a topic's creation as one batch of records and
// refuses batches over 10,000 (BoundedListTooLongException, reported as
// POLICY_VIOLATION), so a 10,000-partition topic is created in steps.
const partitionsPerRequest = 5000

// createTopic creates name with parts partitions, in steps of
// partitionsPerRequest.
func (e *env) createTopic(ctx context.Context, name string, parts int) error {
	first := min(parts, partitionsPerRequest)
	resp, err := e.adm.CreateTopic(ctx, int32(first), 1, map[string]*string{"retention.ms": ptr("-1")}, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	e.topics = append(e.topics, name)
	for have := first; have < parts; {
		// kadm's CreatePartitions reads the current count from the
		// metadata first: right after a creation the broker may not know
		// the topic yet (UNKNOWN_TOPIC_OR_PARTITION).
		if err := e.waitPartitions(ctx, name, have); err != nil {
			return err
		}
		add := min(parts-have, partitionsPerRequest)
		rs, err := e.adm.CreatePartitions(ctx, add, name)
		if err == nil {
			err = rs.Error()
		}
		if err != nil {
			return fmt.Errorf("create topic %s: add %d partitions to %d: %w", name, add, have, err)
		}
		have += add
	}
	return e.waitPartitions(ctx, name, parts)
}

// waitPartitions waits until the broker's metadata shows all parts
// partitions of topic: a producer told of fewer fails the others' records.
func (e *env) waitPartitions(ctx context.Context, topic string, parts int) error {
	for {
		td, err := e.adm.ListTopics(ctx, topic)
		if err == nil {
			if t, ok := td[topic]; ok && t.Err == nil && len(t.Partitions) == parts {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s: waiting for %d partitions in the metadata: %w", topic, parts, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func registerSchema(topic, size string) (int32, error) {
	_, text, err := datumPool(size)
	if err != nil {
		return 0, err
	}
	sr := srclient.NewSchemaRegistryClient(itest.RegistryURL())
	s, err := sr.CreateSchema(topic+"-value", text, srclient.Avro)
	if err != nil {
		return 0, fmt.Errorf("register schema for %s: %w", topic, err)
	}
	return int32(s.ID()), nil
}

// produce writes n framed records round-robin and returns the value bytes.
func produce(ctx context.Context, topic, size string, parts, n int) (int64, error) {
	pool, _, err := datumPool(size)
	if err != nil {
		return 0, err
	}
	id, err := registerSchema(topic, size)
	if err != nil {
		return 0, err
	}
	framed := make([][]byte, len(pool))
	for i, d := range pool {
		framed[i] = schema.AppendWire(nil, id, d)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var mu sync.Mutex
	var firstErr error
	var total int64
	for _, i := range produceOrder(n, parts) {
		v := framed[i%len(framed)]
		total += int64(len(v))
		cl.Produce(ctx, &kgo.Record{Partition: int32(i % parts), Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, err
	}
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return 0, fmt.Errorf("produce to %s: %w", topic, firstErr)
	}
	return total, nil
}

// groupedAbove is the partition count past which records are produced one
// partition after another: round-robin over 10,000 partitions puts one
// record in each batch (the producer buffers 10,000 records), and the
// sink would then be measured reading two million one-record batches.
const groupedAbove = 1000

// produceOrder is the order of the record numbers 0..n-1, record i going
// to partition i%parts: in turn (round-robin), or partition by partition
// above groupedAbove partitions (each partition gets the same records).
func produceOrder(n, parts int) []int {
	order := make([]int, 0, n)
	if parts <= groupedAbove {
		for i := range n {
			order = append(order, i)
		}
		return order
	}
	for p := range parts {
		for i := p; i < n; i += parts {
			order = append(order, i)
		}
	}
	return order
}

// records is the count that takes roughly 10–20 s through the sink here.
func records(w workload, scale float64) int {
	n := 1_000_000
	if w.Size == "100B" {
		n = 4_000_000
	}
	n = int(float64(n) * scale)
	return max(w.Partitions, n/w.Partitions*w.Partitions)
}

// profiles are where a sink case writes its CPU profile and execution trace.
type profiles struct{ cpu, trace, heap string }

func (e *env) runWorkload(o options, w workload, prof profiles) (caseReport, error) {
	n := records(w, o.scale)
	fmt.Fprintf(os.Stderr, "bench: %s: producing %d records\n", w, n)
	topic, bytes, err := e.topic(w.Size, w.Partitions, n)
	if err != nil {
		return caseReport{}, err
	}
	defer e.dropTopic(topic)
	perPart := int64(n / w.Partitions)
	cr := caseReport{Workload: w, FlushSize: max(1000, perPart/5), MemoryMax: o.memoryMax}
	base := caseSpec{Topic: topic, Partitions: w.Partitions, Records: int64(n), Bytes: bytes, Format: w.Format,
		Partitioner: w.Partitioner, FlushSize: cr.FlushSize, MemoryMax: o.memoryMax, Rotate: 3 * time.Second, Size: w.Size}
	rounds := max(o.repeat, 1)
	for i := range rounds {
		if i > 0 {
			prof = profiles{} // profile the first round only
		}
		// Only the last round probes the tail: a probe's records would
		// leave the next round's sink a partial file to wait out.
		r, err := e.runRound(o, w, base, i, prof, i == rounds-1)
		if err != nil {
			return cr, err
		}
		cr.Rounds = append(cr.Rounds, r)
	}
	cr.Sink = median(cr.Rounds, func(r round) caseResult { return r.Sink })
	cr.Sink.TailSeconds = cr.Rounds[rounds-1].Sink.TailSeconds
	cr.Consume = median(cr.Rounds, func(r round) caseResult { return r.Consume })
	cr.HDFSWrite = median(cr.Rounds, func(r round) caseResult { return r.HDFSWrite })
	cr.Ratio = rate(cr.Sink) / min(rate(cr.Consume), rate(cr.HDFSWrite))
	if o.base != "" {
		b := median(cr.Rounds, func(r round) caseResult { return *r.BaseSink })
		cr.BaseSink, cr.VsBase = &b, compare(cr.Rounds)
	}
	if o.transforms {
		smt := median(cr.Rounds, func(r round) caseResult { return *r.SinkTransforms })
		cr.TransformsCost = 100 * (1 - rate(smt)/rate(cr.Sink))
		fmt.Fprintf(os.Stderr, "bench: %s: sink %.0f rec/s, with a chain of three transforms %.0f rec/s (cost %.1f %%), CPU s %.2f vs %.2f\n",
			w, rate(cr.Sink), rate(smt), cr.TransformsCost, cr.Sink.CPUSeconds, smt.CPUSeconds)
	}
	return cr, nil
}

// runRound runs the sink and both baselines once, each on its own HDFS
// directory (and the sink in its own group), so rounds do not interact.
func (e *env) runRound(o options, w workload, base caseSpec, i int, prof profiles, probe bool) (round, error) {
	var r round
	var err error
	base.Round = i
	sinkSpec := base
	sinkSpec.Kind, sinkSpec.Dir, sinkSpec.TailProbe = "sink", e.dir(fmt.Sprintf("%s/r%d", base.Topic, i)), probe
	sinkSpec.CPUProfile, sinkSpec.Trace, sinkSpec.HeapProfile = prof.cpu, prof.trace, prof.heap
	if r.Sink, r.BaseSink, err = e.runSinks(o, w, sinkSpec, i, probe); err != nil {
		return r, err
	}
	if o.transforms {
		smt := sinkSpec
		smt.Transforms, smt.TailProbe, smt.Dir = true, false, e.dir(fmt.Sprintf("%s/r%d-smt", base.Topic, i))
		smt.CPUProfile, smt.Trace, smt.HeapProfile = "", "", ""
		if prof.cpu != "" {
			smt.CPUProfile = prof.cpu + ".transforms"
		}
		smt.Round = i + transformsRoundOffset // a consumer group of its own
		fmt.Fprintf(os.Stderr, "bench: %s round %d: sink with transforms\n", w, i+1)
		res, err := child(o.binary, smt)
		if err != nil {
			return r, err
		}
		r.SinkTransforms = &res
	}
	fmt.Fprintf(os.Stderr, "bench: %s round %d: raw consume\n", w, i+1)
	consume := base
	consume.Kind = "consume" // the same backlog the sink read, probe records aside
	if r.Consume, err = child(o.binary, consume); err != nil {
		return r, err
	}
	fmt.Fprintf(os.Stderr, "bench: %s round %d: raw HDFS write\n", w, i+1)
	write := base
	write.Kind, write.Dir, write.Writers = "hdfswrite", e.dir(fmt.Sprintf("%s-raw/r%d", base.Topic, i)), min(w.Partitions, 8)
	write.FileBytes = max(1, base.Bytes/max(1, r.Sink.Files))
	if r.HDFSWrite, err = child(o.binary, write); err != nil {
		return r, err
	}
	r.Ratio = rate(r.Sink) / min(rate(r.Consume), rate(r.HDFSWrite))
	return r, nil
}

// runSinks runs this build's sink case and, with -base, the base build's
// on the same backlog in its own group and directory. The order alternates
// by round so a machine that drifts (warming caches, a neighbour's load)
// does not favour one side; the probing round runs the base first so its
// backlog is the produced one, without the probe's records.
func (e *env) runSinks(o options, w workload, spec caseSpec, i int, probe bool) (head caseResult, base *caseResult, err error) {
	runHead := func() error {
		fmt.Fprintf(os.Stderr, "bench: %s round %d: sink\n", w, i+1)
		head, err = child(o.binary, spec)
		return err
	}
	if o.base == "" {
		return head, nil, runHead()
	}
	runBase := func() error {
		b := spec
		b.Round, b.Dir, b.TailProbe = spec.Round+baseRoundOffset, spec.Dir+"-base", false
		b.CPUProfile, b.Trace, b.HeapProfile = "", "", ""
		fmt.Fprintf(os.Stderr, "bench: %s round %d: base sink\n", w, i+1)
		res, err := child(o.base, b)
		base = &res
		return err
	}
	order := []func() error{runBase, runHead}
	if i%2 == 1 && !probe {
		order = []func() error{runHead, runBase}
	}
	for _, run := range order {
		if err := run(); err != nil {
			return head, base, err
		}
	}
	return head, base, nil
}

// baseRoundOffset keeps the base build's consumer groups apart from this
// build's (the group name carries the round).
const baseRoundOffset = 1000

// transformsRoundOffset does the same for the sink run with transforms.
const transformsRoundOffset = 2000

// roundRatios lists each round's ratio, e.g. "0.81 1.02 0.93".
func roundRatios(rounds []round) string {
	parts := make([]string, len(rounds))
	for i, r := range rounds {
		parts[i] = fmt.Sprintf("%.2f", r.Ratio)
	}
	return strings.Join(parts, " ")
}

// median returns the result with the median records/s among rounds.
func median(rounds []round, pick func(round) caseResult) caseResult {
	rs := make([]caseResult, len(rounds))
	for i, r := range rounds {
		rs[i] = pick(r)
	}
	sort.Slice(rs, func(i, j int) bool { return rate(rs[i]) < rate(rs[j]) })
	return rs[len(rs)/2]
}

// dropTopic frees the broker's disk as soon as a case is done.
func (e *env) dropTopic(topic string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.adm.DeleteTopics(ctx, topic); err == nil {
		for i, t := range e.topics {
			if t == topic {
				e.topics = append(e.topics[:i], e.topics[i+1:]...)
				break
			}
		}
	}
}

func rate(r caseResult) float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Records) / r.Seconds
}

// runMemory is the many-partitions case: by default Parquet, Hourly, one
// topic of o.memParts partitions; its peak RSS is compared with the ceiling.
// -mem-topics spreads the partitions over that many topics.
func (e *env) runMemory(o options, prof profiles) (caseReport, error) {
	w := workload{"1KB", o.memParts, o.memFormat, o.memPartitioner}
	topics, perTopic := max(o.memTopics, 1), o.memParts/max(o.memTopics, 1)
	if perTopic*topics != o.memParts {
		return caseReport{}, fmt.Errorf("-mem-partitions %d is not a multiple of -mem-topics %d", o.memParts, topics)
	}
	n := o.memParts * o.memRecords
	fmt.Fprintf(os.Stderr, "bench: memory %s: producing %d records to %d topic(s)\n", w, n, topics)
	var names []string
	var bytes int64
	for range topics {
		topic, b, err := e.topic(w.Size, perTopic, perTopic*o.memRecords)
		if err != nil {
			return caseReport{}, err
		}
		names, bytes = append(names, topic), bytes+b
	}
	e.memTopic, e.memTopics = names[0], names
	ceiling := cmp.Or(o.memMemoryMax, o.memoryMax)
	cr := caseReport{Workload: w, FlushSize: int64(cmp.Or(o.memFlush, o.memRecords*10)), MemoryMax: ceiling}
	spec := caseSpec{Kind: "sink", Topic: names[0], Partitions: w.Partitions, Records: int64(n), Bytes: bytes, Format: w.Format,
		Partitioner: w.Partitioner, FlushSize: cr.FlushSize, MemoryMax: ceiling, Rotate: 10 * time.Second, Size: w.Size,
		Dir: e.dir(names[0]), CPUProfile: prof.cpu, Trace: prof.trace, HeapProfile: prof.heap, Restart: o.memRestart}
	if topics > 1 {
		spec.Topics = names
	}
	fmt.Fprintf(os.Stderr, "bench: memory %s: sink\n", w)
	var err error
	cr.Sink, err = child(o.binary, spec)
	return cr, err
}

type machine struct {
	NProc   int    `json:"nproc"`
	CPU     string `json:"cpu"`
	MemKB   string `json:"mem_total"`
	Go      string `json:"go"`
	GOARCH  string `json:"goarch"`
	Kernel  string `json:"kernel"`
	Testenv string `json:"services"`
}

func describeMachine() machine {
	m := machine{NProc: runtime.NumCPU(), Go: runtime.Version(), GOARCH: runtime.GOARCH,
		Testenv: "Kafka " + itest.KafkaAddr() + ", HDFS " + itest.HDFSURI() + " (1 DataNode), registry " + itest.RegistryURL()}
	m.CPU = procField("/proc/cpuinfo", "model name")
	m.MemKB = procField("/proc/meminfo", "MemTotal")
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

func procField(file, key string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func cpuPerM(r caseResult) float64 {
	if r.Records == 0 {
		return 0
	}
	return r.CPUSeconds / float64(r.Records) * 1e6
}

func printRow(c caseReport) {
	s := c.Sink
	fmt.Fprintf(os.Stderr, "bench: %s: %.0f rec/s, %.1f MB/s, ratio %.2f\n", c.Workload, rate(s), mb(s.Bytes)/s.Seconds, c.Ratio)
}

func printReport(w io.Writer, r report) {
	fmt.Fprintf(w, "\nmachine: %d × %s, %s RAM, %s\n\n", r.Machine.NProc, r.Machine.CPU, r.Machine.MemKB, r.Machine.Go)
	fmt.Fprintln(w, "| workload | records | sink rec/s | sink MB/s | CPU s / M rec | rec/s per CPU-core | peak RSS MB | files | tail s | end on timers s | consume rec/s | HDFS-write rec/s | ratio | ratio per round |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range r.Cases {
		s := c.Sink
		perCore := 0.0
		if s.CPUSeconds > 0 {
			perCore = float64(s.Records) / s.CPUSeconds
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.1f | %.2f | %.0f | %.0f | %d | %.2f | %.2f | %.0f | %.0f | %.2f | %s |\n",
			c.Workload, s.Records, rate(s), mb(s.Bytes)/s.Seconds, cpuPerM(s), perCore, mb(s.PeakRSSBytes), s.Files,
			s.TailSeconds, s.TimedTailSec, rate(c.Consume), rate(c.HDFSWrite), c.Ratio, roundRatios(c.Rounds))
	}
	printMachineCPU(w, r.Cases, r.Machine.NProc)
	if m := r.Memory; m != nil {
		printMemory(w, m)
	}
	for _, rc := range r.Recovery {
		fmt.Fprintf(w, "recovery %d partitions (%d topics), static membership %v: start→assigned %.2f s, start→first commit %.2f s, start→all recovered %.2f s (killed after %d commits)\n",
			rc.Partitions, max(rc.Topics, 1), rc.Static, rc.AssignedSec, rc.FirstCommitSec, rc.RecoveredSec, rc.CommitsBeforeKill)
	}
	printAssignment(w, r.Assignment)
	printCommitLimit(w, r.CommitLimit)
	if r.Base != "" {
		var b strings.Builder
		printComparison(&b, r.Cases)
		fmt.Fprintf(w, "\nthis build against base %s (medians of paired rounds, same run):\n\n%s", r.Base, b.String())
	}
	printCompaction(w, r.Compaction)
	for _, e := range r.Errors {
		fmt.Fprintln(w, "ERROR:", e)
	}
}

// printMemory prints the many-partitions case: memory, rates, and what its
// start-up (and with -mem-restart a second start) cost the NameNode.
func printMemory(w io.Writer, m *caseReport) {
	s := m.Sink
	fmt.Fprintf(w, "\nmemory %s: %d records in %.1f s (%.0f rec/s), peak RSS %.0f MB vs hdfs.sink.memory.max.bytes %.0f MB (file buffers %.0f MB, peak buffered %.0f MB, up to %d files open at once, %d memory rotations, %d files)\n",
		m.Workload, s.Records, s.Seconds, rate(s), mb(s.PeakRSSBytes), mb(m.MemoryMax), mb(s.BufferCeiling), mb(s.PeakBuffered), s.PeakOpenFiles, s.MemRotations, s.Files)
	steady := 0.0
	if s.SteadySec > 0 {
		steady = float64(s.SteadyRecords) / s.SteadySec
	}
	parts := float64(max(m.Workload.Partitions, 1))
	fmt.Fprintf(w, "memory %s: start→assigned %.2f s, assigned→first commit %.2f s (%d store calls, %.1f per partition), steady %.0f rec/s over %.1f s, %d store calls in all (%s)\n",
		m.Workload, s.StartupSec, s.FirstCommitSec, sumCalls(s.StartupCalls), float64(sumCalls(s.StartupCalls))/parts, steady, s.SteadySec, sumCalls(s.Calls), callList(s.Calls))
	if rr := s.Restart; rr != nil {
		fmt.Fprintf(w, "memory %s restart: start→assigned %.2f s, start→all %d partitions recovered %.2f s, %d store calls (%.1f per partition: %s)\n",
			m.Workload, rr.AssignedSec, rr.Partitions, rr.RecoveredSec, sumCalls(rr.Calls), float64(sumCalls(rr.Calls))/float64(max(rr.Partitions, 1)), callList(rr.Calls))
	}
}

// callList is "create 10, readdir 4, …" in name order.
func callList(calls map[string]int64) string {
	names := make([]string, 0, len(calls))
	for k := range calls {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %d", k, calls[k])
	}
	return strings.Join(parts, ", ")
}
