package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/hdfs-sink/hdfs-sink/layout"
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

// ResetOffset makes partition p of topic resume at offset next, wherever it
// runs: it publishes a claim that carries next-1 as the committed offset,
// fenced and checked as every claim is. A running owner stopped by a
// RewindError resumes there at its next recovery; one that is writing
// finds its next commit fenced, recovers, and resumes there. It refuses
// while committed files at or above next remain, since new files would
// take their names (docs/operations.md, "Kafka offsets below HDFS").
func ResetOffset(ctx context.Context, s WriteSettings, topic string, p int32, next int64, log *slog.Logger) error {
	if next < 0 {
		return fmt.Errorf("topic %s partition %d: offset %d is negative", topic, p, next)
	}
	host, _ := os.Hostname()
	part := newPartition(partitionConfig{
		WriteSettings: s,
		Layout:        layout.Topic{TopicsDir: s.TopicsDir(topic), LogsDir: s.LogsDir(topic), Name: topic},
		Partition:     p, Owner: fmt.Sprintf("%s:%d offsets reset", host, os.Getpid()), Epoch: newEpoch(), Logger: log,
	})
	return part.resetTo(ctx, next)
}

// resetTo publishes a claim that says next-1 is committed.
func (p *partition) resetTo(ctx context.Context, next int64) error {
	if err := p.refuseOverlap(next); err != nil {
		return err
	}
	c, err := p.claimAs(ctx, nil, func(int64) int64 { return next - 1 })
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	p.cfg.Logger.Info("partition reset", "seq", c.seq, "was_next", c.found+1, "next_offset", next)
	return p.undoIfOverlapped(ctx, next)
}

// undoIfOverlapped covers a running owner that committed files at or
// above next between the check and our claim: the reset would have the
// partition write those offsets again, under the same names. It then
// claims once more with the committed offset those files reach, so the
// owner resumes after its own data, and reports the reset as refused.
func (p *partition) undoIfOverlapped(ctx context.Context, next int64) error {
	err := p.refuseOverlap(next)
	var re *ResetError
	if !errors.As(err, &re) {
		return err
	}
	_, herr := p.claimAs(ctx, nil, func(found int64) int64 { return max(found, re.Last) })
	if herr != nil {
		return fmt.Errorf("%w; and undoing the reset failed: %v (run the reset again once the partition's owner is stopped)", err, herr)
	}
	return fmt.Errorf("%w (an owner committed while the reset ran; it was undone)", err)
}

// refuseOverlap fails when committed files of the partition hold next or
// a later offset.
func (p *partition) refuseOverlap(next int64) error {
	dir := p.cfg.Layout.Dir()
	ends, err := scanEnds(p.cfg.FS, p.cfg.Layout, dir)
	if err != nil {
		return err
	}
	if last, ok := ends[p.cfg.Partition]; ok && last >= next {
		return &ResetError{Topic: p.topic(), Partition: p.cfg.Partition, To: next, Last: last, Dir: dir}
	}
	return nil
}
