package sink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// Segment is one published WAL segment as an operator sees it.
type Segment struct {
	Seq       uint64       `json:"seq"`
	Path      string       `json:"path"`
	Published time.Time    `json:"published"` // its directory's modification time
	Entry     *entry.Entry `json:"entry,omitempty"`
	Err       string       `json:"error,omitempty"` // why it cannot be read
	err       error
}

// WALReport is what `hdfs-sink wal inspect` shows: every segment decoded,
// leftover staging directories, and what recovery would do now.
type WALReport struct {
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Dir       string    `json:"dir"`
	Segments  []Segment `json:"segments"`
	Staging   []string  `json:"staging,omitempty"`
	Recovery  []string  `json:"recovery"` // the steps recovery would take, in order
	Stuck     bool      `json:"stuck"`    // the head cannot be read: recovery fails
}

// InspectWAL reads partition p's WAL without changing anything, so it is
// safe next to a running owner (what it shows may be a moment old).
func InspectWAL(ctx context.Context, s WriteSettings, topic string, p int32) (WALReport, error) {
	part := inspector(s, topic, p)
	rep := WALReport{Topic: topic, Partition: p, Dir: part.log.Dir()}
	segs, err := part.readSegments(ctx)
	if err != nil {
		return rep, err
	}
	rep.Segments = segs
	if rep.Staging, err = part.stagingDirs(ctx); err != nil {
		return rep, err
	}
	rep.Recovery, rep.Stuck, err = part.recoveryPlan(ctx, segs)
	return rep, err
}

// inspector is a partition that only reads (no owner, no epoch).
func inspector(s WriteSettings, topic string, p int32) *partition {
	return newPartition(partitionConfig{
		WriteSettings: s, Partition: p, Epoch: "inspect", Logger: discardLogger,
		Layout: layout.Topic{TopicsDir: s.TopicsDir(topic), LogsDir: s.LogsDir(topic), Name: topic},
	})
}

// readSegments reads every published segment, oldest first.
func (p *partition) readSegments(ctx context.Context) ([]Segment, error) {
	seqs, err := p.log.Segments(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Segment, 0, len(seqs))
	for _, seq := range seqs {
		sg := Segment{Seq: seq, Path: p.log.SegmentPath(seq)}
		if fi, err := p.cfg.FS.Stat(ctx, path.Dir(sg.Path)); err == nil {
			sg.Published = fi.ModTime()
		}
		e, err := p.log.Read(ctx, seq)
		if err != nil {
			sg.Err, sg.err = err.Error(), err
		} else {
			sg.Entry = &e
		}
		out = append(out, sg)
	}
	return out, nil
}

// stagingDirs lists publishers' staging directories left in the WAL.
func (p *partition) stagingDirs(ctx context.Context) ([]string, error) {
	infos, err := p.cfg.FS.ReadDir(ctx, p.log.Dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fi := range infos {
		if len(fi.Name()) > 9 && fi.Name()[:9] == ".staging-" {
			out = append(out, path.Join(p.log.Dir(), fi.Name()))
		}
	}
	return out, nil
}

// recoveryPlan says what recover would do from these segments: the same
// decisions as applyHead, claim and removeOrphans, without acting.
func (p *partition) recoveryPlan(ctx context.Context, segs []Segment) (steps []string, stuck bool, err error) {
	if len(segs) == 0 {
		return p.planWithoutWAL(ctx)
	}
	head := segs[len(segs)-1]
	if head.err != nil {
		return []string{fmt.Sprintf("read the head, segment %d: FAILS (%s); recovery stops there and retries with backoff, writing nothing for this partition, until `hdfs-sink wal repair`", head.Seq, head.Err)}, true, nil
	}
	e := head.Entry
	steps = append(steps, fmt.Sprintf("read the head, segment %d: a %s by %s (epoch %s) with committed offset %d", head.Seq, e.Kind, e.Owner, e.Epoch, e.CommittedOffset))
	if e.Kind == entry.KindCommit {
		steps = append(steps, p.planRollForward(ctx, e.Files)...)
	}
	claim := head.Seq + 1
	steps = append(steps,
		fmt.Sprintf("publish a claim at segment %d carrying committed offset %d (fences every earlier owner)", claim, e.CommittedOffset),
		p.planCleanup(ctx, claim),
		fmt.Sprintf("prune segments below %d", claim))
	if e.Refused != "" {
		steps = append(steps, "write nothing: the partition is refused until `hdfs-sink offsets reset` ("+e.Refused+")")
		return steps, true, nil
	}
	return append(steps, resumeStep(e.CommittedOffset)), false, nil
}

// planRollForward is rollForward's decision for each move.
func (p *partition) planRollForward(ctx context.Context, moves []entry.FileMove) []string {
	var steps []string
	for _, m := range moves {
		_, ferr := p.cfg.FS.Stat(ctx, m.Final)
		_, terr := p.cfg.FS.Stat(ctx, m.Temp)
		switch {
		case ferr == nil:
			steps = append(steps, fmt.Sprintf("  %s is committed (offsets %d-%d): skip", m.Final, m.StartOffset, m.EndOffset))
		case terr == nil:
			steps = append(steps, fmt.Sprintf("  roll forward: rename %s -> %s (offsets %d-%d)", m.Temp, m.Final, m.StartOffset, m.EndOffset))
		default:
			steps = append(steps, fmt.Sprintf("  %s and its temp file are both missing (offsets %d-%d): logged as moved out of topics.dir, skipped", m.Final, m.StartOffset, m.EndOffset))
		}
	}
	return steps
}

// planCleanup names what removeOrphans would delete under claim.
func (p *partition) planCleanup(ctx context.Context, claim uint64) string {
	root := p.cfg.Layout.TempRoot(p.cfg.Partition)
	infos, _ := p.cfg.FS.ReadDir(ctx, root)
	var gone []string
	for _, fi := range infos {
		if seq, ok := layout.ParseClaimDir(fi.Name()); ok && fi.IsDir() && seq >= claim {
			continue
		}
		gone = append(gone, fi.Name())
	}
	if len(gone) == 0 {
		return fmt.Sprintf("remove orphaned temp files in %s: none", root)
	}
	return fmt.Sprintf("remove orphaned temp files in %s: %v, and WAL staging directories", root, gone)
}

// planWithoutWAL is recovery's file-name scan.
func (p *partition) planWithoutWAL(ctx context.Context) ([]string, bool, error) {
	dir := p.cfg.Layout.Dir()
	if _, ok := p.cfg.Partitioner.(partitioner.Default); ok {
		dir = p.cfg.Layout.PartitionDir(p.cfg.Partition)
	}
	ends, err := scanEnds(ctx, p.cfg.FS, p.cfg.Layout, dir)
	if err != nil {
		return nil, false, err
	}
	last, ok := ends[p.cfg.Partition]
	if !ok {
		last = -1
	}
	return []string{
		fmt.Sprintf("no WAL: take the committed offset from the file names in %s: %d", dir, last),
		"publish a claim at segment 1 carrying it",
		resumeStep(last),
	}, false, nil
}

func resumeStep(committed int64) string {
	if committed < 0 {
		return "nothing committed: start where consumer.auto.offset.reset says"
	}
	return fmt.Sprintf("resume consuming at offset %d", committed+1)
}

// newestReadable is the newest segment below the head that reads, if any.
func newestReadable(segs []Segment) *Segment {
	for i := len(segs) - 2; i >= 0; i-- {
		if segs[i].err == nil {
			return &segs[i]
		}
	}
	return nil
}

// errUnknownHead wraps the reason a repair cannot choose an offset itself.
var errUnknownHead = errors.New("the committed offset cannot be told from what is left")

// isCorrupt reports whether err is damage a repair is for.
func isCorrupt(err error) bool {
	var ce *wal.CorruptionError
	return errors.As(err, &ce)
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
