package sink

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// compactionOwner ends the Owner of a compaction's claim: a writer fenced
// by it knows nobody will commit after it (ErrFencedByCompaction).
const compactionOwner = " compaction"

// FenceForCompaction publishes a claim over partition p of topic that
// carries the head's standing unchanged (the committed offset, topic id,
// leader epoch, schema, refusal and connector), after rolling the head
// forward as every claim does. A compaction calls it for every partition
// once its generation is published (docs/design.md §12): every owner
// that claimed before finds its next commit fenced, recovers, and starts
// a writer that looks for the generation afresh; a commit it published
// before the fence has been rolled forward by the fence itself. A WAL of
// another connector is refused (OverlapError) before anything is
// published.
func FenceForCompaction(ctx context.Context, s WriteSettings, connector, topic string, p int32, log *slog.Logger) (uint64, error) {
	if log == nil {
		log = discardLogger
	}
	host, _ := os.Hostname()
	part := newPartition(partitionConfig{
		WriteSettings: s,
		Layout:        s.Layout(topic),
		Partition:     p, Owner: fmt.Sprintf("%s:%d%s", host, os.Getpid(), compactionOwner), Epoch: newEpoch(), Logger: log,
		Connector: connector,
	})
	c, err := part.claimAs(ctx, nil, func(_ uint64, found standing) (standing, error) {
		if err := part.checkConnector(found, false); err != nil {
			return standing{}, err
		}
		return found, nil
	})
	if err != nil {
		return 0, fmt.Errorf("fence topic %s partition %d for compaction: %w", topic, p, err)
	}
	return c.seq, nil
}

// fencedBy is the error of a commit fenced by WAL segment seq (the one
// that took our number, or the newer head): ErrFenced, and
// ErrFencedByCompaction too when seq is a compaction's claim. A segment
// that cannot be read is an ordinary fence.
func (p *partition) fencedBy(ctx context.Context, seq uint64, why string) error {
	if e, err := p.log.Read(ctx, seq); err == nil && e.Kind == entry.KindClaim && strings.HasSuffix(e.Owner, compactionOwner) {
		return fmt.Errorf("%w %w (%s)", ErrFenced, ErrFencedByCompaction, why)
	}
	return fmt.Errorf("%w (%s)", ErrFenced, why)
}
