package sink

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/twmb/franz-go/pkg/kgo"
)

func newEpoch() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (c *Connector) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	c.cfg.Logger.Info("partitions assigned", "partitions", assigned)
}

// adjustOffsets runs recovery for newly assigned partitions before anything
// is fetched for them, and returns where to start: HDFS is the truth, the
// group's committed offsets are ignored.
func (c *Connector) adjustOffsets(ctx context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	var assigned []tp
	out := make(map[string]map[int32]kgo.Offset, len(offsets))
	for topic, parts := range offsets {
		out[topic] = make(map[int32]kgo.Offset, len(parts))
		for part := range parts {
			assigned = append(assigned, tp{topic, part})
		}
	}
	starts := make([]kgo.Offset, len(assigned))
	_ = c.parallel(len(assigned), func(i int) error {
		t := assigned[i]
		o := c.newOwned(t.topic, t.partition)
		starts[i] = c.startOffset(ctx, o)
		c.mu.Lock()
		c.parts[t] = o // visible to the poll loop only once recovered
		c.mu.Unlock()
		return nil
	})
	for i, t := range assigned {
		out[t.topic][t.partition] = starts[i]
	}
	return out, nil
}

// newOwned creates the state of a newly assigned partition.
func (c *Connector) newOwned(topic string, part int32) *owned {
	p := newPartition(partitionConfig{
		Connector: c.cfg.Name, Topic: topic, Partition: part, FS: c.cfg.FS, Format: c.cfg.Format,
		Partitioner: c.cfg.Partitioner, TopicsDir: c.cfg.TopicsDir(topic), LogsDir: c.cfg.LogsDir(topic),
		Pad: c.cfg.Pad, FlushSize: c.cfg.FlushSize, MaxFileBytes: c.cfg.MaxFileBytes, RotateInterval: c.cfg.RotateInterval,
		RotateSchedule: c.cfg.RotateSchedule, Location: c.cfg.Location, Owner: c.owner, Epoch: c.epoch,
		Faults: c.cfg.Faults, Catalog: c.cfg.Catalog, Compatibility: c.cfg.Compatibility, Now: c.cfg.Now,
		Logger: c.cfg.Logger.With("topic", topic, "partition", part), PruneEvery: defaultPruneEvery,
	})
	return &owned{p: p}
}

// startOffset recovers a partition and decides, explicitly and in the log,
// where its consumption starts.
func (c *Connector) startOffset(ctx context.Context, o *owned) kgo.Offset {
	log := o.p.cfg.Logger
	next, err := o.p.recover(ctx)
	c.Stats.Recoveries.Add(1)
	switch {
	case err != nil:
		// Keep the assignment but fetch nothing until recovery succeeds.
		c.breakPartition(o, err)
		return kgo.NewOffset().AtStart()
	case next >= 0:
		log.Info("start position from HDFS", "next_offset", next)
		return kgo.NewOffset().At(next).WithEpoch(-1)
	case c.cfg.StartAtEnd:
		log.Info("nothing committed in HDFS for this partition: starting at the log end (consumer.auto.offset.reset=latest)")
		return kgo.NewOffset().AtEnd()
	default:
		log.Info("nothing committed in HDFS for this partition: starting at the log start")
		return kgo.NewOffset().AtStart()
	}
}

// onRevoked commits what revoked partitions hold: we still own them until
// this returns, and committing beats re-reading.
func (c *Connector) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	c.cfg.Logger.Info("partitions revoked", "partitions", revoked)
	c.release(ctx, revoked, true)
}

// onLost drops lost partitions without committing: another member may
// already own them, and fencing would refuse our commit anyway.
func (c *Connector) onLost(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	c.cfg.Logger.Warn("partitions lost (session expired?); discarding uncommitted files", "partitions", lost)
	c.release(ctx, lost, false)
}

// release stops writing the given partitions, committing their open files first if commit is set.
// A partition paused while broken is resumed here: franz-go keeps the pause
// across reassignment, so a partition assigned back to us would never be
// fetched again (the fencing test caught this).
func (c *Connector) release(ctx context.Context, parts map[string][]int32, commit bool) {
	defer c.cl.ResumeFetchPartitions(parts)
	for topic, ps := range parts {
		for _, part := range ps {
			c.mu.Lock()
			o := c.parts[tp{topic, part}]
			delete(c.parts, tp{topic, part})
			c.mu.Unlock()
			if o == nil {
				continue
			}
			c.releaseOne(ctx, o, commit)
		}
	}
}

func (c *Connector) releaseOne(ctx context.Context, o *owned, commit bool) {
	p := o.p
	if p.w.Empty() {
		return
	}
	if commit && o.broken == nil && ctx.Err() == nil {
		p.enter(WritePartitionPaused)
		err := p.rotate(ctx, "partition released")
		if err == nil {
			c.afterWrite(o, true)
			return
		}
		p.cfg.Logger.Warn("could not commit on release; the records will be consumed again", "err", err)
		return // files closed or published: recovery of the next owner decides
	}
	if err := p.w.Discard(); err != nil {
		p.cfg.Logger.Warn("discard temp files", "err", err)
	}
	p.cfg.Logger.Info("uncommitted records discarded; the next owner consumes them again")
}
