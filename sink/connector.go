// Package sink owns the exactly-once path from Kafka to the store: one
// consumer group per connector, a state machine per assigned partition, the
// commit protocol (close → WAL publish → rename), recovery on assignment, and
// what happens to bad records. docs/design.md says why it is correct.
package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink/deadletter"
	"github.com/hdfs-sink/hdfs-sink/sink/extras"
	"github.com/hdfs-sink/hdfs-sink/sink/kafkawatch"
	"github.com/hdfs-sink/hdfs-sink/sink/memory"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// Tolerance is errors.tolerance.
type Tolerance int

// ToleranceNone stops the connector on a bad record; ToleranceAll sends it to
// the dead-letter topic.
const (
	ToleranceNone Tolerance = iota
	ToleranceAll
)

// WriteSettings are what a connector hands to every partition it owns: how
// files are written, rotated, placed and registered. They are set once, in
// one place, and shared as they are.
type WriteSettings struct {
	FS          storage.FS
	Format      format.Format
	Partitioner partitioner.Partitioner
	TopicsDir   func(topic string) string // absolute in the store, ${topic} expanded
	LogsDir     func(topic string) string
	// Route is the name a consumed topic's files, WAL and Hive table are
	// kept under (RegexRouter, a static rename: transform.Chain.Route);
	// nil: the topic's own name. Kafka (fetches, offsets, topic ids) keeps
	// the consumed name.
	Route func(topic string) string

	Pad            int
	FlushSize      int64
	MaxFileBytes   int64                // hdfs.sink.rotate.max.file.bytes; 0: off
	Compatibility  schema.Compatibility // schema.compatibility
	RotateInterval time.Duration        // rotate.interval.ms; 0: off
	RotateSchedule time.Duration        // rotate.schedule.interval.ms; 0: off
	Location       *time.Location
	// CountLate counts late records (Stats.LateRecords) with Lateness,
	// hdfs.sink.completeness.lateness.ms (completeness markers are on).
	CountLate bool
	Lateness  time.Duration

	Catalog Catalog // Hive registration; nil when hive.integration=false
	Faults  Faults
	Now     func() time.Time
}

// Layout is where the files and WAL of the consumed topic live: under its
// routed name, with topics.dir and logs.dir expanded for that name.
func (s WriteSettings) Layout(topic string) layout.Topic {
	name := topic
	if s.Route != nil {
		name = s.Route(topic)
	}
	return layout.Topic{TopicsDir: s.TopicsDir(name), LogsDir: s.LogsDir(name), Name: name}
}

// Config is one connector's wiring, built by cmd from its connector file.
type Config struct {
	Name        string
	Brokers     []string
	GroupID     string
	Topics      []string
	TopicsRegex string
	StartAtEnd  bool // consumer.auto.offset.reset=latest for partitions HDFS knows nothing of
	KafkaOpts   []kgo.Opt
	// KafkaFatal says whether a client error is one no retry fixes (the
	// broker refused the credentials, a TLS handshake failed
	// verification), returning the error to stop the connector with;
	// nil: every client error is retried, as franz-go does.
	KafkaFatal func(error) error

	WriteSettings
	// Value is value.converter; nil: Confluent's AvroConverter through
	// Registry, or the bytes as they are when Schemaless.
	Value convert.Converter
	// Key is key.converter; nil: the key's bytes as they are.
	Key convert.Converter
	// ValueClass and KeyClass are the converters' Connect class names, for
	// the dead-letter header __connect.errors.class.name ("": the default
	// ones, AvroConverter and ByteArrayConverter).
	ValueClass, KeyClass string
	Registry             schema.Registry
	ExtraColumns         []string // hdfs.sink.extra.columns
	Schemaless           bool     // values written as they are (StringConverter / ByteArrayConverter)
	// Transforms are Connect's SMTs, applied to each decoded record after
	// the extra columns (nil: none). A router in it renames a topic the
	// same way for every record (wiring refuses the others); the rename is
	// WriteSettings.Route, checked at assignment (CheckRoutes).
	Transforms *transform.Chain

	// MemoryMax bounds the bytes all open files of this connector buffer;
	// past it the largest partitions rotate early. 0: no bound.
	MemoryMax int64
	// Budget, when set, is the process-wide bound shared with the other
	// connectors of the process (run --memory-max-bytes).
	Budget *memory.Budget

	RetryBackoff    time.Duration
	ShutdownTimeout time.Duration
	// SchemaLookupWait bounds how long a record waits for its schema
	// (default 30 s); past it the partition breaks and retries like after
	// a store failure.
	SchemaLookupWait time.Duration
	Tolerance        Tolerance
	DLQTopic         string
	// DLQHeaders adds Connect's __connect.errors.* headers to dead-lettered
	// records (errors.deadletterqueue.context.headers.enable).
	DLQHeaders bool
	// DLQReplication is the replication factor of the dead-letter topic
	// when it has to be created; <= 0: the broker's default.
	DLQReplication int16
	// DeadLetterWait bounds how long a bad record waits for the dead-letter
	// topic to take it (default 30 s); past it the partition breaks and
	// retries like after a store failure (D21).
	DeadLetterWait time.Duration
	// LogBadRecords logs each tolerated bad record (errors.log.enable);
	// LogRecordContent adds its key and value (errors.log.include.messages).
	LogBadRecords, LogRecordContent bool
	FailOnNull                      bool // behavior.on.null.values=fail

	Logger       *slog.Logger
	Observer     Observer      // nil: nobody observes
	TickInterval time.Duration // how often idle partitions check their timers
	Parallelism  int           // partitions processed at once
	// TimedRotationsPerPoll bounds the commits one poll starts for
	// rotate.interval.ms and rotate.schedule.interval.ms; the partitions
	// past it write on into their open files and commit in the next polls,
	// oldest refusal first (docs/design.md §4, "Spreading timed
	// rotations"). 0: 4 × Parallelism; negative: no bound.
	TimedRotationsPerPoll int
}

// Catalog registers committed data for queries (the Hive metastore). Its
// methods must not block: the write path never waits for the catalog.
type Catalog interface {
	// SchemaSeen gives the writer schema of new files; ids order schemas
	// (a registry hands out increasing ids), so the catalog keeps the newest.
	SchemaSeen(topic string, id int32, avroSchema string)
	Committed(topic string, encodedDirs []string)
}

// Stats are a connector's counters since start. Commits counts commits
// (rotations that committed), not files.
type Stats struct {
	Records, Commits, DeadLettered, NullsIgnored, Recoveries, Fenced, Filtered atomic.Int64
	// Rewinds counts batches refused because Kafka's offsets went below
	// what HDFS holds (RewindError); RetentionGaps counts offsets ranges
	// that retention removed before they were written.
	Rewinds, RetentionGaps atomic.Int64
	// MissingFiles counts commits whose files vanished before their rename.
	MissingFiles atomic.Int64
	// MemoryRotations counts rotations forced by MemoryMax; PeakBuffered is
	// the most the open files held after a batch was written and the
	// ceiling enforced (with the files of rotations still running beside
	// the poll loop, which can be above the ceiling for that poll).
	MemoryRotations, PeakBuffered atomic.Int64
	// PeakOpenFiles is the most temp files open at once, seen after a batch.
	PeakOpenFiles atomic.Int64
	// DeferredRotations counts time-driven rotations moved to a later poll
	// by TimedRotationsPerPoll, once per partition and poll.
	DeferredRotations atomic.Int64
	// LateRecords counts records written to a time directory their
	// partition had already passed by the lateness (docs/design.md §11).
	LateRecords atomic.Int64
}

// Connector consumes its topics and commits them to the store.
type Connector struct {
	cfg   Config
	cl    *kgo.Client
	Stats Stats

	extras   *extras.Columns
	kafka    *kafkawatch.Watch
	parts    partitions
	spread   *spread     // the per-poll budget of time-driven commits
	fetch    *fetchSizes // spreads each fetch over the workers
	janitor  *janitor    // removes recoveries' leftovers after the assignment
	fetchLog logLimiter
	epoch    string
	owner    string
	// ready is closed once cl is set: franz-go may call the group
	// callbacks (a lost session, an assignment) before NewClient returns
	// to New, and they use cl.
	ready chan struct{}

	// gate keeps a group callback's take of partitions apart from the
	// poll loop's work on them (pollGate).
	gate pollGate
	// releasing is what the open files of partitions taken by a callback
	// and not yet committed or dropped hold: the memory ceiling counts
	// them while the poll loop writes beside their commits.
	releasing atomic.Int64
	// moving counts the group callbacks moving partitions beside the poll
	// loop: a revocation's commits, an assignment's recoveries.
	moving atomic.Int32
	// committing is what the files of commits running off the poll loop
	// held when they began; holding is what the records held behind those
	// commits take (pipeline.go). The memory ceiling counts both.
	committing atomic.Int64
	holding    atomic.Int64
	// commitSlots bounds the commits off the poll loop (commitsInFlight).
	commitSlots chan struct{}
	// queued are the partitions holding records not yet written or a
	// commit not yet settled. Poll loop only.
	queued map[*owned]struct{}

	pause   pauseControl
	panicMu sync.Mutex
	panic   *PanicError // the first panic recovered in a partition worker
	refused error       // the first refusal outside the poll loop (refuse)

	dlq       deadLetterTopic // the dead-letter topic (errors.tolerance=all)
	badLogged atomic.Bool     // a tolerated bad record was logged

	// unchecked is the value converter when it may leave the datum's check
	// to the transforms (uncheckedValue), found once, not per record.
	unchecked uncheckedConverter
}

// New validates the wiring and creates the Kafka client (which connects lazily).
func New(cfg Config) (*Connector, error) {
	cfg = withDefaults(cfg)
	host, _ := os.Hostname()
	ext, err := extras.New(cfg.ExtraColumns)
	if err != nil {
		return nil, fmt.Errorf("connector %q: %w", cfg.Name, err)
	}
	c := &Connector{cfg: cfg, epoch: newEpoch(), owner: fmt.Sprintf("%s:%d", host, os.Getpid()),
		extras: ext, unchecked: uncheckedValue(cfg, ext), ready: make(chan struct{}), pause: newPauseControl(),
		kafka: kafkawatch.New(cfg.Logger, cfg.Now), commitSlots: make(chan struct{}, commitsInFlight*cfg.Parallelism),
		queued: map[*owned]struct{}{}}
	c.spread = newSpread(cfg.TimedRotationsPerPoll, func() { c.Stats.DeferredRotations.Add(1) })
	c.janitor = newJanitor(janitorWorkers)
	cl, err := kgo.NewClient(c.kafkaOpts()...)
	if err != nil {
		c.janitor.stop()
		return nil, fmt.Errorf("connector %q: kafka client: %w", cfg.Name, err)
	}
	c.cl = cl
	c.fetch = newFetchSizes(cl, cfg.Parallelism)
	c.dlq = deadletter.New(cl, deadletter.Config{Connector: cfg.Name, Topic: cfg.DLQTopic, Headers: cfg.DLQHeaders,
		Replication: cfg.DLQReplication, Wait: cfg.DeadLetterWait, Fatal: c.kafkaFatal,
		Failed: cfg.Observer.DeadLetterFailed, Logger: cfg.Logger})
	close(c.ready)
	return c, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	cfg.Logger = cfg.Logger.With("connector", cfg.Name)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = time.Second
	}
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = 8
	}
	if cfg.TimedRotationsPerPoll == 0 {
		cfg.TimedRotationsPerPoll = defaultTimedPerPollRounds * cfg.Parallelism
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 5 * time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	if cfg.SchemaLookupWait <= 0 {
		cfg.SchemaLookupWait = convert.DefaultLookupWait
	}
	if cfg.Value == nil && !cfg.Schemaless && cfg.Registry != nil {
		cfg.Value = convert.NewAvro(cfg.Registry, cfg.SchemaLookupWait)
	}
	if cfg.DeadLetterWait <= 0 {
		cfg.DeadLetterWait = 30 * time.Second
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.Partitioner == nil {
		cfg.Partitioner = partitioner.Default{}
	}
	return cfg
}

func (c *Connector) kafkaOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.cfg.Brokers...),
		kgo.ConsumerGroup(c.cfg.GroupID),
		kgo.ClientID("hdfs-sink-" + c.cfg.Name),
		// Not kgo.BlockRebalanceOnPoll(): it kept the poll loop, and every
		// partition a revocation keeps, waiting for the revocation's
		// commits. The poll gate keeps only the revoked partitions apart
		// from the poll loop (pollGate, D48).
		// Named rather than left to franz-go's default: a member joining or
		// leaving moves only the partitions that change owner, and the
		// others keep writing their open files (docs/design.md §6, "A
		// rebalance moves only what changes owner").
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.AutoCommitMarks(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Past retention, start from the log start: a gap, never a stall.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.AdjustFetchOffsetsFn(c.adjustOffsets),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(c.onLost),
		kgo.WithHooks(c.kafka),
	}
	if c.cfg.TopicsRegex != "" {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(c.cfg.TopicsRegex))
	} else {
		opts = append(opts, kgo.ConsumeTopics(c.cfg.Topics...))
	}
	return append(opts, c.cfg.KafkaOpts...)
}

// Run consumes until ctx is done (then it commits what it holds, leaves the
// group and returns nil) or a fatal error stops the connector. A panic in a
// partition worker is such an error (a *PanicError). The store calls run
// under a context of their own (storeContext), which a stop lets finish
// for ShutdownTimeout.
func (c *Connector) Run(ctx context.Context) error {
	c.cfg.Logger.Info("connector starting", "group", c.cfg.GroupID, "epoch", c.epoch)
	store, end := c.storeContext(ctx)
	defer end()
	defer c.janitor.stop()
	for {
		if ctx.Err() != nil {
			return c.shutdown(store)
		}
		if c.pause.requested() {
			c.whilePaused(ctx)
			continue
		}
		fetches, gone, err := c.pollOnce(ctx, store)
		if fetches.IsClientClosed() {
			return nil
		}
		if err != nil {
			c.Close()
			return err
		}
		c.followRecreated(gone)
	}
}

// pollOnce fetches and writes one poll's records holding the poll gate:
// a group callback takes the partitions it revokes or loses before or
// after a poll, never during one (pollGate). It returns the topics to
// subscribe to anew (followRecreated) and the error that stops the
// connector.
func (c *Connector) pollOnce(ctx, store context.Context) (kgo.Fetches, []string, error) {
	gateCtx, stopWaiting := c.gate.enterPoll(ctx)
	defer c.gate.leavePoll()
	c.fetch.follow(c.parts.len())
	pollCtx, cancel := context.WithTimeout(gateCtx, c.cfg.TickInterval)
	// All that is buffered: memory.Plan.FetchOpts bound it, and every poll ends
	// in a barrier (all partitions' records written or held behind their
	// commits, pipeline.go), so small polls with many partitions left each
	// partition a few records per barrier. Each fetch is spread over the
	// workers (fetchsize.go): a poll brings work for every one of them.
	fetches := c.cl.PollFetches(pollCtx)
	cancel()
	c.gate.polled(stopWaiting)
	if fetches.IsClientClosed() {
		return fetches, nil, nil
	}
	gone, lost, err := c.fetchErrors(fetches)
	c.breakTruncated(lost)
	if err == nil {
		err = c.poll(ctx, store, fetches)
	}
	return fetches, gone, err
}

// poll writes one poll's records, then does what every poll does after
// them: timers, the memory ceiling, recoveries. Its error stops the
// connector. What a stop ends at once (registry lookups, the dead-letter
// topic, Kafka) runs under ctx, the store calls under store.
func (c *Connector) poll(ctx, store context.Context, fetches kgo.Fetches) error {
	if err := c.refusal(); err != nil {
		return err // before writing anything this poll fetched
	}
	// While a revocation commits, or an assignment recovers, beside this
	// poll, the timers wait for it: the moved partitions wait for that work,
	// and every commit of ours competes with it for the NameNode
	// (D48).
	c.spread.begin(c.mayRotateLater, c.moving.Load() > 0)
	err := c.process(ctx, store, fetches)
	if err == nil {
		err = c.tickAll(store)
	}
	if err == nil {
		c.enforceMemory(store)
	}
	if err == nil {
		c.retryBroken(ctx, store)
	}
	if err == nil && c.pause.requested() {
		c.settleAll() // paused, the connector commits nothing
	}
	if perr := c.panicked(); perr != nil {
		return perr // even where a worker's error was not propagated
	}
	return err
}

// Close drops every partition without committing and closes the Kafka
// client: after a fatal error, or when whoever ran Run saw it panic. Run
// must not be running. Closing twice is harmless.
func (c *Connector) Close() {
	c.janitor.stop()
	c.abortAll()
	c.cl.Close()
}

// fetchErrors logs fetch errors, each (partition, error) at most once per
// fetchErrorEvery, and returns the topics Kafka no longer knows by the id
// the client holds (deleted, and maybe re-created), the partitions whose
// log franz-go found truncated (by leader epoch), and the first error no
// retry fixes (KafkaFatal), which stops the connector.
func (c *Connector) fetchErrors(f kgo.Fetches) (gone []string, lost []*kgo.ErrDataLoss, fatal error) {
	f.EachError(func(topic string, p int32, err error) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return
		}
		var dl *kgo.ErrDataLoss
		if errors.As(err, &dl) {
			lost = append(lost, dl)
		}
		if ferr := c.kafkaFatal(err); ferr != nil && fatal == nil {
			fatal = fmt.Errorf("connector %q: %w", c.cfg.Name, ferr)
		}
		if errors.Is(err, kerr.UnknownTopicID) && !slices.Contains(gone, topic) {
			gone = append(gone, topic)
		}
		if c.fetchLog.allow(fmt.Sprint(topic, p, err), c.cfg.Now()) {
			c.cfg.Logger.Warn("fetch error", "topic", topic, "partition", p, "err", err)
		}
	})
	return gone, lost, fatal
}

// breakTruncated stops the partitions whose log diverged from what they
// read: franz-go has already moved their position to where the log
// diverged, so none of their records may be written before a recovery
// has decided (partition.truncated).
func (c *Connector) breakTruncated(lost []*kgo.ErrDataLoss) {
	for _, dl := range lost {
		o := c.parts.get(tp{dl.Topic, dl.Partition})
		if o == nil {
			continue
		}
		c.settle(o, true) // the state machine is touched only with no commit running
		if o.broken == nil {
			c.breakPartition(o, o.p.truncated(dl.ResetTo))
		} else {
			o.p.truncated(dl.ResetTo) // a refusal is noted even while broken
		}
	}
}

func (c *Connector) kafkaFatal(err error) error {
	if c.cfg.KafkaFatal == nil {
		return nil
	}
	return c.cfg.KafkaFatal(err)
}

// followRecreated subscribes anew to topics that were deleted and maybe
// re-created: franz-go keeps fetching a deleted topic's id until the topic
// is purged and added back. Added back, the topic's partitions are assigned
// and recovered again, and a re-created topic's offsets, which start below
// what HDFS holds, are refused by beginBatch (RewindError): the operator
// hears of it, and nothing already committed is replaced.
func (c *Connector) followRecreated(topics []string) {
	if len(topics) == 0 {
		return
	}
	c.cfg.Logger.Warn("topic deleted (and maybe re-created) under the connector; subscribing to it anew", "topics", topics)
	c.cl.PurgeTopicsFromConsuming(topics...)
	if c.cfg.TopicsRegex == "" {
		c.cl.AddConsumeTopics(topics...)
	}
}

// fetchErrorEvery is how often one partition's same fetch error is logged:
// a broker refusing every fetch would otherwise log thousands of lines a
// second.
const fetchErrorEvery = 10 * time.Second

// logLimiter lets one message per key through every fetchErrorEvery.
type logLimiter struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func (l *logLimiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]time.Time{}
	}
	if t, ok := l.last[key]; ok && now.Sub(t) < fetchErrorEvery {
		return false
	}
	l.last[key] = now
	return true
}

// process writes one poll's records, partitions in parallel. A partition
// whose commit runs off the poll loop keeps its records until the commit
// has ended, and the poll does not wait for it (pipeline.go).
func (c *Connector) process(ctx, store context.Context, fetches kgo.Fetches) error {
	// Topic by topic rather than EachPartition: the topic id of each
	// response is what tells a re-created topic from the one HDFS holds.
	for _, f := range fetches {
		for _, ft := range f.Topics {
			for _, fp := range ft.Partitions {
				if len(fp.Records) == 0 {
					continue
				}
				o := c.parts.get(tp{ft.Topic, fp.Partition})
				if o == nil || o.broken != nil {
					continue // not ours, or waiting for recovery: refetched after the rewind
				}
				c.enqueue(o, ft.TopicID, fp)
			}
		}
	}
	if ctx.Err() != nil {
		return nil // stopping: the records wait for the stop's writeHeld, which writes them under store
	}
	parts := c.writable()
	err := c.parallel(len(parts), func(i int) error {
		return c.drain(ctx, store, parts[i])
	})
	c.forgetWritten(parts)
	c.noteHeld()
	return err
}

// parallel runs fn(0..n-1), Parallelism at a time, and joins their errors.
// Partitions spend most of a commit waiting for HDFS round trips, so
// committing several at once is what keeps many partitions fast. A panic
// in fn becomes its error and is kept for Run, which stops the connector.
func (c *Connector) parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, c.cfg.Parallelism)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			defer c.catchPanic(&errs[i])
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// catchPanic, deferred, turns a panic into *errp and remembers the first.
func (c *Connector) catchPanic(errp *error) {
	perr := recovered(recover())
	if perr == nil {
		return
	}
	c.panicMu.Lock()
	if c.panic == nil {
		c.panic = perr
	}
	c.panicMu.Unlock()
	*errp = perr
}

func (c *Connector) panicked() error {
	c.panicMu.Lock()
	defer c.panicMu.Unlock()
	if c.panic == nil {
		return nil // not a nil *PanicError in a non-nil error
	}
	return c.panic
}

// writeRecords feeds one partition's queued records to its state machine,
// from the first not yet written. It returns only fatal errors; anything
// else marks the partition broken for recovery. A commit found due starts
// off the poll loop and ends the call: b says where to go on after it.
func (c *Connector) writeRecords(ctx, store context.Context, o *owned, b *queuedBatch) error {
	recs := b.fp.Records
	if !b.begun {
		b.begun = true
		o.obs.LogEnd(b.fp.HighWatermark)
		fb := fetchedBatch{First: recs[0].Offset, Last: recs[len(recs)-1].Offset, LogStart: b.fp.LogStartOffset,
			HighWatermark: b.fp.HighWatermark, TopicID: b.topicID}
		if err := o.p.beginBatch(fb); err != nil {
			c.breakPartition(o, err)
			return nil
		}
	} else {
		o.p.continueBatch()
	}
	written := 0
	defer func() { o.obs.Written(written) }()
	for ; b.next < len(recs); b.next++ {
		kr := recs[b.next]
		ok, err := c.writeRecord(ctx, store, o, kr)
		if due := asCommitDue(err); due != nil {
			c.startCommit(store, o, due) // kr is written after it, first of the next files
			return nil
		}
		if errors.Is(err, schema.ErrRegistryRefused) {
			// Waiting cannot fix credentials or a certificate: stop and say so.
			return fmt.Errorf("connector %q: topic %s partition %d offset %d: %w", c.cfg.Name, kr.Topic, kr.Partition, kr.Offset, err)
		}
		if err != nil && !isBadRecord(err) {
			// The store, the registry or shutdown: not the record's fault.
			c.breakPartition(o, err)
			return nil
		}
		if err != nil {
			err = c.badRecord(ctx, kr, err)
			if deadLetterOutage(err) {
				c.breakPartition(o, err) // the others go on; the record is read again (D21)
				return nil
			}
			if err != nil {
				return err
			}
		}
		if ok {
			written++
		}
	}
	err := o.p.endBatch(store)
	if due := asCommitDue(err); due != nil {
		c.startCommit(store, o, due)
		err = nil
	}
	if err != nil {
		c.breakPartition(o, err)
		return nil
	}
	o.failures = 0 // a batch went through: the next failure starts the backoff anew
	return nil
}

// writeRecord decodes one record and writes it. An error that isBadRecord
// accepts is the record's own (undecodable, or the partitioner or format
// cannot place it); any other is a failure of what it depends on.
// It reports whether the record is now in a temp file.
func (c *Connector) writeRecord(ctx, store context.Context, o *owned, kr *kgo.Record) (bool, error) {
	var r record // on the stack: the per-record path allocates nothing (issue 25)
	if ok, err := c.decodeTo(ctx, kr, &o.transformed, &r); !ok || err != nil {
		return false, err
	}
	if err := o.p.write(ctx, store, r); err != nil {
		return false, err
	}
	c.Stats.Records.Add(1)
	return true, nil
}

// committed is every partition's OnCommit: the group's offset, advisory
// only (HDFS is the truth), follows each commit.
func (c *Connector) committed(t tp, next int64) {
	c.Stats.Commits.Add(1)
	c.spread.forget(t) // whatever the reason, nothing of the deferred rotation is left open
	c.cl.MarkCommitOffsets(map[string]map[int32]kgo.EpochOffset{
		t.topic: {t.partition: {Epoch: -1, Offset: next}},
	})
}

// mayRotateLater reports whether a partition refused a time-driven commit
// is still owned and writing, so that the next poll owes it a slot. A
// broken partition's files are dropped by its recovery; a released one's
// committed or dropped by the release.
func (c *Connector) mayRotateLater(t tp) bool {
	o := c.parts.get(t)
	return o != nil && o.broken == nil
}

// tickAll lets the timers of every partition with open files rotate them.
// Only those get a worker: a partition with nothing open has nothing to
// rotate, and with 10,000 assigned (issue 25) a worker for each was 10,000
// goroutines on every poll.
func (c *Connector) tickAll(ctx context.Context) error {
	parts := c.parts.all()
	open := parts[:0]
	for _, o := range parts {
		if c.idle(o) && !o.p.w.Empty() {
			open = append(open, o)
		}
	}
	parts = open
	err := c.parallel(len(parts), func(i int) error {
		o := parts[i]
		if o.broken != nil {
			return nil
		}
		err := o.p.tick(ctx)
		if due := asCommitDue(err); due != nil {
			c.startCommit(ctx, o, due)
			err = nil
		}
		if err != nil {
			c.breakPartition(o, err)
		}
		return nil
	})
	c.queueCommitting(parts) // settled, and their fetching resumed, by the next polls
	return err
}

// shutdown commits what each partition holds, then leaves the group. The
// commits run under store, which ends ShutdownTimeout after the stop: a
// commit the store does not finish by then fails, and its records are read
// again by the partition's next owner.
func (c *Connector) shutdown(store context.Context) error {
	c.cfg.Logger.Info("connector stopping: committing open files and leaving the group")
	c.gate.shared(func() { c.writeHeld(store) })
	c.release(store, c.parts.keys(), true)
	c.cfg.Budget.Leave(c)
	c.cl.Close()
	c.cfg.Logger.Info("connector stopped")
	return nil
}

// storeContext is the context of the connector's store calls. A stop (ctx
// done) does not end it: the poll under way finishes its writes and the
// shutdown commits what the partitions hold (D6). It ends ShutdownTimeout
// after the stop, so a store that hangs cannot hold the stop longer, or
// when end is called (Run returns).
func (c *Connector) storeContext(ctx context.Context) (store context.Context, end func()) {
	store, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-store.Done():
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(c.cfg.ShutdownTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancel(fmt.Errorf("connector %q: the stop took longer than the shutdown timeout (%v): %w",
				c.cfg.Name, c.cfg.ShutdownTimeout, context.DeadlineExceeded))
		case <-store.Done():
		}
	}()
	return store, func() { cancel(nil) }
}

// abortAll drops every partition without committing (after a fatal error).
func (c *Connector) abortAll() {
	c.release(context.Background(), c.parts.keys(), false)
	c.cfg.Budget.Leave(c)
}
