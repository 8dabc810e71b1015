package sink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
	"github.com/hdfs-sink/hdfs-sink/writer"
)

// ErrFenced means another owner claimed the partition after we did: this
// process must not commit it again until it recovers it anew.
var ErrFenced = errors.New("fenced: another owner claimed the partition")

// claimAttempts bounds how often recovery retries when other owners keep
// publishing segments between our read and our claim.
const claimAttempts = 20

// partitionConfig is everything one partition's state machine needs: the
// connector's write settings and the partition's own identity.
type partitionConfig struct {
	WriteSettings
	Layout    layout.Topic // the topic's directories, expanded
	Partition int32
	Owner     string // host:pid, recorded in WAL entries
	Epoch     string // this connector incarnation, the prefix of its temp names
	Logger    *slog.Logger
	// OnCommit is called after every commit, once its files carry their
	// final names, with the next offset to consume.
	OnCommit func(next int64)
	// PruneEvery prunes the WAL after every PruneEvery-th commit
	// (defaultPruneEvery for connectors; 0 counts as 1). Pruning lists and
	// deletes: two NameNode calls of the ~15 a commit makes, and leaving a
	// few old segments costs nothing (recovery reads only the newest).
	PruneEvery uint64
}

const defaultPruneEvery = 8

// partition runs the write state machine of one Kafka partition and is the
// only code that reads or changes its state: the connector asks it to
// resume, write, commit or discard, and hears of commits through OnCommit.
// One goroutine drives it at a time (the connector's poll loop or a recovery).
type partition struct {
	cfg       partitionConfig
	log       *wal.Log
	w         *writer.Writer
	state     State
	seq       uint64 // the last WAL segment this owner published
	committed int64  // highest Kafka offset durably committed; -1: none
	next      time.Time
	firstSeen int64          // first offset fetched since the last recovery; -1: none
	current   *schema.Schema // the schema files are written with (schema.compatibility)
}

func newPartition(cfg partitionConfig) *partition {
	if cfg.OnCommit == nil {
		cfg.OnCommit = func(int64) {}
	}
	p := &partition{cfg: cfg, log: wal.Open(cfg.FS, cfg.Layout.WALDir(cfg.Partition)), committed: -1, firstSeen: -1}
	p.w = writer.New(writer.Options{
		FS: cfg.FS, Format: cfg.Format, Layout: cfg.Layout, Partition: cfg.Partition, Pad: cfg.Pad,
		TempDir: p.tempDir(), Prefix: cfg.Epoch,
	})
	return p
}

func (p *partition) topic() string { return p.cfg.Layout.Name }

func (p *partition) tempDir() string { return p.cfg.Layout.TempRoot(p.cfg.Partition) }

// empty reports whether the partition holds no open file.
func (p *partition) empty() bool { return p.w.Empty() }

// buffered is the memory its open files hold (for the memory ceiling).
func (p *partition) buffered() int64 { return int64(p.w.BytesBuffered()) }

// openFiles is how many temp files it has open.
func (p *partition) openFiles() int { return p.w.OpenFiles() }

func (p *partition) enter(s State) {
	p.state = s
	p.cfg.Logger.Debug("state", "state", s.String())
	if p.cfg.Faults != nil {
		p.cfg.Faults.Enter(s)
	}
}

// resume recovers the partition and returns the offset to fetch next: the
// one after the last commit, else the first offset fetched since the last
// recovery (so a failed first file is fetched again), else -1: HDFS holds
// nothing of this partition and the start policy decides.
func (p *partition) resume(ctx context.Context) (int64, error) {
	next, err := p.recover(ctx)
	if err != nil {
		return 0, err
	}
	if next < 0 {
		next = p.firstSeen
	}
	p.firstSeen = -1
	return next, nil
}

// recover runs the recovery machine: finish the last commit, claim the
// partition (fencing every earlier owner), remove orphans, and return the
// offset to fetch next; -1 means HDFS holds nothing of this partition.
func (p *partition) recover(ctx context.Context) (int64, error) {
	p.enter(RecoveryStarted)
	if err := p.w.Discard(); err != nil {
		p.cfg.Logger.Warn("discard open temp files", "err", err)
	}
	// Nothing of this partition is fetched until recovery returns an offset.
	p.enter(RecoveryPartitionPaused)
	if err := p.claim(ctx); err != nil {
		return 0, err
	}
	p.enter(WALApplied)
	if err := p.removeOrphans(); err != nil {
		return 0, err
	}
	p.enter(OffsetReset)
	if err := p.log.Prune(p.seq); err != nil {
		return 0, fmt.Errorf("prune WAL: %w", err)
	}
	p.enter(WALTruncated)
	p.enter(WriteStarted)
	p.next = time.Time{}
	if p.committed < 0 {
		return -1, nil
	}
	return p.committed + 1, nil
}

// claim applies the newest WAL segment and publishes a claim right after it.
// Publishing is exclusive, so once the claim stands, any earlier owner that
// tries to commit finds its next sequence number taken and stops.
func (p *partition) claim(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		head, committed, err := p.applyHead()
		if err != nil {
			return err
		}
		e := p.walEntry(entry.KindClaim, committed, nil)
		err = p.log.Publish(head+1, e)
		if errors.Is(err, wal.ErrSeqTaken) && attempt < claimAttempts {
			p.cfg.Logger.Info("WAL segment taken while claiming; another owner is active, re-reading", "seq", head+1)
			continue
		}
		if err != nil {
			return fmt.Errorf("claim WAL segment %d: %w", head+1, err)
		}
		p.seq, p.committed = head+1, committed
		p.cfg.Logger.Info("partition claimed", "seq", p.seq, "committed_offset", committed, "epoch", p.cfg.Epoch)
		return nil
	}
}

// applyHead rolls the newest segment forward if it is a commit and returns
// its sequence number and committed offset. Only the newest segment can be
// unfinished: an owner publishes a segment only after finishing the one
// before, and segments below the newest that appear later are a fenced
// owner's, which nobody applies.
func (p *partition) applyHead() (uint64, int64, error) {
	seqs, err := p.log.Segments()
	if err != nil {
		return 0, 0, fmt.Errorf("list WAL: %w", err)
	}
	if len(seqs) == 0 {
		committed, err := p.scanCommitted()
		return 0, committed, err
	}
	head := seqs[len(seqs)-1]
	e, err := p.log.Read(head)
	if err != nil {
		return 0, 0, fmt.Errorf("read WAL segment %d of %s/%d: %w", head, p.topic(), p.cfg.Partition, err)
	}
	if e.Kind == entry.KindCommit {
		if err := p.applyMoves(e.Files); err != nil {
			return 0, 0, err
		}
	}
	return head, e.CommittedOffset, nil
}

// applyMoves renames committed temp files to their final names. It is
// idempotent: a move whose temp file is gone and whose final file exists was
// done before (by us or by an earlier owner).
func (p *partition) applyMoves(moves []entry.FileMove) error {
	for _, m := range moves {
		err := p.cfg.FS.Rename(m.Temp, m.Final)
		if err == nil {
			continue
		}
		if _, serr := p.cfg.FS.Stat(m.Temp); !errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("commit %s -> %s: %w", m.Temp, m.Final, err)
		}
		if _, ferr := p.cfg.FS.Stat(m.Final); ferr != nil {
			// Committed once, since moved or deleted by someone else: the WAL
			// cannot bring it back; say so loudly and go on.
			p.cfg.Logger.Error("committed file is missing; was it moved out of topics.dir?", "final", m.Final, "offsets", fmt.Sprintf("%d-%d", m.StartOffset, m.EndOffset))
		}
	}
	return nil
}

// removeOrphans deletes this partition's temp files and stale staging
// directories. It runs after our claim: every temp file still there belongs
// to no published commit, whoever wrote it.
func (p *partition) removeOrphans() error {
	if err := p.cfg.FS.RemoveAll(p.tempDir()); err != nil {
		return fmt.Errorf("remove orphaned temp files in %s: %w", p.tempDir(), err)
	}
	if err := p.log.RemoveStaging(); err != nil {
		return fmt.Errorf("remove WAL staging: %w", err)
	}
	return nil
}

// scanCommitted finds the last committed offset from committed file names
// when there is no WAL at all (a fresh start, or files written by the
// reference connector). It lists only this partition's directory when the
// partitioner allows, and walks the topic directory otherwise.
func (p *partition) scanCommitted() (int64, error) {
	root := p.cfg.Layout.Dir()
	if _, ok := p.cfg.Partitioner.(partitioner.Default); ok {
		root = p.cfg.Layout.PartitionDir(p.cfg.Partition)
	} else {
		p.cfg.Logger.Warn("no WAL for this partition: scanning the topic directory once for committed files", "dir", root)
	}
	last := int64(-1)
	err := storage.WalkFiles(p.cfg.FS, root, layout.IsTempDir, func(name string) error {
		if r, ok := layout.ParseFinalName(name); ok && r.Topic == p.topic() && r.Partition == p.cfg.Partition && r.End > last {
			last = r.End
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("scan %s for committed files: %w", root, err)
	}
	if last >= 0 {
		p.cfg.Logger.Info("no WAL: last committed offset taken from file names", "offset", last)
	}
	return last, nil
}

func (p *partition) walEntry(kind entry.Kind, committed int64, files []writer.Closed) entry.Entry {
	e := entry.Entry{
		Kind: kind, Epoch: p.cfg.Epoch, Owner: p.cfg.Owner, Topic: p.topic(), Partition: p.cfg.Partition,
		CommittedOffset: committed, UnixMillis: p.cfg.Now().UnixMilli(),
	}
	for _, f := range files {
		e.Files = append(e.Files, entry.FileMove{Temp: f.Temp, Final: f.Final, StartOffset: f.Start, EndOffset: f.End, Records: f.Records})
	}
	return e
}

// record is a decoded Kafka record ready to write.
type record struct {
	Offset    int64
	Timestamp time.Time
	Schema    *schema.Schema
	Datum     []byte
}

// errNoFields is what a field partitioner gets from a schemaless value.
var errNoFields = &partitioner.RecordError{What: "value", Reason: "a schemaless value has no fields"}

func (r *record) native() (any, error) {
	if r.Schema == nil {
		return nil, errNoFields
	}
	return r.Schema.Native(r.Datum)
}

// field is the partitioner's shortcut to one field (schema.FieldNative).
func (r *record) field(path []string) (any, bool) {
	if r.Schema == nil {
		return nil, false
	}
	return r.Schema.FieldNative(r.Datum, path)
}

// beginBatch marks the start of a batch of fetched records.
func (p *partition) beginBatch() { p.enter(WritePartitionPaused) }

// endBatch runs the rotation check the reference runs when its buffer is empty.
func (p *partition) endBatch(ctx context.Context) error {
	err := p.maybeRotate(ctx, nil)
	if err == nil {
		p.enter(WriteStarted)
	}
	return err
}

// write appends one record, rotating first when a trigger says so: the
// record that trips a trigger starts the next file, as in the reference.
func (p *partition) write(ctx context.Context, r record) error {
	if p.firstSeen < 0 {
		p.firstSeen = r.Offset
	}
	if r.Offset <= p.committed {
		// Already committed: a refetch after a rewind. Never write it twice.
		return nil
	}
	if err := p.resolveSchema(&r); err != nil {
		return err
	}
	if err := p.maybeRotate(ctx, &r); err != nil {
		return err
	}
	enc, err := p.cfg.Partitioner.Encode(partitioner.Record{
		Topic: p.topic(), Partition: p.cfg.Partition, Offset: r.Offset, Timestamp: kafkaMillis(r.Timestamp),
		Value: func() (any, error) { return r.native() },
		Field: r.field,
	})
	if err != nil {
		return err
	}
	return p.append(enc, r)
}

// append writes r into the file of directory enc; the first record of a
// rotation starts the schedule and tells the catalog its schema.
func (p *partition) append(enc string, r record) error {
	now := p.cfg.Now()
	wasEmpty := p.w.Empty()
	if err := p.w.Append(enc, r.Schema, r.Offset, r.Datum, now); err != nil {
		return err
	}
	if wasEmpty {
		p.next = p.nextScheduled(now)
		if p.cfg.Catalog != nil && r.Schema != nil {
			p.cfg.Catalog.SchemaSeen(p.topic(), r.Schema.ID, r.Schema.Text)
		}
	}
	return nil
}

// resolveSchema applies schema.compatibility to a record: it keeps the
// current schema (a doc-only change, or a record projected to it) or makes
// its own schema current, which rotates the open files.
func (p *partition) resolveSchema(r *record) error {
	if r.Schema == nil {
		return nil // schemaless values
	}
	if p.current == nil || p.current.ID == r.Schema.ID {
		if p.current == nil {
			p.current = r.Schema
		}
		return nil
	}
	d, err := p.cfg.Compatibility.Decide(p.current, r.Schema)
	if err != nil {
		return err
	}
	switch d {
	case schema.Same:
		r.Schema = p.current // same layout: the datum reads as is
	case schema.ProjectToCurrent:
		datum, err := schema.Project(r.Schema, p.current, r.Datum)
		if err != nil {
			return err
		}
		r.Schema, r.Datum = p.current, datum
	case schema.Rotate:
		p.current = r.Schema
	}
	return nil
}

// kafkaMillis is a record timestamp in epoch milliseconds; -1 when absent.
func kafkaMillis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

// tick rotates an idle partition whose time is up: the reference only checks
// its timers when a record arrives, which leaves data in +tmp indefinitely.
func (p *partition) tick(ctx context.Context) error {
	if p.w.Empty() {
		return nil
	}
	p.enter(WritePartitionPaused)
	return p.endBatch(ctx)
}

// commitNow commits the open files whatever the triggers say (a release,
// the memory ceiling); with nothing open it does nothing.
func (p *partition) commitNow(ctx context.Context, reason string) error {
	if p.w.Empty() {
		return nil
	}
	p.enter(WritePartitionPaused)
	return p.rotate(ctx, reason)
}

// discard drops the open files without committing them: their records are
// consumed again by whoever owns the partition next.
func (p *partition) discard() {
	if err := p.w.Discard(); err != nil {
		p.cfg.Logger.Warn("discard temp files", "err", err)
	}
}

func (p *partition) maybeRotate(ctx context.Context, r *record) error {
	if p.w.Empty() {
		return nil
	}
	reason := p.rotateReason(r)
	if reason == "" {
		return nil
	}
	return p.rotate(ctx, reason)
}

func (p *partition) rotateReason(r *record) string {
	now := p.cfg.Now()
	switch {
	case p.w.Records() >= p.cfg.FlushSize:
		return "flush.size"
	case p.cfg.MaxFileBytes > 0 && p.w.Bytes() >= p.cfg.MaxFileBytes:
		return "hdfs.sink.rotate.max.file.bytes"
	case r != nil && p.schemaChanged(r.Schema):
		return "schema change"
	case p.cfg.RotateInterval > 0 && now.Sub(p.w.OpenedAt()) >= p.cfg.RotateInterval:
		return "rotate.interval.ms"
	case p.cfg.RotateSchedule > 0 && !p.next.IsZero() && !now.Before(p.next):
		return "rotate.schedule.interval.ms"
	}
	return ""
}

func (p *partition) schemaChanged(s *schema.Schema) bool {
	id, ok := p.w.SchemaID()
	return ok && s != nil && id != s.ID
}

// nextScheduled aligns scheduled rotations to the start of the day in the
// configured time zone, as the reference does (DateTimeUtils.getNextTimeAdjustedByDay).
func (p *partition) nextScheduled(now time.Time) time.Time {
	if p.cfg.RotateSchedule <= 0 {
		return time.Time{}
	}
	local := now.In(p.cfg.Location)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, p.cfg.Location)
	n := now.Sub(day)/p.cfg.RotateSchedule + 1
	next := day.Add(n * p.cfg.RotateSchedule)
	if tomorrow := day.AddDate(0, 0, 1); next.After(tomorrow) {
		next = tomorrow
	}
	return next
}

// rotate commits every open file of the partition as one unit:
// close (durable) → publish a commit segment (atomic, exclusive) → rename.
func (p *partition) rotate(ctx context.Context, reason string) error {
	p.enter(ShouldRotate)
	closed, err := p.w.Close()
	if err != nil {
		return err
	}
	p.enter(TempFileClosed)
	e := p.walEntry(entry.KindCommit, lastOffset(closed), closed)
	if err := p.publishCommit(e, closed); err != nil {
		return err
	}
	p.enter(WALAppended)
	if err := p.applyMoves(e.Files); err != nil {
		return err
	}
	p.enter(FileCommitted)
	p.committed = e.CommittedOffset
	p.registerPartitions(closed)
	p.cfg.Logger.Info("files committed", "reason", reason, "files", len(closed), "end_offset", p.committed, "seq", p.seq)
	p.cfg.OnCommit(p.committed + 1)
	p.pruneSometimes()
	p.enter(WritePartitionPaused)
	return nil
}

// lastOffset is the highest offset in a set of closed files.
func lastOffset(closed []writer.Closed) int64 {
	end := closed[0].End
	for _, c := range closed[1:] {
		end = max(end, c.End)
	}
	return end
}

// pruneSometimes prunes the WAL every PruneEvery-th commit. A failure is
// housekeeping, not a reason to stop: the next prune removes the rest.
func (p *partition) pruneSometimes() {
	if p.seq%max(p.cfg.PruneEvery, 1) != 0 {
		return
	}
	if err := p.log.Prune(p.seq); err != nil {
		p.cfg.Logger.Warn("prune WAL", "err", err)
	}
}

// registerPartitions hands committed directories to the catalog: Hive
// partitions appear only once their files are committed.
func (p *partition) registerPartitions(closed []writer.Closed) {
	if p.cfg.Catalog == nil {
		return
	}
	dirs := make([]string, 0, len(closed))
	for _, c := range closed {
		dirs = append(dirs, c.Encoded)
	}
	p.cfg.Catalog.Committed(p.topic(), dirs)
}

// publishCommit publishes the commit segment and checks it is the newest. A
// segment number freed by pruning can be published by a long-frozen owner;
// such a segment is below the newest, so no reader applies it, and its owner
// must not apply it either.
func (p *partition) publishCommit(e entry.Entry, closed []writer.Closed) error {
	seq := p.seq + 1
	err := p.log.Publish(seq, e)
	if errors.Is(err, wal.ErrSeqTaken) {
		p.discardClosed(closed)
		return fmt.Errorf("%w (segment %d exists)", ErrFenced, seq)
	}
	if err != nil {
		// Unknown outcome: the segment may stand. Keep the temp files for
		// recovery, which applies the segment if it stands and removes them if not.
		return fmt.Errorf("publish WAL segment %d: %w", seq, err)
	}
	p.seq = seq
	seqs, err := p.log.Segments()
	if err != nil {
		return fmt.Errorf("list WAL after publishing %d: %w", seq, err)
	}
	if head := seqs[len(seqs)-1]; head != seq {
		return fmt.Errorf("%w (segment %d published below the newest, %d)", ErrFenced, seq, head)
	}
	return nil
}

func (p *partition) discardClosed(closed []writer.Closed) {
	for _, c := range closed {
		if err := p.cfg.FS.Remove(c.Temp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.cfg.Logger.Warn("remove unpublished temp file", "file", c.Temp, "err", err)
		}
	}
}
