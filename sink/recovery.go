package sink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/sink/inspect"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
	"github.com/hdfs-sink/hdfs-sink/writer"
)

// resume recovers the partition and returns the offset to fetch next: the
// one after the last commit, else the first offset fetched since the last
// recovery (so a failed first file is fetched again), else -1: HDFS holds
// nothing of this partition and the start policy decides (seekStart then
// says whether the fetch position must be moved there). scans, when not
// nil, shares one walk of a topic's files between the partitions recovered
// together (non-default partitioners without a WAL).
func (p *partition) resume(ctx context.Context, scans *topicScans) (int64, error) {
	if err := p.cfg.Layout.CheckNames(p.cfg.Partition, p.cfg.Pad, p.cfg.Format.Extension()); err != nil {
		return 0, err // refused before anything is published
	}
	next, err := p.recover(ctx, scans)
	p.cfg.Observer.Recovered(next, err)
	if err != nil {
		return 0, err
	}
	if next < 0 {
		next = p.firstSeen
	}
	p.firstSeen, p.expect = -1, next
	return next, nil
}

// recover runs the recovery machine: finish the last commit, claim the
// partition (fencing every earlier owner), remove orphans, and return the
// offset to fetch next; -1 means HDFS holds nothing of this partition. A
// partition whose WAL holds a refusal is claimed and cleaned up like any
// other, then reported refused (RefusedError): nothing is fetched.
func (p *partition) recover(ctx context.Context, scans *topicScans) (int64, error) {
	p.enter(RecoveryStarted)
	if err := p.w.Discard(ctx); err != nil {
		p.cfg.Logger.Warn("discard open temp files", "err", err)
	}
	// The open files are gone: the committed files' schema is current again
	// (restored lazily from the claim, restoreCurrent), never a schema that
	// was only decided on (audit F8).
	p.current = nil
	p.batchAt = time.Time{} // a batch that failed midway ends here
	// Nothing of this partition is fetched until recovery returns an offset.
	p.enter(RecoveryPartitionPaused)
	if err := p.claim(ctx, scans); err != nil {
		return 0, err
	}
	p.w = p.newWriter(p.cfg.Layout.ClaimTempDir(p.cfg.Partition, p.seq))
	p.enter(WALApplied)
	p.removeLeftovers(ctx)
	p.enter(OffsetReset)
	p.enter(WALTruncated)
	if p.refused != "" {
		return 0, &RefusedError{Topic: p.topic(), Partition: p.cfg.Partition, Seq: p.seq, Reason: p.refused}
	}
	p.enter(WriteStarted)
	p.next = time.Time{}
	if p.committed < 0 {
		return -1, nil
	}
	return p.committed + 1, nil
}

// standing is what the newest WAL segment says of the partition, and so
// what a claim carries on: the committed offset and what goes with it.
type standing struct {
	committed int64
	epoch     int32    // leader epoch of the record at committed; -1: unknown
	topicID   [16]byte // of the committed records; zero: unknown
	schemaID  int32    // of the committed files; 0: none
	connector string   // that wrote the segment; "": unknown
	refused   string   // not empty: refused until an operator resets the partition
	// recordMillis is the highest record time committed; 0: none or
	// unknown. A claim carries it on, so the WAL head always has it.
	recordMillis int64
}

func standingOf(e entry.Entry) standing {
	return standing{committed: e.CommittedOffset, epoch: e.LeaderEpoch, topicID: e.TopicID, schemaID: e.SchemaID,
		connector: e.Connector, refused: e.Refused, recordMillis: e.MaxRecordMillis}
}

// at is s with the committed offset moved to committed: what goes with
// the old offset (its leader epoch, the files' schema) is then unknown.
func (s standing) at(committed int64) standing {
	if committed != s.committed {
		s.committed, s.epoch, s.schemaID = committed, -1, 0
	}
	return s
}

// claim applies the newest WAL segment and publishes a claim right after it.
// Publishing is exclusive, so once the claim stands, any earlier owner that
// tries to commit finds its next sequence number taken and stops. A claim
// counts only if it is the newest segment once published, exactly as a
// commit: pruning frees old numbers, and a claim at a freed number is below
// the head, where it fences nobody (docs/design.md §6).
func (p *partition) claim(ctx context.Context, scans *topicScans) error {
	c, err := p.claimAs(ctx, scans, p.carryOn)
	if err != nil {
		return err
	}
	s := c.carried
	p.seq, p.committed, p.epoch, p.topicID, p.restore, p.refused, p.refusal = c.seq, s.committed, s.epoch, s.topicID, s.schemaID, s.refused, ""
	p.claimListing = c.listing
	p.recordMillis = s.recordMillis
	p.cfg.Logger.Info("partition claimed", "seq", p.seq, "committed_offset", p.committed, "epoch", p.cfg.Epoch,
		"topic_id", topicIDString(p.topicID), "refused", p.refused != "")
	return nil
}

// carryOn is what an owner's claim carries: the head's standing, under this
// connector's name, with this owner's refusal if it found one since its
// last segment and nobody published after it. A later segment of another
// owner (an operator's reset above all) decides instead. A WAL that names
// another connector is refused before anything is published.
func (p *partition) carryOn(head uint64, found standing) (standing, error) {
	if found.connector != "" && p.cfg.Connector != "" && found.connector != p.cfg.Connector {
		return standing{}, &OverlapError{Topic: p.topic(), Partition: p.cfg.Partition, Dir: p.log.Dir(), Owner: found.connector, Connector: p.cfg.Connector}
	}
	if p.cfg.Connector != "" {
		found.connector = p.cfg.Connector
	}
	if p.refusal != "" && head == p.seq && found.refused == "" {
		found.refused = p.refusal
		p.cfg.Logger.Error("partition refused until an operator resets it", "reason", p.refusal)
	}
	return found, nil
}

// claimed is a claim that stands: its number, the standing the head had,
// and the one the claim carries.
type claimed struct {
	seq            uint64
	found, carried standing
	// listing is the WAL directory as listed right after the claim
	// stood: recovery prunes and removes staging directories from it.
	listing wal.Listing
}

// claimAs rolls the head forward and publishes a claim after it carrying
// carry(head number, the head's standing), re-reading while other owners
// publish in between (bounded by claimAttempts). An error from carry stops
// the claim before anything is published.
func (p *partition) claimAs(ctx context.Context, scans *topicScans, carry func(head uint64, found standing) (standing, error)) (claimed, error) {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return claimed{}, err
		}
		head, found, err := p.applyHead(ctx, scans)
		if err != nil {
			return claimed{}, err
		}
		carried, err := carry(head, found)
		if err != nil {
			return claimed{}, err
		}
		c := claimed{seq: head + 1, found: found, carried: carried}
		c.listing, err = p.publishClaim(ctx, c.seq, c.carried)
		if errors.Is(err, wal.ErrSeqTaken) && attempt < claimAttempts {
			p.cfg.Logger.Info("WAL segment taken while claiming; another owner is active, re-reading", "seq", c.seq, "err", err)
			continue
		}
		if err != nil {
			return claimed{}, fmt.Errorf("claim WAL segment %d: %w", c.seq, err)
		}
		return c, nil
	}
}

// publishClaim publishes a claim at seq and checks that it is the newest
// segment; otherwise it reports wal.ErrSeqTaken, and the caller re-reads.
// It returns the listing that showed the claim standing.
func (p *partition) publishClaim(ctx context.Context, seq uint64, s standing) (wal.Listing, error) {
	if err := p.log.Publish(ctx, seq, p.walEntry(entry.KindClaim, s, nil)); err != nil {
		return wal.Listing{}, err
	}
	ls, err := p.log.List(ctx)
	if err != nil {
		return ls, fmt.Errorf("list WAL after claiming %d: %w", seq, err)
	}
	if len(ls.Segments) == 0 {
		return ls, fmt.Errorf("list WAL after claiming %d: WAL directory %s is empty right after a publish: was it deleted?", seq, p.log.Dir())
	}
	if head := ls.Segments[len(ls.Segments)-1]; head != seq {
		return ls, fmt.Errorf("%w: claim %d published below the newest segment %d (a number freed by pruning)", wal.ErrSeqTaken, seq, head)
	}
	return ls, nil
}

// epochBefore is the leader epoch of the record before offset next, when
// that is the committed record; -1 (no check) otherwise.
func (p *partition) epochBefore(next int64) int32 {
	if next == p.committed+1 {
		return p.epoch
	}
	return -1
}

// stillRefused reports whether the WAL head is still the refusal this owner
// claimed with: then nothing changed, and a retry need not claim again.
func (p *partition) stillRefused(ctx context.Context) (bool, error) {
	if p.refused == "" {
		return false, nil
	}
	head, err := p.newestSegment(ctx)
	if err != nil {
		return false, err
	}
	return head == p.seq, nil
}

// newestSegment is the highest published sequence number. An empty log
// after publishing means someone deleted the WAL of a running partition.
func (p *partition) newestSegment(ctx context.Context) (uint64, error) {
	seqs, err := p.log.Segments(ctx)
	if err != nil {
		return 0, err
	}
	if len(seqs) == 0 {
		return 0, fmt.Errorf("WAL directory %s is empty right after a publish: was it deleted?", p.log.Dir())
	}
	return seqs[len(seqs)-1], nil
}

// applyHead rolls the newest segment forward if it is a commit and returns
// its sequence number and standing. Only the newest segment can be
// unfinished: an owner publishes a segment only after finishing the one
// before, and segments below the newest that appear later are a fenced
// owner's, which nobody applies. Without a WAL, the committed offset comes
// from the file names and nothing else is known.
func (p *partition) applyHead(ctx context.Context, scans *topicScans) (uint64, standing, error) {
	seqs, err := p.log.Segments(ctx)
	if err != nil {
		return 0, standing{}, fmt.Errorf("list WAL: %w", err)
	}
	if len(seqs) == 0 {
		committed, err := p.scanCommitted(ctx, scans)
		return 0, standing{committed: committed, epoch: -1}, err
	}
	head := seqs[len(seqs)-1]
	e, err := p.log.Read(ctx, head)
	if err != nil {
		return 0, standing{}, fmt.Errorf("read WAL segment %d of %s/%d: %w", head, p.topic(), p.cfg.Partition, err)
	}
	if e.Kind == entry.KindCommit {
		if err := p.rollForward(ctx, e.Files); err != nil {
			return 0, standing{}, err
		}
	}
	return head, standingOf(e), nil
}

// rollForward finishes the renames of a commit found as the WAL head. Unlike
// an owner's own commit, a move whose final file exists is skipped, never
// repeated: a delayed rename must not replace a committed file. A move
// with neither file may be legitimate here (an operator moved committed
// files out of topics.dir), so it is reported and recovery goes on. The
// directories of the moves that stand are handed to the catalog, as an
// owner's commit hands its own (registerRolledForward).
func (p *partition) rollForward(ctx context.Context, moves []entry.FileMove) error {
	var done []string
	defer func() { p.registerRolledForward(done) }()
	for _, m := range moves {
		if _, err := p.cfg.FS.Stat(ctx, m.Final); err == nil {
			done = append(done, m.Final)
			continue
		}
		err := p.move(ctx, m)
		if errors.Is(err, errCommittedFileMissing) {
			p.cfg.Logger.Error("committed file is missing; was it moved out of topics.dir?", "final", m.Final, "offsets", fmt.Sprintf("%d-%d", m.StartOffset, m.EndOffset))
			continue
		}
		if err != nil {
			return err
		}
		done = append(done, m.Final)
	}
	return nil
}

// registerRolledForward hands the catalog the directories of committed
// files a roll-forward found or renamed. Moves already done count too: the
// owner that renamed them may have failed, lost the rename's reply, or died
// before telling its catalog, and nobody else would. Registering twice is
// harmless (Hive partitions are added if not there).
func (p *partition) registerRolledForward(finals []string) {
	if p.cfg.Catalog == nil || len(finals) == 0 {
		return
	}
	dirs := make([]string, 0, len(finals))
	for _, f := range finals {
		dir, ok := p.cfg.Layout.EncodedDir(f)
		if !ok {
			p.cfg.Logger.Warn("committed file outside the topic's directory; not registered in the catalog", "final", f, "topic_dir", p.cfg.Layout.Dir())
			continue
		}
		if !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	if len(dirs) > 0 {
		p.cfg.Catalog.Committed(p.topic(), dirs)
	}
}

// move renames one committed temp file to its final name. It is idempotent:
// a move whose temp file is gone and whose final file exists was done
// before (by us, an earlier owner, or a reply that was lost).
func (p *partition) move(ctx context.Context, m entry.FileMove) error {
	err := p.cfg.FS.Rename(ctx, m.Temp, m.Final)
	if err == nil {
		return nil
	}
	if _, serr := p.cfg.FS.Stat(ctx, m.Temp); !errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("commit %s -> %s: %w", m.Temp, m.Final, err)
	}
	if _, ferr := p.cfg.FS.Stat(ctx, m.Final); ferr != nil {
		return fmt.Errorf("%w: %s (offsets %d-%d)", errCommittedFileMissing, m.Final, m.StartOffset, m.EndOffset)
	}
	return nil
}

// removeLeftovers removes what the owners our claim fenced left behind
// (leftovers: older claims' temp files, WAL staging directories, segments
// below the claim), or hands it to cfg.Housekeep to remove later. Either
// is safe: their one possibly unapplied commit, the head we found, was
// rolled forward before we claimed, no commit of theirs can be applied
// later, and a removal that runs late never touches a newer owner's names,
// which are numbered above our claim (docs/design.md §5).
func (p *partition) removeLeftovers(ctx context.Context) {
	l := p.leftovers()
	// Used up: kept, it would be a stale listing (and its memory) on every
	// partition for as long as it is held.
	p.claimListing = wal.Listing{}
	if p.cfg.Housekeep != nil {
		p.cfg.Housekeep(l)
		return
	}
	l.remove(ctx)
}

// scanCommitted finds the last committed offset from committed file names
// when there is no WAL at all (a fresh start, or files written by the
// reference connector). It lists only this partition's directory when the
// partitioner allows, and walks the topic directory otherwise.
func (p *partition) scanCommitted(ctx context.Context, scans *topicScans) (int64, error) {
	if _, ok := p.cfg.Partitioner.(partitioner.Default); !ok {
		return scans.last(ctx, p)
	}
	ends, err := inspect.CommittedEnds(ctx, p.cfg.FS, p.cfg.Layout, p.cfg.Layout.PartitionDir(p.cfg.Partition))
	if err != nil {
		return 0, err
	}
	return p.noteScanned(ends), nil
}

func (p *partition) noteScanned(ends map[int32]int64) int64 {
	last, ok := ends[p.cfg.Partition]
	if !ok {
		return -1
	}
	p.cfg.Logger.Info("no WAL: last committed offset taken from file names", "offset", last)
	return last
}

// topicScans walks each topic's directory at most once for the partitions
// recovered together (one assignment): without it a first start on a large
// migrated topic walks the whole tree once per partition. Its results are
// used only during that assignment, never cached across recoveries: a
// later walk must see later commits.
type topicScans struct {
	mu    sync.Mutex
	walks map[string]*topicWalk
}

type topicWalk struct {
	once sync.Once
	ends map[int32]int64
	err  error
}

func newTopicScans() *topicScans { return &topicScans{walks: map[string]*topicWalk{}} }

// last walks (once per topic when s is not nil) and returns p's last
// offset. The walk runs under the context of the first partition to ask:
// the partitions recovered together share one.
func (s *topicScans) last(ctx context.Context, p *partition) (int64, error) {
	walk := &topicWalk{}
	if s != nil {
		s.mu.Lock()
		if s.walks[p.topic()] == nil {
			s.walks[p.topic()] = walk
		}
		walk = s.walks[p.topic()]
		s.mu.Unlock()
	}
	walk.once.Do(func() {
		p.cfg.Logger.Warn("no WAL for this partition: scanning the topic directory once for committed files", "dir", p.cfg.Layout.Dir())
		walk.ends, walk.err = inspect.CommittedEnds(ctx, p.cfg.FS, p.cfg.Layout, p.cfg.Layout.Dir())
	})
	if walk.err != nil {
		return 0, walk.err
	}
	return p.noteScanned(walk.ends), nil
}

// newWriter is a writer for this partition's temp files in dir.
func (p *partition) newWriter(dir string) *writer.Writer {
	return writer.New(writer.Options{
		FS: p.cfg.FS, Format: p.cfg.Format, Layout: p.cfg.Layout, Partition: p.cfg.Partition, Pad: p.cfg.Pad,
		TempDir: dir, Prefix: p.cfg.Epoch,
	})
}
