package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/hdfs-sink/hdfs-sink/sink/inspect"
)

// ResetError says why a partition cannot be reset to an offset.
type ResetError struct {
	Topic     string
	Partition int32
	To        int64
	Last      int64  // highest offset committed files of the partition hold
	Dir       string // where they are
}

func (e *ResetError) Error() string {
	return fmt.Sprintf("topic %s partition %d: cannot resume at offset %d: committed files in %s already hold offsets up to %d, "+
		"and files written from %d on would take their names; move those files out of topics.dir first "+
		"(they stay readable elsewhere), or resume at %d or later", e.Topic, e.Partition, e.To, e.Dir, e.Last, e.To, e.Last+1)
}

// Reset is what `hdfs-sink offsets reset` asks of one partition.
type Reset struct {
	Connector string // the connector whose partition it is; its name goes into the WAL
	Topic     string
	Partition int32
	Next      int64 // the offset to resume at
	// KeepCommitted resumes where the WAL head says (Next is ignored) and
	// keeps everything that goes with it, a refusal included: with
	// TakeOver, it hands a renamed connector's partitions over unchanged.
	KeepCommitted bool
	// TakeOver allows a WAL that names another connector: one that was
	// renamed and no longer runs (OverlapError says how to use it).
	TakeOver bool
}

// ResetOffset makes a partition resume at r.Next, wherever it runs: it
// publishes a claim that carries r.Next-1 as the committed offset, fenced
// and checked as every claim is, without a refusal and without a topic id
// (the next owner adopts the id of what it fetches). A running owner
// refused because Kafka's log no longer continues HDFS resumes there at
// its next check; one that is writing finds its next commit fenced,
// recovers, and resumes there. It refuses while committed files at or
// above r.Next remain, since new files would take their names
// (docs/operations.md, "Kafka offsets below HDFS").
func ResetOffset(ctx context.Context, s WriteSettings, r Reset, log *slog.Logger) error {
	if err := r.negative(); err != nil {
		return err
	}
	part := resetPartition(s, r, log)
	if r.KeepCommitted {
		return part.handOver(ctx, r)
	}
	return part.resetTo(ctx, r)
}

// CheckReset is ResetOffset's refusal for committed files (a *ResetError)
// without claiming anything: a reset of several partitions (the REST
// API's PATCH and DELETE of a connector's offsets) checks all of them
// before it changes any. ResetOffset checks again: files may be committed
// in between.
func CheckReset(ctx context.Context, s WriteSettings, r Reset) error {
	if err := r.negative(); err != nil || r.KeepCommitted {
		return err
	}
	return resetPartition(s, r, slog.New(slog.DiscardHandler)).refuseOverlap(ctx, r.Next)
}

func (r Reset) negative() error {
	if r.Next < 0 && !r.KeepCommitted {
		return fmt.Errorf("topic %s partition %d: offset %d is negative", r.Topic, r.Partition, r.Next)
	}
	return nil
}

// resetPartition is the partition a reset claims as, under an owner name
// that says so.
func resetPartition(s WriteSettings, r Reset, log *slog.Logger) *partition {
	host, _ := os.Hostname()
	return newPartition(partitionConfig{
		WriteSettings: s,
		Layout:        s.Layout(r.Topic),
		Partition:     r.Partition, Owner: fmt.Sprintf("%s:%d offsets reset", host, os.Getpid()), Epoch: newEpoch(), Logger: log,
		Connector: r.Connector,
	})
}

// resetTo publishes a claim that says r.Next-1 is committed.
func (p *partition) resetTo(ctx context.Context, r Reset) error {
	if err := p.refuseOverlap(ctx, r.Next); err != nil {
		return err
	}
	c, err := p.claimAs(ctx, nil, func(_ uint64, found standing) (standing, error) {
		if err := p.checkConnector(found, r.TakeOver); err != nil {
			return standing{}, err
		}
		return standing{committed: r.Next - 1, epoch: -1, connector: r.Connector}, nil
	})
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	p.cfg.Logger.Info("partition reset", "seq", c.seq, "was_next", c.found.committed+1, "next_offset", r.Next, "was_refused", c.found.refused)
	return p.undoIfOverlapped(ctx, r.Next)
}

// handOver publishes a claim that carries the head's standing unchanged
// under r.Connector's name.
func (p *partition) handOver(ctx context.Context, r Reset) error {
	c, err := p.claimAs(ctx, nil, func(_ uint64, found standing) (standing, error) {
		if err := p.checkConnector(found, r.TakeOver); err != nil {
			return standing{}, err
		}
		found.connector = r.Connector
		return found, nil
	})
	if err != nil {
		return fmt.Errorf("hand over: %w", err)
	}
	p.cfg.Logger.Info("partition handed over", "seq", c.seq, "from", c.found.connector, "to", r.Connector, "next_offset", c.found.committed+1)
	return nil
}

// checkConnector refuses a WAL that another connector wrote, unless the
// operator says it takes the partition over.
func (p *partition) checkConnector(found standing, takeOver bool) error {
	if takeOver || found.connector == "" || p.cfg.Connector == "" || found.connector == p.cfg.Connector {
		return nil
	}
	return &OverlapError{Topic: p.topic(), Partition: p.cfg.Partition, Dir: p.log.Dir(), Owner: found.connector, Connector: p.cfg.Connector}
}

// undoIfOverlapped covers a running owner that committed files at or
// above next between the check and our claim: the reset would have the
// partition write those offsets again, under the same names. It then
// claims once more with the committed offset those files reach, so the
// owner resumes after its own data, and reports the reset as refused.
func (p *partition) undoIfOverlapped(ctx context.Context, next int64) error {
	err := p.refuseOverlap(ctx, next)
	var re *ResetError
	if !errors.As(err, &re) {
		return err
	}
	_, herr := p.claimAs(ctx, nil, func(_ uint64, found standing) (standing, error) {
		return found.at(max(found.committed, re.Last)), nil
	})
	if herr != nil {
		return fmt.Errorf("%w; and undoing the reset failed: %v (run the reset again once the partition's owner is stopped)", err, herr)
	}
	return fmt.Errorf("%w (an owner committed while the reset ran; it was undone)", err)
}

// refuseOverlap fails when committed files of the partition hold next or
// a later offset.
func (p *partition) refuseOverlap(ctx context.Context, next int64) error {
	dir := p.cfg.Layout.Dir()
	ends, err := inspect.CommittedEnds(ctx, p.cfg.FS, p.cfg.Layout, dir)
	if err != nil {
		return err
	}
	if last, ok := ends[p.cfg.Partition]; ok && last >= next {
		return &ResetError{Topic: p.topic(), Partition: p.cfg.Partition, To: next, Last: last, Dir: dir}
	}
	return nil
}
