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
	defer reportBuffers(parts)
	if c.cfg.MemoryMax <= 0 && c.cfg.Budget == nil {
		return
	}
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
	victims, after := overBudget(parts, held, total, limit)
	notePeak(&c.Stats.PeakBuffered, after)
	c.cfg.Budget.Report(c, after)
	_ = c.parallel(len(victims), func(i int) error {
		o := victims[i]
		err := o.p.commitNow(ctx, "memory ceiling (hdfs.sink.memory.max.bytes / run --memory-max-bytes)")
		c.Stats.MemoryRotations.Add(1)
		o.obs.MemoryRotation()
		if err != nil {
			c.breakPartition(o, err)
		}
		return nil
	})
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
