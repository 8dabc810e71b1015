package sink

import (
	"context"
	"sort"
	"sync/atomic"
)

// enforceMemory rotates the partitions holding the most buffered bytes
// until the connector is within MemoryMax and its share of the process
// budget: files get smaller, the process does not grow.
func (c *Connector) enforceMemory(ctx context.Context) {
	parts := c.settled(c.parts.all())
	notePeak(&c.Stats.PeakOpenFiles, openFiles(parts))
	reportBuffers(parts) // before any rotation starts beside the poll loop
	if c.cfg.MemoryMax <= 0 && c.cfg.Budget == nil {
		return
	}
	victims, after := c.overCeiling(parts)
	beside := c.parts.len() > c.cfg.Parallelism
	if beside {
		// The victims' files stay in memory until their commits have
		// closed them: what the connector holds now includes them, and the
		// next poll counts them (committing) until they are settled.
		for _, o := range victims {
			after += o.p.buffered()
		}
	}
	notePeak(&c.Stats.PeakBuffered, after)
	c.cfg.Budget.Report(c, after)
	if beside {
		c.rotateBeside(ctx, victims)
	} else {
		c.rotateInline(ctx, victims)
	}
}

// rotateBeside rotates the victims off the poll loop (pipeline.go), as the
// timers do, when the connector owns more partitions than it has workers:
// a Parquet file is encoded as it closes, and an inline rotation kept the
// other workers and the next poll waiting for that one encoder. With as
// many workers as partitions, a victim is a large share of the stream, and
// its records held behind its commit made the ceiling rotate more files
// and the fetches wait (docs/benchmarks.md, "Memory rotations beside the
// poll loop"): those rotate inline. The files count (committing) until the
// commits are settled.
func (c *Connector) rotateBeside(ctx context.Context, victims []*owned) {
	for _, o := range victims {
		c.noteMemoryRotation(o)
		if due := o.p.memoryDue(); due != nil {
			c.startCommit(ctx, o, due)
		}
	}
	c.queueCommitting(victims) // settled, and their fetching resumed, by the next polls
}

// rotateInline rotates the victims, all at once, before the next poll.
func (c *Connector) rotateInline(ctx context.Context, victims []*owned) {
	_ = c.parallel(len(victims), func(i int) error {
		o := victims[i]
		c.noteMemoryRotation(o)
		if err := o.p.commitNow(ctx, memoryReason); err != nil {
			c.breakPartition(o, err)
		}
		return nil
	})
	reportBuffers(victims)
}

func (c *Connector) noteMemoryRotation(o *owned) {
	c.Stats.MemoryRotations.Add(1)
	o.obs.MemoryRotation()
}

// overCeiling picks the partitions of parts (settled) to rotate, and waits
// for running commits when rotating all it may would not be enough. after
// is what stays buffered once the victims have rotated.
func (c *Connector) overCeiling(parts []*owned) (victims []*owned, after int64) {
	held, total := buffered(parts)
	// Partitions a revocation took still hold their files until their
	// commits end, beside the poll loop: they count, and cannot be picked.
	total += c.releasing.Load()
	// So do the files of commits running off the poll loop, and the
	// records held behind them (pipeline.go).
	total += c.committing.Load() + c.holding.Load()
	limit := c.cfg.Budget.Allowance(c, total)
	if c.cfg.MemoryMax > 0 {
		limit = min(limit, c.cfg.MemoryMax)
	}
	victims, after = overBudget(parts, held, total, limit)
	return victims, c.awaitCommits(after, limit)
}

// runningCommits are the partitions the poll loop drives whose commit runs
// off it, largest files first. Poll loop only.
func (c *Connector) runningCommits() []*owned {
	var out []*owned
	for o := range c.queued {
		// A partition a callback took is the callback's: its commit field
		// is not the poll loop's to read.
		if c.parts.get(o.tp) == o && o.commit != nil {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].commit.held > out[j].commit.held })
	return out
}

// awaitCommits waits for running commits, largest first, while what stays
// buffered once the victims have rotated is above limit: the open files
// left to rotate could not bring it there (the rest is in commits and the
// records held behind them), and the next poll must not add to it. This is
// the back-pressure inline rotations gave. It returns what stays buffered.
func (c *Connector) awaitCommits(after, limit int64) int64 {
	if after <= limit {
		return after // the usual poll: no need to look at the running commits
	}
	for _, o := range c.runningCommits() {
		if after <= limit {
			break
		}
		after -= o.commit.held
		c.settle(o, true)
	}
	return after
}

// settled are the partitions of parts with no commit running off the poll
// loop (pipeline.go): the only ones whose files the poll loop may read.
func (c *Connector) settled(parts []*owned) []*owned {
	out := parts[:0]
	for _, o := range parts {
		if c.settle(o, false) {
			out = append(out, o)
		}
	}
	return out
}

// buffered is what each partition's open files hold, and their total.
func buffered(parts []*owned) (held map[*owned]int64, total int64) {
	held = make(map[*owned]int64, len(parts))
	for _, o := range parts {
		held[o] = o.p.buffered()
		total += held[o]
	}
	return held, total
}

// overBudget picks the fewest partitions, largest buffers first, whose
// rotation brings total (the sum of held) within limit. after is what
// stays buffered once they have rotated.
func overBudget(parts []*owned, held map[*owned]int64, total, limit int64) (victims []*owned, after int64) {
	after = total
	sort.Slice(parts, func(i, j int) bool { return held[parts[i]] > held[parts[j]] })
	for _, o := range parts {
		if after <= limit {
			break
		}
		if o.broken != nil || held[o] == 0 {
			continue
		}
		victims = append(victims, o)
		after -= held[o]
	}
	return victims, after
}

// notePeak raises peak to v if v is higher.
func notePeak(peak *atomic.Int64, v int64) {
	for {
		old := peak.Load()
		if v <= old || peak.CompareAndSwap(old, v) {
			return
		}
	}
}

func openFiles(parts []*owned) int64 {
	var n int64
	for _, o := range parts {
		n += int64(o.p.openFiles())
	}
	return n
}

// reportBuffers tells each partition's observer what its open files hold.
func reportBuffers(parts []*owned) {
	for _, o := range parts {
		o.obs.Buffered(o.p.buffered(), o.p.openFiles())
	}
}
