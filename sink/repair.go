package sink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"time"

	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/sink/inspect"
	"github.com/hdfs-sink/hdfs-sink/wal"
)

var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// InspectWAL reads partition p's WAL without changing anything, so it is
// safe next to a running owner (what it shows may be a moment old).
func InspectWAL(ctx context.Context, s WriteSettings, topic string, p int32) (inspect.Report, error) {
	return inspect.WAL(ctx, inspected(s, topic, p))
}

// inspected is partition p as inspect reads it.
func inspected(s WriteSettings, topic string, p int32) inspect.Partition {
	_, dense := s.Partitioner.(partitioner.Default)
	return inspect.Partition{FS: s.FS, Partition: p, Dense: dense,
		Layout: s.Layout(topic)}
}

// inspector is a partition that only reads (no owner, no epoch).
func inspector(s WriteSettings, topic string, p int32) *partition {
	return newPartition(partitionConfig{
		WriteSettings: s, Partition: p, Epoch: "inspect", Logger: discardLogger,
		Layout: s.Layout(topic),
	})
}

// RepairPlan is what `hdfs-sink wal repair` would do for one partition, and
// why. Recovery reads only the newest segment, so a repair never edits the
// damaged one: it publishes a claim above it carrying a committed offset
// it can justify, fenced and checked like every claim. From then on
// recovery reads the claim, and the damaged segment is below the head,
// where nobody reads it (the next recovery prunes it; the repair keeps a
// copy first).
type RepairPlan struct {
	Topic     string          `json:"topic"`
	Partition int32           `json:"partition"`
	Needed    bool            `json:"needed"` // false: the head reads, recovery needs nothing
	Head      inspect.Segment `json:"head"`
	Copy      string          `json:"copy,omitempty"`    // where the damaged segment's bytes are kept
	Committed int64           `json:"committed_offset"`  // what the repair claim carries
	Why       []string        `json:"why"`               // the reasoning, for the operator
	Refused   string          `json:"refused,omitempty"` // non-empty: cannot repair without --to
	refused   error
}

// errUnknownHead wraps the reason a repair cannot choose an offset itself.
var errUnknownHead = errors.New("the committed offset cannot be told from what is left")

// isCorrupt reports whether err is damage a repair is for.
func isCorrupt(err error) bool {
	var ce *wal.CorruptionError
	return errors.As(err, &ce)
}

// PlanRepair decides a repair of partition p without changing anything.
// to >= 0 is the operator's choice of the next offset (`--to`); it is
// refused, as offsets reset is, while committed files at or above it exist.
func PlanRepair(ctx context.Context, s WriteSettings, topic string, p int32, to int64) (RepairPlan, error) {
	part := inspector(s, topic, p)
	plan := RepairPlan{Topic: topic, Partition: p, Committed: -1}
	insp := inspected(s, topic, p)
	segs, err := insp.Segments(ctx)
	if err != nil {
		return plan, err
	}
	if len(segs) == 0 {
		plan.Why = []string{"no WAL: recovery takes the committed offset from the file names; nothing to repair"}
		return plan, nil
	}
	plan.Head = segs[len(segs)-1]
	if plan.Head.ReadErr() == nil {
		plan.Why = []string{fmt.Sprintf("the head, segment %d, reads: recovery applies it; nothing to repair", plan.Head.Seq)}
		return plan, nil
	}
	if !isCorrupt(plan.Head.ReadErr()) {
		return plan, plan.Head.ReadErr() // the store failed, not the segment
	}
	plan.Needed = true
	plan.Copy = path.Join(part.log.Dir(), fmt.Sprintf(".corrupt-%020d", plan.Head.Seq))
	plan.Why = append(plan.Why, fmt.Sprintf("the head, segment %d, cannot be read: %s", plan.Head.Seq, plan.Head.Err))
	if to >= 0 {
		return plan, part.planRepairTo(ctx, &plan, to)
	}
	return plan, part.planRepairFromEvidence(ctx, &plan, segs)
}

// planRepairTo is a repair at the operator's offset.
func (p *partition) planRepairTo(ctx context.Context, plan *RepairPlan, to int64) error {
	plan.Committed = to - 1
	plan.Why = append(plan.Why, fmt.Sprintf("--to %d: the partition resumes there", to))
	if err := p.refuseOverlap(ctx, to); err != nil {
		var re *ResetError
		if !errors.As(err, &re) {
			return err
		}
		plan.refuse(err)
	}
	return nil
}

// planRepairFromEvidence chooses the committed offset from the segments
// below the head and the committed file names. The segment below the head
// was applied in full before the head was published (design.md §4,
// invariant A), so its committed offset is a floor; files past it can
// only be the damaged head's, which may have been applied in part.
func (p *partition) planRepairFromEvidence(ctx context.Context, plan *RepairPlan, segs []inspect.Segment) error {
	floor := int64(-1)
	if good := inspect.NewestReadable(segs); good != nil {
		floor = good.Entry.CommittedOffset
		plan.Why = append(plan.Why, fmt.Sprintf("segment %d, the newest that reads, was applied in full: offsets up to %d are committed", good.Seq, floor))
	} else {
		plan.Why = append(plan.Why, "no older segment reads (they were pruned or are damaged too)")
	}
	last, dir, err := p.lastNamed(ctx)
	if err != nil {
		return err
	}
	plan.Why = append(plan.Why, fmt.Sprintf("committed files in %s reach offset %d", dir, last))
	_, dense := p.cfg.Partitioner.(partitioner.Default)
	switch {
	case dense:
		plan.Committed = max(floor, last)
		plan.Why = append(plan.Why, "the default partitioner commits one file at a time: a renamed file of the damaged commit is complete, one not renamed is re-read from Kafka")
	case last <= floor:
		plan.Committed = floor
		plan.Why = append(plan.Why, "no file lies past the floor: the damaged commit renamed nothing; its offsets are re-read from Kafka")
	default:
		plan.refuse(fmt.Errorf("%w: this partitioner commits several directories at once, and files past offset %d may be part of the damaged commit, applied in part; "+
			"move the files of this partition holding offsets above %d out of topics.dir and repair with --to %d, or choose an offset with --to", errUnknownHead, floor, floor, floor+1))
	}
	return nil
}

func (plan *RepairPlan) refuse(err error) {
	plan.refused, plan.Refused = err, err.Error()
}

// lastNamed is the highest offset the partition's committed names hold.
func (p *partition) lastNamed(ctx context.Context) (int64, string, error) {
	dir := p.cfg.Layout.Dir()
	if _, ok := p.cfg.Partitioner.(partitioner.Default); ok {
		dir = p.cfg.Layout.PartitionDir(p.cfg.Partition)
	}
	ends, err := inspect.CommittedEnds(ctx, p.cfg.FS, p.cfg.Layout, dir)
	if err != nil {
		return 0, dir, err
	}
	if last, ok := ends[p.cfg.Partition]; ok {
		return last, dir, nil
	}
	return -1, dir, nil
}

// Repair applies plan: it keeps a copy of the damaged head, then publishes
// a claim right above it with the plan's committed offset. It fails without
// changing the WAL when the head is no longer the one planned (another
// owner published meanwhile). After claiming it looks again at the names,
// like offsets reset: an owner that renamed a file between the plan and the
// claim has the committed offset raised to cover it.
func Repair(ctx context.Context, s WriteSettings, plan RepairPlan, log *slog.Logger) error {
	if !plan.Needed {
		return nil
	}
	if plan.refused != nil {
		return plan.refused
	}
	host, _ := os.Hostname()
	part := inspector(s, plan.Topic, plan.Partition)
	part.cfg.Owner, part.cfg.Epoch, part.cfg.Logger = fmt.Sprintf("%s:%d wal repair", host, os.Getpid()), newEpoch(), log
	if err := part.checkHeadUnchanged(ctx, plan.Head.Seq); err != nil {
		return err
	}
	if err := part.keepCopy(ctx, plan.Head.Path, plan.Copy); err != nil {
		return fmt.Errorf("keep a copy of %s: %w (nothing was changed)", plan.Head.Path, err)
	}
	seq := plan.Head.Seq + 1
	// The damaged head's topic id, leader epoch and schema are unknown: the
	// next owner adopts what it fetches.
	if _, err := part.publishClaim(ctx, seq, standing{committed: plan.Committed, epoch: -1}); err != nil {
		return fmt.Errorf("publish the repair claim at segment %d: %w", seq, err)
	}
	log.Info("WAL repaired", "topic", plan.Topic, "partition", plan.Partition, "claim", seq, "committed_offset", plan.Committed, "copy", plan.Copy)
	return part.coverLateRenames(ctx, plan.Committed)
}

// checkHeadUnchanged fails unless seq is still the newest segment.
func (p *partition) checkHeadUnchanged(ctx context.Context, seq uint64) error {
	head, err := p.newestSegment(ctx)
	if err != nil {
		return err
	}
	if head != seq {
		return fmt.Errorf("the WAL changed since the plan: the head is segment %d, not %d; inspect it again", head, seq)
	}
	return nil
}

// keepCopy copies the damaged segment's bytes (what can be read of them)
// beside the WAL, under a name Segments, Prune and RemoveStaging ignore.
func (p *partition) keepCopy(ctx context.Context, src, dst string) error {
	data, err := p.readAll(ctx, src)
	if err != nil {
		return err
	}
	f, err := p.cfg.FS.Create(ctx, path.Join(dst, fmt.Sprintf("segment-%d", time.Now().UnixMilli())))
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readAll reads a file; a missing one (a segment directory without its
// file) is empty.
func (p *partition) readAll(ctx context.Context, name string) ([]byte, error) {
	r, err := p.cfg.FS.Open(ctx, name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, wal.MaxFrameSize*2))
}

// coverLateRenames claims again when committed files past committed
// appeared while the repair ran, so that nobody writes their offsets again.
func (p *partition) coverLateRenames(ctx context.Context, committed int64) error {
	last, _, err := p.lastNamed(ctx)
	if err != nil || last <= committed {
		return err
	}
	c, err := p.claimAs(ctx, nil, func(_ uint64, found standing) (standing, error) { return found.at(max(found.committed, last)), nil })
	if err != nil {
		return fmt.Errorf("files up to offset %d were committed while the repair ran, and raising the committed offset to them failed: %w", last, err)
	}
	p.cfg.Logger.Warn("files were committed while the repair ran; the committed offset covers them", "claim", c.seq, "committed_offset", c.carried.committed)
	return nil
}

// CommittedOffset is the offset recovery would resume partition p after:
// the WAL head's committed offset, or without a WAL the file names' last
// (-1: nothing committed). It only reads.
func CommittedOffset(ctx context.Context, s WriteSettings, topic string, p int32) (int64, error) {
	part := inspector(s, topic, p)
	seqs, err := part.log.Segments(ctx)
	if err != nil {
		return 0, err
	}
	if len(seqs) == 0 {
		return part.scanCommitted(ctx, nil)
	}
	e, err := part.log.Read(ctx, seqs[len(seqs)-1])
	if err != nil {
		return 0, fmt.Errorf("read WAL segment %d of %s/%d: %w", seqs[len(seqs)-1], topic, p, err)
	}
	return e.CommittedOffset, nil
}
