package sink

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink/kafkawatch"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

func newEpoch() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

type tp struct {
	topic     string
	partition int32
}

// asMap is the partition in the form franz-go's pause and resume take.
func (t tp) asMap() map[string][]int32 { return map[string][]int32{t.topic: {t.partition}} }

// owned is an assigned partition and, when broken, why and when to retry.
// The connector keeps these fields; the partition keeps its own.
type owned struct {
	tp
	p        *partition
	log      *slog.Logger
	obs      PartitionObserver
	broken   error
	retryAt  time.Time
	failures int // breaks and failed recoveries since the last batch went through
	// problem mirrors broken for Health, which other goroutines call: the
	// error and since when, nil while the partition writes.
	problem atomic.Pointer[Problem]
	// transformed is the record the transforms work on, reused for the
	// partition's next record with its Scratch (Connector.transform).
	transformed transform.Record
	// commit is the partition's commit running off the poll loop, pending
	// the records it was not given yet, in order (pipeline.go). Only the
	// partition's driver reads or sets them: the poll loop while the
	// partition is in the registry, the group callback that took it after.
	commit  *commitJob
	pending []queuedBatch
	paused  bool // fetching paused while commit runs (enqueue)
}

// Problem is why a partition is not writing.
type Problem struct {
	Err   string
	Since time.Time // when the partition stopped writing
}

// kafkaProblem is the Kafka outage w reports, if any.
func kafkaProblem(w *kafkawatch.Watch) *Problem {
	since, err := w.Down()
	if err == nil {
		return nil
	}
	return &Problem{Err: err.Error(), Since: since}
}

// setProblem records err for Health; nil clears it. The first failure's
// time is kept across retries: it says how long the partition has been
// down, not when the last retry failed.
func (o *owned) setProblem(err error, now time.Time) {
	if err == nil {
		o.problem.Store(nil)
		return
	}
	since := now
	if old := o.problem.Load(); old != nil {
		since = old.Since
	}
	o.problem.Store(&Problem{Err: err.Error(), Since: since})
}

// partitions is the connector's registry of owned partitions, shared by the
// poll loop and the group callbacks franz-go runs.
type partitions struct {
	mu sync.Mutex
	m  map[tp]*owned
}

func (ps *partitions) get(t tp) *owned {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.m[t]
}

func (ps *partitions) put(o *owned) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[tp]*owned{}
	}
	ps.m[o.tp] = o
}

// take removes t and returns what was owned (nil if nothing).
func (ps *partitions) take(t tp) *owned {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	o := ps.m[t]
	delete(ps.m, t)
	return o
}

func (ps *partitions) len() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.m)
}

func (ps *partitions) all() []*owned {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]*owned, 0, len(ps.m))
	for _, o := range ps.m {
		out = append(out, o)
	}
	return out
}

// keys lists the owned partitions by topic.
func (ps *partitions) keys() map[string][]int32 {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	m := map[string][]int32{}
	for k := range ps.m {
		m[k.topic] = append(m[k.topic], k.partition)
	}
	return m
}

func (c *Connector) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	<-c.ready
	c.cfg.Logger.Info("partitions assigned", "partitions", assigned)
}

// adjustOffsets runs recovery for newly assigned partitions before anything
// is fetched for them, and returns where to start: HDFS is the truth, the
// group's committed offsets are ignored.
func (c *Connector) adjustOffsets(ctx context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	<-c.ready
	var assigned []tp
	out := make(map[string]map[int32]kgo.Offset, len(offsets))
	for topic, parts := range offsets {
		out[topic] = make(map[int32]kgo.Offset, len(parts))
		for part := range parts {
			assigned = append(assigned, tp{topic, part})
		}
	}
	if err := c.checkRoutes(offsets); err != nil {
		// Nothing of this assignment is recovered or written: a recovery
		// would claim a WAL another topic's partition writes. The next poll
		// stops the connector with err.
		c.refuse(err)
		return offsets, nil
	}
	c.moving.Add(1)
	defer c.moving.Add(-1)
	starts := make([]kgo.Offset, len(assigned))
	recovered := make([]*owned, len(assigned))
	scans := newTopicScans()
	c.janitor.hold() // the recoveries' leftovers wait for all of them
	defer c.janitor.release()
	_ = c.parallel(len(assigned), func(i int) error {
		recovered[i] = c.newOwned(assigned[i])
		starts[i] = c.startOffset(ctx, recovered[i], scans)
		return nil
	})
	// Visible to the poll loop only once recovered, and between two polls:
	// records of an earlier tenure of ours that a poll under way fetched
	// before franz-go dropped them can never reach the new state.
	c.gate.exclusive(func() {
		for _, o := range recovered {
			if o != nil { // nil: its recovery panicked, which stops the connector
				c.parts.put(o)
			}
		}
	})
	for i, t := range assigned {
		out[t.topic][t.partition] = starts[i]
	}
	return out, nil
}

// checkRoutes refuses an assignment whose topics the router would not
// rename one-to-one (transform.Chain.CheckRoutes) among every topic the
// connector consumes: with topics.regex, check cannot know them. Without a
// router it checks nothing.
func (c *Connector) checkRoutes(offsets map[string]map[int32]kgo.Offset) error {
	if !c.cfg.Transforms.ChangesTopic() {
		return nil
	}
	topics := c.cl.GetConsumeTopics()
	for t := range offsets {
		topics = append(topics, t)
	}
	if err := c.cfg.Transforms.CheckRoutes(topics); err != nil {
		return fmt.Errorf("connector %q: assignment refused: %w", c.cfg.Name, err)
	}
	return nil
}

// refuse keeps err, the first refusal found outside the poll loop (a route
// at assignment), for Run to stop the connector with.
func (c *Connector) refuse(err error) {
	c.panicMu.Lock()
	defer c.panicMu.Unlock()
	if c.refused == nil {
		c.refused = err
		c.cfg.Logger.Error("connector refused", "err", err)
	}
}

func (c *Connector) refusal() error {
	c.panicMu.Lock()
	defer c.panicMu.Unlock()
	return c.refused
}

// newOwned creates the state of a newly assigned partition.
func (c *Connector) newOwned(t tp) *owned {
	log := c.cfg.Logger.With("topic", t.topic, "partition", t.partition)
	obs := c.cfg.Observer.Partition(t.topic, t.partition)
	p := newPartition(partitionConfig{
		WriteSettings: c.cfg.WriteSettings,
		Layout:        c.cfg.Layout(t.topic),
		Source:        t.topic,
		Partition:     t.partition,
		Owner:         c.owner,
		Epoch:         c.epoch,
		Connector:     c.cfg.Name,
		Logger:        log,
		Stats:         &c.Stats,
		OnCommit:      func(next int64) { c.committed(t, next) },
		MayRotate:     func() bool { return c.spread.take(t) },
		PruneEvery:    defaultPruneEvery,
		Observer:      obs,
		Housekeep:     c.janitor.add,
		// Commits started by writing run off the poll loop (pipeline.go).
		DetachCommits: true,
	})
	if _, ok := c.schemaSource(); ok {
		p.cfg.SchemaByID = func(ctx context.Context, id int32) (*schema.Schema, error) { return c.schemaForFiles(ctx, t.topic, id) }
	}
	return &owned{tp: t, p: p, log: log, obs: obs}
}

// startOffset recovers a partition and decides, explicitly and in the log,
// where its consumption starts.
func (c *Connector) startOffset(ctx context.Context, o *owned, scans *topicScans) kgo.Offset {
	next, err := o.p.resume(ctx, scans)
	c.Stats.Recoveries.Add(1)
	switch {
	case err != nil:
		// Keep the assignment but fetch nothing until recovery succeeds;
		// if it then finds nothing committed, fetching starts where the
		// start policy says.
		c.breakPartition(o, err)
		return c.startPolicy()
	case next >= 0:
		o.log.Info("start position from HDFS", "next_offset", next)
		// With the committed record's leader epoch, franz-go checks that the
		// log still holds it as it was (KIP-320): a truncation below it
		// comes back as ErrDataLoss (breakTruncated).
		return kgo.NewOffset().At(next).WithEpoch(o.p.epochBefore(next))
	case c.cfg.StartAtEnd:
		o.log.Info("nothing committed in HDFS for this partition: starting at the log end (consumer.auto.offset.reset=latest)")
		return kgo.NewOffset().AtEnd()
	default:
		o.log.Info("nothing committed in HDFS for this partition: starting at the log start")
		return kgo.NewOffset().AtStart()
	}
}

// startPolicy is where a partition HDFS knows nothing of starts.
func (c *Connector) startPolicy() kgo.Offset {
	if c.cfg.StartAtEnd {
		return kgo.NewOffset().AtEnd()
	}
	return kgo.NewOffset().AtStart()
}

// onRevoked commits what revoked partitions hold: we still own them until
// this returns, and committing beats re-reading. The poll loop writes the
// partitions kept meanwhile (pollGate).
func (c *Connector) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	<-c.ready
	c.cfg.Logger.Info("partitions revoked", "partitions", revoked)
	c.release(ctx, revoked, true)
}

// onLost drops lost partitions without committing: another member may
// already own them, and fencing would refuse our commit anyway.
func (c *Connector) onLost(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	<-c.ready
	c.cfg.Logger.Warn("partitions lost (session expired?); discarding uncommitted files", "partitions", lost)
	c.release(ctx, lost, false)
}

// release stops writing the given partitions, committing their open files
// first if commit is set, all at once (Parallelism at a time): at shutdown
// every partition commits within ShutdownTimeout, not one after the other.
// The partitions are taken out of the registry between two polls
// (pollGate.exclusive); from then on the poll loop cannot reach them, and
// their commits run beside it. A partition paused while broken is resumed
// here: franz-go keeps the pause across reassignment, so a partition
// assigned back to us would never be fetched again.
func (c *Connector) release(ctx context.Context, parts map[string][]int32, commit bool) {
	if countPartitions(parts) == 0 {
		return // franz-go ends every session with a revocation, mostly of nothing: no poll need end for it
	}
	defer c.cl.ResumeFetchPartitions(parts)
	var taken []*owned
	var held []int64
	c.gate.exclusive(func() {
		for topic, ps := range parts {
			for _, part := range ps {
				if o := c.parts.take(tp{topic, part}); o != nil {
					taken = append(taken, o)
				}
			}
		}
	})
	for _, o := range taken {
		n := int64(0)
		if o.commit == nil { // a running commit's files count in committing until it is settled
			n = o.p.buffered()
		}
		held = append(held, n)
		c.releasing.Add(n)
	}
	if commit {
		c.moving.Add(1)
		defer c.moving.Add(-1)
	}
	_ = c.parallel(len(taken), func(i int) error {
		defer c.releasing.Add(-held[i])
		defer taken[i].obs.Released()
		c.releaseOne(ctx, taken[i], commit)
		return nil
	})
}

func (c *Connector) releaseOne(ctx context.Context, o *owned, commit bool) {
	c.settle(o, true) // a commit under way ends first, as it would have inline
	o.pending = nil   // never written: the next owner reads them after what HDFS holds
	if o.p.empty() {
		return
	}
	if commit && o.broken == nil && ctx.Err() == nil {
		if err := o.p.commitNow(ctx, "partition released"); err != nil {
			// Files closed or published: recovery of the next owner decides.
			o.log.Warn("could not commit on release; the records will be consumed again", "err", err)
		}
		return
	}
	o.p.discard(ctx)
	o.log.Info("uncommitted records discarded; the next owner consumes them again")
}

func countPartitions(parts map[string][]int32) int {
	n := 0
	for _, ps := range parts {
		n += len(ps)
	}
	return n
}
