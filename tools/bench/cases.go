package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/internal/benchdata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/sink/memory"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// benchRetryBackoff is the sink cases' retry.backoff.ms: a fenced
// partition recovers after it (the compaction beside the sink's fence).
const benchRetryBackoff = time.Second

// runSinkCase runs the real sink in-process on a pre-produced backlog and
// times it from partition assignment to the commit of the last offset.
// The store counts its calls: those made before the first commit are the
// start-up recovery of every partition.
func runSinkCase(ctx context.Context, spec caseSpec) (caseResult, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser})
	if err != nil {
		return caseResult{}, err
	}
	defer store.Close()
	counted := storagetest.NewCounting(store)
	mem := memory.NewPlan(spec.MemoryMax, 1)
	cfg, watch, err := sinkConfig(spec, mem, counted)
	if err != nil {
		return caseResult{}, err
	}
	var res caseResult
	watch.onFirst = func() { res.StartupCalls = callsOf(counted) }
	mem.Govern() // as hdfs-sink run does: a soft limit under the ceiling, GOGC raised
	ends, err := endOffsets(ctx, spec.topics()...)
	if err != nil {
		return caseResult{}, err
	}
	started := time.Now()
	conn, err := sink.New(cfg)
	if err != nil {
		return caseResult{}, err
	}
	shutdown := runConnector(ctx, conn)
	defer shutdown.stop()

	if err := watch.waitAssigned(ctx, shutdown.done); err != nil {
		return res, err
	}
	assigned := time.Now()
	res.StartupSec = assigned.Sub(started).Seconds()
	m := startMeter()
	if err := watch.waitCommitted(ctx, ends, shutdown.done); err != nil {
		return res, err
	}
	m.stop(&res)
	res.Records, res.Bytes = spec.Records, spec.Bytes
	first, firstRecords := watch.first()
	res.FirstCommitSec = first.Sub(assigned).Seconds()
	res.SteadySec, res.SteadyRecords = watch.last().Sub(first).Seconds(), spec.Records-firstRecords
	res.TimedTailSec = watch.timedTail().Seconds()
	res.Calls = callsOf(counted)
	res.PeakBuffered, res.MemRotations = conn.Stats.PeakBuffered.Load(), conn.Stats.MemoryRotations.Load()
	res.PeakOpenFiles = conn.Stats.PeakOpenFiles.Load()
	res.BufferCeiling = cfg.MemoryMax
	if spec.TailProbe {
		if res.TailSeconds, err = tailProbe(ctx, spec, watch, shutdown.done); err != nil {
			return res, err
		}
	}
	files, err := countFiles(ctx, store, spec.Dir+"/topics")
	res.Files = files
	if err != nil || !spec.Restart {
		return res, err
	}
	if err := shutdown.stop(); err != nil && !errors.Is(err, context.Canceled) {
		return res, fmt.Errorf("stop before restart: %w", err)
	}
	res.Restart, err = restartSink(ctx, spec, mem, store, len(ends))
	return res, err
}

// running is a connector running in its own goroutine; stop cancels it
// and waits for Run to return (once; later calls return the same error).
type running struct {
	done   chan error
	cancel context.CancelFunc
	once   sync.Once
	err    error
}

func runConnector(ctx context.Context, conn *sink.Connector) *running {
	runCtx, cancel := context.WithCancel(ctx)
	r := &running{done: make(chan error, 1), cancel: cancel}
	go func() { r.done <- conn.Run(runCtx) }()
	return r
}

func (r *running) stop() error {
	r.once.Do(func() { r.cancel(); r.err = <-r.done })
	return r.err
}

// restartResult is a second start of the sink on what the first left: the
// WALs and committed files of every partition.
type restartResult struct {
	Partitions   int     `json:"partitions"`
	AssignedSec  float64 `json:"start_to_assigned_seconds"`
	RecoveredSec float64 `json:"start_to_all_recovered_seconds"`
	// Calls are the store calls from start to every partition recovered.
	Calls map[string]int64 `json:"store_calls"`
}

// restartSink starts a new connector in the same group on the same
// directory and times it to every one of parts partitions recovered (the
// connector's Recoveries count), counting the store calls made by then.
func restartSink(ctx context.Context, spec caseSpec, mem memory.Plan, store storage.FS, parts int) (*restartResult, error) {
	counted := storagetest.NewCounting(store)
	cfg, watch, err := sinkConfig(spec, mem, counted)
	if err != nil {
		return nil, err
	}
	rr := &restartResult{Partitions: parts}
	started := time.Now()
	conn, err := sink.New(cfg)
	if err != nil {
		return nil, err
	}
	r := runConnector(ctx, conn)
	defer r.stop()
	if err := watch.waitAssigned(ctx, r.done); err != nil {
		return rr, fmt.Errorf("restart: %w", err)
	}
	rr.AssignedSec = time.Since(started).Seconds()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for conn.Stats.Recoveries.Load() < int64(parts) {
		select {
		case <-tick.C:
		case err := <-r.done:
			return rr, fmt.Errorf("restart: %w: %v", errStopped, err)
		case <-ctx.Done():
			return rr, fmt.Errorf("restart: %d of %d partitions recovered: %w", conn.Stats.Recoveries.Load(), parts, ctx.Err())
		}
	}
	rr.RecoveredSec = time.Since(started).Seconds()
	rr.Calls = callsOf(counted)
	return rr, nil
}

// topics are all the topics a case reads.
func (s caseSpec) topics() []string {
	if len(s.Topics) > 0 {
		return s.Topics
	}
	return []string{s.Topic}
}

// sinkConfig wires the connector as internal/wiring/wiring.go does for a
// connector file with these settings (kept in step by hand: main packages
// cannot be imported).
func sinkConfig(spec caseSpec, mem memory.Plan, store storage.FS) (sink.Config, *commitWatch, error) {
	f, err := benchFormat(spec.Format)
	if err != nil {
		return sink.Config{}, nil, err
	}
	part, err := benchPartitioner(spec.Partitioner)
	if err != nil {
		return sink.Config{}, nil, err
	}
	reg, err := registry.NewClient(registry.ClientConfig{URLs: []string{itest.RegistryURL()}})
	if err != nil {
		return sink.Config{}, nil, err
	}
	watch := newCommitWatch()
	log := slog.New(&watchHandler{w: watch, next: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})})
	cfg := sink.Config{
		Name: "bench", Brokers: []string{itest.KafkaAddr()}, GroupID: fmt.Sprintf("connect-%s-r%d", spec.Topic, spec.Round), Topics: spec.topics(),
		WriteSettings: sink.WriteSettings{
			FS: store, Format: f, Partitioner: part,
			TopicsDir: func(string) string { return spec.Dir + "/topics" },
			LogsDir:   func(string) string { return spec.Dir + "/logs" },
			Pad:       10, FlushSize: spec.FlushSize, RotateInterval: spec.Rotate, Location: time.UTC,
		},
		Registry: reg, MemoryMax: mem.FileBudget,
		RetryBackoff: cmp.Or(spec.RetryBackoff, benchRetryBackoff), ShutdownTimeout: 30 * time.Second,
		Logger: log, KafkaOpts: mem.FetchOpts(),
	}
	if spec.Transforms {
		if cfg.Transforms, err = benchTransforms(); err != nil {
			return sink.Config{}, nil, err
		}
	}
	return cfg, watch, nil
}

// benchTransforms is the chain of three of issue 23's target
// (benchdata.Transforms).
func benchTransforms() (*transform.Chain, error) {
	return transform.New(benchdata.Transforms(), nil)
}

// benchFormat is the workload's format (avro or parquet), snappy-compressed
// as in the connector files the benchmark stands for.
func benchFormat(name string) (format.Format, error) {
	switch name {
	case avro.Name:
		return avro.New(avro.Options{Codec: "snappy"})
	case parquet.Name:
		return parquet.New(parquet.Options{Codec: "snappy"})
	}
	return nil, fmt.Errorf("bench: format %q (supported: avro, parquet)", name)
}

func benchPartitioner(kind string) (partitioner.Partitioner, error) {
	if kind == "hourly" {
		return partitioner.New(partitioner.Config{Kind: partitioner.KindHourly, Locale: "en", Location: time.UTC,
			Extractor: partitioner.RecordField, TimestampField: "ts"})
	}
	return partitioner.Default{}, nil
}

// tailProbe produces one more record per partition and returns the time
// from the end of that produce to the commit of the last of them: the
// rotate.interval.ms wait plus the commit protocol's latency.
func tailProbe(ctx context.Context, spec caseSpec, watch *commitWatch, done <-chan error) (float64, error) {
	pool, _, err := datumPool(spec.Size)
	if err != nil {
		return 0, err
	}
	id, err := registerSchema(spec.Topic, spec.Size)
	if err != nil {
		return 0, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(spec.Topic))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	for p := range spec.Partitions {
		// The newest timestamp of the pool, so Hourly writes to an open hour.
		v := schema.AppendWire(nil, id, pool[poolSize-1])
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: int32(p), Value: v}).FirstErr(); err != nil {
			return 0, fmt.Errorf("tail probe produce: %w", err)
		}
	}
	produced := time.Now()
	ends, err := endOffsets(ctx, spec.Topic)
	if err != nil {
		return 0, err
	}
	if err := watch.waitCommitted(ctx, ends, done); err != nil {
		return 0, err
	}
	return watch.last().Sub(produced).Seconds(), nil
}

// endOffsets are the topics' high watermarks per partition.
func endOffsets(ctx context.Context, topics ...string) (map[topicPart]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	lo, err := kadm.NewClient(cl).ListEndOffsets(ctx, topics...)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %v: %w", topics, err)
	}
	out := map[topicPart]int64{}
	lo.Each(func(o kadm.ListedOffset) { out[topicPart{o.Topic, o.Partition}] = o.Offset })
	return out, nil
}

// countFiles counts the committed files under dir, recursively.
func countFiles(ctx context.Context, store storage.FS, dir string) (int64, error) {
	infos, err := store.ReadDir(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, fi := range infos {
		if fi.IsDir() {
			c, err := countFiles(ctx, store, path.Join(dir, fi.Name()))
			if err != nil {
				return n, err
			}
			n += c
			continue
		}
		n++
	}
	return n, nil
}

// runConsumeCase is baseline 1: franz-go reads the whole topic, no group,
// no decode, no write, with the sink's fetch bounds.
func runConsumeCase(ctx context.Context, spec caseSpec) (caseResult, error) {
	opts := append([]kgo.Opt{kgo.SeedBrokers(itest.KafkaAddr()), kgo.ConsumeTopics(spec.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted())}, memory.NewPlan(spec.MemoryMax, 1).FetchOpts()...)
	var res caseResult
	m := startMeter()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	for res.Records < spec.Records {
		f := cl.PollRecords(ctx, 10000)
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("consume %s: %d of %d records: %w", spec.Topic, res.Records, spec.Records, err)
		}
		f.EachRecord(func(r *kgo.Record) { res.Records++; res.Bytes += int64(len(r.Value)) })
	}
	m.stop(&res)
	return res, nil
}

// runHDFSWriteCase is baseline 2: spec.Bytes written to HDFS with the Go
// client in files of spec.FileBytes, spec.Writers files at a time, each
// closed (durable) as the sink's are.
func runHDFSWriteCase(ctx context.Context, spec caseSpec) (caseResult, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser})
	if err != nil {
		return caseResult{}, err
	}
	defer store.Close()
	chunk := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz-raw-hdfs-baseline\n"), 1<<20/55)
	nfiles := max(1, (spec.Bytes+spec.FileBytes-1)/spec.FileBytes)
	jobs := make(chan int64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	res := caseResult{Files: nfiles}
	m := startMeter()
	for range max(1, spec.Writers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				size := min(spec.FileBytes, spec.Bytes-i*spec.FileBytes)
				if err := writeRaw(ctx, store, fmt.Sprintf("%s/raw/f%06d", spec.Dir, i), chunk, size); err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range nfiles {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	m.stop(&res)
	res.Records, res.Bytes = spec.Records, spec.Bytes
	return res, firstErr
}

func writeRaw(ctx context.Context, store storage.FS, name string, chunk []byte, size int64) error {
	f, err := store.Create(ctx, name)
	if err != nil {
		return fmt.Errorf("raw write %s: %w", name, err)
	}
	for left := size; left > 0; {
		n := min(left, int64(len(chunk)))
		if _, err := f.Write(chunk[:n]); err != nil {
			f.Close()
			return fmt.Errorf("raw write %s: %w", name, err)
		}
		left -= n
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("raw close %s: %w", name, err)
	}
	return nil
}
