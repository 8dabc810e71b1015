// Package inspect reads what one partition's WAL and committed files say,
// without changing anything, so it is safe next to a running owner: every
// WAL segment decoded, the staging directories publishers left, the
// committed offsets the file names give (the scan recovery makes when a
// partition has no WAL), and what recovery would do now, in words
// (`hdfs-sink wal inspect`). It decides nothing: recovery, repair and
// offset resets are sink's.
package inspect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
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

// ReadErr is why the segment cannot be read; nil when it reads.
func (s Segment) ReadErr() error { return s.err }

// Report is what `hdfs-sink wal inspect` shows: every segment decoded,
// leftover staging directories, and what recovery would do now.
type Report struct {
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Dir       string    `json:"dir"`
	Segments  []Segment `json:"segments"`
	Staging   []string  `json:"staging,omitempty"`
	Recovery  []string  `json:"recovery"` // the steps recovery would take, in order
	Stuck     bool      `json:"stuck"`    // the head cannot be read: recovery fails
}

// Partition is one partition's place in the store.
type Partition struct {
	FS        storage.FS
	Layout    layout.Topic
	Partition int32
	// Dense says the default partitioner wrote it: its files lie in the
	// partition's own directory, one commit's files in one directory.
	Dense bool
	log   *wal.Log
}

func (p *Partition) wal() *wal.Log {
	if p.log == nil {
		p.log = wal.Open(p.FS, p.Layout.WALDir(p.Partition))
	}
	return p.log
}

// WAL reads the partition's WAL without changing anything (what it shows
// may be a moment old).
func WAL(ctx context.Context, p Partition) (Report, error) {
	part := &p
	rep := Report{Topic: p.Layout.Name, Partition: p.Partition, Dir: part.wal().Dir()}
	segs, err := part.Segments(ctx)
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

// Segments reads every published segment, oldest first.
func (p *Partition) Segments(ctx context.Context) ([]Segment, error) {
	seqs, err := p.wal().Segments(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Segment, 0, len(seqs))
	for _, seq := range seqs {
		sg := Segment{Seq: seq, Path: p.wal().SegmentPath(seq)}
		if fi, err := p.FS.Stat(ctx, path.Dir(sg.Path)); err == nil {
			sg.Published = fi.ModTime()
		}
		e, err := p.wal().Read(ctx, seq)
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
func (p *Partition) stagingDirs(ctx context.Context) ([]string, error) {
	infos, err := p.FS.ReadDir(ctx, p.wal().Dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fi := range infos {
		if len(fi.Name()) > 9 && fi.Name()[:9] == ".staging-" {
			out = append(out, path.Join(p.wal().Dir(), fi.Name()))
		}
	}
	return out, nil
}

// recoveryPlan says what recover would do from these segments: the same
// decisions as applyHead, claim and removeOrphans, without acting.
func (p *Partition) recoveryPlan(ctx context.Context, segs []Segment) (steps []string, stuck bool, err error) {
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
func (p *Partition) planRollForward(ctx context.Context, moves []entry.FileMove) []string {
	var steps []string
	for _, m := range moves {
		_, ferr := p.FS.Stat(ctx, m.Final)
		_, terr := p.FS.Stat(ctx, m.Temp)
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
func (p *Partition) planCleanup(ctx context.Context, claim uint64) string {
	root := p.Layout.TempRoot(p.Partition)
	infos, _ := p.FS.ReadDir(ctx, root)
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
func (p *Partition) planWithoutWAL(ctx context.Context) ([]string, bool, error) {
	dir := p.Layout.Dir()
	if p.Dense {
		dir = p.Layout.PartitionDir(p.Partition)
	}
	ends, err := CommittedEnds(ctx, p.FS, p.Layout, dir)
	if err != nil {
		return nil, false, err
	}
	last, ok := ends[p.Partition]
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

// NewestReadable is the newest segment below the head that reads, if any.
func NewestReadable(segs []Segment) *Segment {
	for i := len(segs) - 2; i >= 0; i-- {
		if segs[i].err == nil {
			return &segs[i]
		}
	}
	return nil
}

// CommittedEnds walks root for committed files of the topic and returns, per
// Kafka partition, the highest offset their names give.
func CommittedEnds(ctx context.Context, fsys storage.FS, t layout.Topic, root string) (map[int32]int64, error) {
	ends := map[int32]int64{}
	err := storage.WalkFiles(ctx, fsys, root, layout.IsTempDir, func(name string) error {
		r, ok := layout.ParseFinalName(name)
		if ok && r.Topic == t.Name {
			if last, seen := ends[r.Partition]; !seen || r.End > last {
				ends[r.Partition] = r.End
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s for committed files: %w", root, err)
	}
	return ends, nil
}
