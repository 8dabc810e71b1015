package sink

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Commits off the poll loop (docs/design.md §4, "Commits off the poll
// loop"). A commit that writing a partition's records starts (flush.size,
// a file's size, a schema change, a timer seen by a batch) or a timer of
// an idle partition starts runs on a goroutine of its own, and the poll goes on to the next fetch while it
// does: with 64 partitions every poll used to wait for the slowest commit
// its records had started (docs/benchmarks.md, "Commit parallelism with
// 64 partitions").
//
// One rule keeps the write path what it was: while a partition's commit
// runs, nothing else touches its state machine. Its driver (the poll loop,
// or the group callback that took it) holds what the partition was not
// given yet, in order, and waits for the commit (settle) before anything
// else: the partition sees the same calls in the same order as when it
// committed inline, only later.

// commitJob is one partition's commit running off the poll loop.
type commitJob struct {
	done chan struct{} // closed when the commit has returned
	err  error         // its error; read only after done
	// held is what the partition's files held when it began: the memory
	// ceiling counts it (Connector.committing) until the commit is settled.
	held int64
}

func (j *commitJob) finished() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// queuedBatch is one partition's fetched records that are not all written:
// records fetched while its commit ran, or the rest of the batch whose
// record found the commit due (that record included).
type queuedBatch struct {
	topicID [16]byte
	fp      kgo.FetchPartition
	next    int  // the first record not yet written
	begun   bool // beginBatch has seen the batch
	// held is what the records from heldFrom on take (keys and values),
	// worked out once per position: noteHeld runs after every poll, and a
	// batch often waits several polls for its commit.
	held     int64
	heldFrom int // -1 until held is worked out
}

func (b *queuedBatch) written() bool { return b.next == len(b.fp.Records) }

// heldBytes is what b's records not yet written take.
func (b *queuedBatch) heldBytes() int64 {
	if b.heldFrom != b.next {
		b.held, b.heldFrom = 0, b.next
		for _, r := range b.fp.Records[b.next:] {
			b.held += int64(len(r.Key) + len(r.Value))
		}
	}
	return b.held
}

// commitsInFlight is how many commits off the poll loop the connector
// runs at once, per partition worker (Parallelism). More than the workers:
// a worker that started one goes on to the next partition. Bounded: each
// is a few NameNode round trips, and the NameNode, not the client, sets
// the rate (docs/benchmarks.md, "The machine's commit limit").
const commitsInFlight = 2

// startCommit runs the commit o's partition found due on a goroutine of
// its own. With every slot taken, the worker waits for one: the poll loop
// slows to what the store commits. Fetching goes on (a pause here made
// franz-go drop and fetch again what it had buffered for the partition);
// a second batch pauses it (enqueue).
func (c *Connector) startCommit(store context.Context, o *owned, due *commitDue) {
	job := &commitJob{done: make(chan struct{}), held: o.p.buffered()}
	o.commit = job
	c.committing.Add(job.held)
	c.commitSlots <- struct{}{}
	go func() {
		defer c.gate.wake() // the partition may have records waiting: poll again now
		defer close(job.done)
		defer func() { <-c.commitSlots }()
		defer c.catchPanic(&job.err)
		job.err = o.p.commitDetached(store, due.reason)
	}()
}

// settle ends o's commit off the poll loop, if any, waiting for it when
// wait is set, and reports whether o has none left running (so that its
// driver may touch it). A commit that failed breaks the partition, as it
// did inline; one that succeeded resumes fetching.
func (c *Connector) settle(o *owned, wait bool) bool {
	job := o.commit
	if job == nil {
		return true
	}
	if !wait && !job.finished() {
		return false
	}
	<-job.done
	o.commit = nil
	c.committing.Add(-job.held)
	if job.err != nil {
		c.breakPartition(o, job.err)
		return true
	}
	if o.paused {
		o.paused = false
		c.cl.ResumeFetchPartitions(o.asMap())
	}
	return true
}

// idle settles o without waiting and reports whether it writes and has no
// commit running: only then may the poll loop's timers and ceiling touch it.
func (c *Connector) idle(o *owned) bool {
	return o.broken == nil && c.settle(o, false) && o.broken == nil
}

// enqueue hands one fetched partition's records to o, after whatever it
// holds already. Poll loop only.
func (c *Connector) enqueue(o *owned, topicID [16]byte, fp kgo.FetchPartition) {
	o.pending = append(o.pending, queuedBatch{topicID: topicID, fp: fp, heldFrom: -1})
	c.queued[o] = struct{}{}
	if o.commit != nil && !o.paused {
		// A second batch while the commit runs: fetch no more of it until
		// the commit is settled, so what it holds stays one batch or two.
		o.paused = true
		c.cl.PauseFetchPartitions(o.asMap())
	}
}

// writable settles what it can of the queued partitions and returns those
// with records to write and no commit running. A partition a group
// callback took is forgotten untouched: its taker drives it now.
func (c *Connector) writable() []*owned {
	var out []*owned
	for o := range c.queued {
		if c.parts.get(o.tp) != o {
			delete(c.queued, o)
			continue
		}
		if !c.settle(o, false) {
			continue // still committing: its records wait, the poll does not
		}
		if o.broken != nil || len(o.pending) == 0 {
			o.pending = nil
			delete(c.queued, o)
			continue
		}
		out = append(out, o)
	}
	return out
}

// drain writes o's queued records in order until they are written, its
// partition breaks, or a commit is due (which then runs off the poll
// loop, and the rest waits for it). Its error stops the connector.
func (c *Connector) drain(ctx, store context.Context, o *owned) error {
	for len(o.pending) > 0 && o.commit == nil && o.broken == nil {
		b := &o.pending[0]
		if err := c.writeRecords(ctx, store, o, b); err != nil {
			return err
		}
		if o.broken == nil && b.written() {
			o.pending = o.pending[1:]
		}
	}
	if len(o.pending) == 0 || o.broken != nil {
		o.pending = nil // nothing held, not even the slice's array
	}
	return nil
}

// forgetWritten drops from the queue the partitions that hold nothing and
// run no commit; one still committing stays, so that a later poll
// settles it and resumes its fetching.
func (c *Connector) forgetWritten(parts []*owned) {
	for _, o := range parts {
		if o.commit == nil && len(o.pending) == 0 {
			delete(c.queued, o)
		}
	}
}

// queueCommitting queues those of parts whose commit runs off the poll
// loop, so that the next polls settle them and resume their fetching.
// Poll loop only.
func (c *Connector) queueCommitting(parts []*owned) {
	for _, o := range parts {
		if o.commit != nil {
			c.queued[o] = struct{}{}
		}
	}
}

// noteHeld counts what the records held behind commits take (keys and
// values not yet written): the memory ceiling counts them with the open
// files (enforceMemory), since the fetch share of the memory plan is for
// the fetches franz-go buffers and the one being written, not for records
// kept from earlier polls. Poll loop only.
func (c *Connector) noteHeld() {
	var n int64
	for o := range c.queued {
		if c.parts.get(o.tp) != o {
			continue // a callback took it: its pending is the callback's
		}
		for i := range o.pending {
			n += o.pending[i].heldBytes()
		}
	}
	c.holding.Store(n)
}

// settleAll waits for every commit off the poll loop (before a pause:
// a paused connector commits nothing). Poll loop only.
func (c *Connector) settleAll() {
	for o := range c.queued {
		if c.parts.get(o.tp) == o {
			c.settle(o, true)
		}
	}
}

// writeHeld writes, before a stop's commits, the records partitions hold
// behind their commits: the polls that fetched them had begun writing
// them, and a stop commits what its polls wrote (D6), as it did when
// commits ran inline. It ends when nothing is held, or on a fatal error
// or the end of store (what is still held is then read again by the next
// owner, after what HDFS holds). Poll loop only, holding the gate.
func (c *Connector) writeHeld(store context.Context) {
	for len(c.queued) > 0 && store.Err() == nil {
		c.settleAll()
		// Under store alone: the stop has ended ctx, and a registry lookup
		// under it would fail, breaking the partition instead of writing.
		if err := c.process(store, store, nil); err != nil {
			c.cfg.Logger.Warn("records held behind commits not written before the stop; the next owner reads them", "err", err)
			return
		}
	}
}

// asCommitDue is err as a commit the partition found due, or nil. The
// batch loop asks for every record: a nil err returns before errors.As,
// whose target would escape to the heap, an allocation per record (4 % of
// the sink's CPU on 100 B records, issue 25).
func asCommitDue(err error) *commitDue {
	if err == nil {
		return nil
	}
	var due *commitDue
	if errors.As(err, &due) {
		return due
	}
	return nil
}
