package sink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/layout"
)

// Partitions that failed: a write or a recovery that failed breaks only its
// partition, which waits a backoff (longer when fenced) and recovers again;
// a refused partition looks for an offset reset now and then; GET /status
// shows them (Health).

// breakPartition stops writing a partition until recovery succeeds: its open
// files are left for recovery, and fetching pauses so nothing is lost or
// written twice meanwhile.
func (c *Connector) breakPartition(o *owned, err error) {
	o.failures++
	wait := c.backoff(o.failures, err)
	o.obs.Broken(err)
	if errors.Is(err, ErrFenced) {
		c.Stats.Fenced.Add(1)
		o.obs.Fenced()
	}
	wait = fencedWait(err, wait)
	if isRefusal(err) && o.p.refusal != "" {
		// Published by the recovery at the end of this poll, before any
		// rebalance can hand the partition to an owner that knows nothing.
		wait = 0
	}
	o.broken, o.retryAt = err, c.cfg.Now().Add(wait)
	o.pending, o.paused = nil, false // fetched again after the recovery's rewind, which resumes fetching
	o.setProblem(err, c.cfg.Now())
	o.log.Error("partition write failed; will recover", "err", err, "retry_in", wait)
	c.cl.PauseFetchPartitions(o.asMap())
}

// fencedWait is how long a partition whose write failed with err waits
// before recovering, given the backoff: a fence usually means a rebalance
// under way that will revoke the partition, so it waits 30 s for that;
// a compaction's fence never does (the compactor claims once and commits
// nothing), so it recovers after the backoff alone, and its new writer
// looks for the compaction's generation (docs/design.md §12).
func fencedWait(err error, backoff time.Duration) time.Duration {
	if errors.Is(err, ErrFenced) && !errors.Is(err, ErrFencedByCompaction) {
		return max(backoff, 30*time.Second)
	}
	return backoff
}

// retryBroken recovers broken partitions whose backoff is over and rewinds
// their fetch position to where their resume says. A refused partition
// only looks whether its refusal still stands, until an operator's reset
// replaces it. The partitions recovered in one round share their topic
// walks. Recoveries run under store, Kafka lookups under ctx.
func (c *Connector) retryBroken(ctx, store context.Context) {
	now := c.cfg.Now()
	scans := newTopicScans()
	for _, o := range c.parts.all() {
		if o.broken == nil || now.Before(o.retryAt) {
			continue
		}
		if refused, _ := o.p.stillRefused(store); refused {
			o.retryAt = now.Add(c.refusedCheck()) // a failed look is left to the recovery below
			continue
		}
		next, err := o.p.resume(store, scans)
		c.Stats.Recoveries.Add(1)
		if err != nil {
			c.recoveryFailed(o, err, now)
			continue
		}
		if next < 0 && o.p.seekStart {
			if next, err = c.startPolicyOffset(ctx, o.tp); err != nil {
				c.recoveryFailed(o, err, now)
				continue
			}
		}
		o.p.seekStart = false
		if next >= 0 {
			c.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{o.topic: {o.partition: {Epoch: o.p.epochBefore(next), Offset: next}}})
		}
		c.cl.ResumeFetchPartitions(o.asMap())
		o.log.Info("partition recovered", "next_offset", next, "failures", o.failures)
		o.broken = nil
		o.setProblem(nil, now)
	}
}

// startPolicyOffset is the offset consumer.auto.offset.reset names for t
// now (the log start, or the end with latest): SetOffsets takes exact
// offsets only.
func (c *Connector) startPolicyOffset(ctx context.Context, t tp) (int64, error) {
	adm := kadm.NewClient(c.cl)
	list := adm.ListStartOffsets
	if c.cfg.StartAtEnd {
		list = adm.ListEndOffsets
	}
	offsets, err := list(ctx, t.topic)
	if err != nil {
		return 0, fmt.Errorf("look up where consumer.auto.offset.reset starts topic %s partition %d: %w", t.topic, t.partition, err)
	}
	o, ok := offsets.Lookup(t.topic, t.partition)
	if !ok || o.Err != nil {
		return 0, fmt.Errorf("look up where consumer.auto.offset.reset starts topic %s partition %d: %v", t.topic, t.partition, o.Err)
	}
	return o.Offset, nil
}

// refusedCheckEvery is how often a refused partition looks at most whether
// an operator reset it: one WAL listing, so a reset is picked up quickly.
const refusedCheckEvery = 30 * time.Second

// refusedCheck is how often a refused partition looks for a reset: six
// retry backoffs (30 s with the default 5 s), never more than
// refusedCheckEvery.
func (c *Connector) refusedCheck() time.Duration {
	return min(6*c.cfg.RetryBackoff, refusedCheckEvery)
}

// recoveryFailed schedules the next recovery of a partition whose recovery
// failed. A refusal is logged once, when it is first found in the WAL.
func (c *Connector) recoveryFailed(o *owned, err error, now time.Time) {
	o.failures++
	o.retryAt = now.Add(c.backoff(o.failures, err))
	o.setProblem(err, now)
	var refused *RefusedError
	if errors.As(err, &refused) {
		o.log.Error("partition refused; waiting for an operator's reset", "err", err)
		return
	}
	o.log.Error("recovery failed; will retry", "failures", o.failures, "err", err)
}

// Health is what GET /status shows of the connector's partitions.
type Health struct {
	Assigned int
	// Broken maps each partition that is not writing ("topic/partition")
	// to why, and since when.
	Broken map[string]Problem
	// Kafka is set while the brokers have been failing for a while.
	Kafka *Problem
}

// Health reports the partitions the connector owns and those waiting for
// recovery; safe to call from any goroutine.
func (c *Connector) Health() Health {
	parts := c.parts.all()
	h := Health{Assigned: len(parts), Broken: map[string]Problem{}, Kafka: kafkaProblem(c.kafka)}
	for _, o := range parts {
		if pr := o.problem.Load(); pr != nil {
			h.Broken[fmt.Sprintf("%s/%d", o.topic, o.partition)] = *pr
		}
	}
	return h
}

// backoff is the wait after the n-th failure in a row (n >= 1), doubling
// from RetryBackoff. A service that fails (the store, the registry) is
// retried at least once a minute, so a partition writes again within a
// minute of the service's return, however long it was down (with 5 minutes
// for everything, an hour-long NameNode outage left partitions idle for
// up to 5 minutes after it ended). What only an operator can fix (a
// RewindError, a committed file gone) is retried ever more rarely, down to
// once every 5 minutes.
func (c *Connector) backoff(n int, err error) time.Duration {
	limit := time.Minute
	switch {
	case isRefusal(err):
		return c.refusedCheck() // a look at the WAL head: cheap
	case errors.Is(err, errCommittedFileMissing), errors.As(err, new(*layout.NameError)):
		limit = 5 * time.Minute // only an operator can fix it
	}
	d := c.cfg.RetryBackoff << min(n-1, 6)
	return min(d, max(limit, c.cfg.RetryBackoff))
}
