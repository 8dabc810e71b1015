package sink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
	"github.com/hdfs-sink/hdfs-sink/writer"
)

// claimAttempts bounds how often recovery retries when other owners keep
// publishing segments between our read and our claim.
const claimAttempts = 20

// partitionConfig is everything one partition's state machine needs: the
// connector's write settings and the partition's own identity.
type partitionConfig struct {
	WriteSettings
	Layout layout.Topic // the topic's directories, expanded, under its routed name
	// Source is the consumed topic, when Layout is named otherwise (a
	// router): what Kafka's errors name. "": Layout.Name.
	Source    string
	Partition int32
	Owner     string // host:pid, recorded in WAL entries
	Epoch     string // this connector incarnation, the prefix of its temp names
	// Connector names the connector in the WAL entries, so that two
	// connectors writing one topic into the same logs.dir meet there,
	// whatever processes they run in. "": not checked (tools, tests).
	Connector string
	// SchemaByID finds the schema of the committed files again after a
	// recovery (registry lookup, extra columns applied), so that
	// schema.compatibility judges the next record against the same schema
	// whether or not a recovery came between (docs/design.md §4, "Bad
	// records"). nil: forget it, as schemaless connectors and tools do.
	SchemaByID func(ctx context.Context, id int32) (*schema.Schema, error)
	Logger     *slog.Logger
	Stats      *Stats // the connector's counters, which partitions add to
	// OnCommit is called after every commit, once its files carry their
	// final names, with the next offset to consume.
	OnCommit func(next int64)
	// PruneEvery prunes the WAL after every PruneEvery-th commit
	// (defaultPruneEvery for connectors; 0 counts as 1). Pruning lists and
	// deletes: two NameNode calls of the ~15 a commit makes, and leaving a
	// few old segments costs nothing (recovery reads only the newest).
	PruneEvery uint64
	// Observer hears of the partition's states and commits (nil: nobody).
	Observer PartitionObserver
	// Housekeep, when set, takes what a recovery's claim fenced (its
	// leftovers) to remove later, off the recovery's path: the connector's
	// janitor. nil: the recovery removes them itself.
	Housekeep func(*leftovers)
	// MayRotate asks whether a time-driven rotation may commit in this
	// poll (the connector's spread); nil: always. A refused partition
	// writes on into its open files and asks again in a later batch or
	// tick (docs/design.md §4, "Spreading timed rotations").
	MayRotate func() bool
	// DetachCommits makes write, endBatch and tick hand a due rotation
	// back as a *commitDue instead of committing it: the connector runs it
	// off the poll loop (docs/design.md §4, "Commits off the poll loop").
	// Forced commits (commitNow) still commit inline.
	DetachCommits bool
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
	epoch     int32  // leader epoch of the record at committed; -1: unknown
	next      time.Time
	firstSeen int64          // first offset fetched since the last recovery; -1: none
	expect    int64          // the offset the next fetched record should have; -1: unknown
	current   *schema.Schema // the schema of the files written (schema.compatibility)
	restore   int32          // schema id to make current again after a recovery; 0: none

	// topicID is Kafka's id of the topic whose records HDFS holds and the
	// open files hold; zero until known (a WAL before version 2, or
	// nothing committed yet): the next batch's id is adopted.
	topicID [16]byte
	// appended is the leader epoch of the last record appended, which the
	// next commit records with its committed offset.
	appended int32
	// refused is the refusal the WAL head carries (RefusedError); refusal
	// a refusal found by this owner and not yet published: the next
	// recovery's claim publishes it.
	refused, refusal string
	// batchAt is when the batch (or tick) being handled started: rotation
	// triggers and new files read the clock once per batch, not per record
	// (a record costs a few microseconds; two clock reads were a visible
	// part of it, issue 25). Zero outside a batch: the clock is read.
	batchAt time.Time
	// recordMillis is the highest record time committed (the WAL head's
	// MaxRecordMillis), pendingMillis that of the open files: the next
	// commit records the larger (completeness markers, docs/design.md §11).
	recordMillis, pendingMillis int64
	// placing is the record the partitioner is placing, which
	// placingValue and placingField (bound once, in newPartition) read: a
	// closure per record to reach it cost two allocations per record and
	// moved the record to the heap (issue 25).
	placing      record
	placingValue func() (any, error)
	placingField func(path []string) (any, bool)
	// held: a time-driven rotation was refused in the batch (or tick)
	// under way; it is not asked for again before the next one.
	held bool
	// seekStart: a batch was refused since the last recovery, so Kafka's
	// position for the partition says nothing; with nothing committed the
	// next resume must seek to where the start policy says (after a reset
	// to "nothing committed").
	seekStart bool
	// claimListing is the WAL directory as the claim left it: recovery
	// prunes and removes staging directories from it, a listing each less.
	claimListing wal.Listing
}

func newPartition(cfg partitionConfig) *partition {
	if cfg.OnCommit == nil {
		cfg.OnCommit = func(int64) {}
	}
	if cfg.Stats == nil {
		cfg.Stats = &Stats{}
	}
	if cfg.Observer == nil {
		cfg.Observer = nopPartition{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &partition{cfg: cfg, log: wal.Open(cfg.FS, cfg.Layout.WALDir(cfg.Partition)), committed: -1, epoch: -1, appended: -1, firstSeen: -1, expect: -1}
	p.placingValue, p.placingField = p.placing.native, p.placing.field
	// No temp directory until a claim names one: nothing is written before
	// the partition is recovered.
	p.w = p.newWriter("")
	return p
}

// topic is the name the partition's files, WAL and Hive table are kept
// under (routed); kafkaTopic the topic it consumes.
func (p *partition) topic() string { return p.cfg.Layout.Name }

func (p *partition) kafkaTopic() string {
	if p.cfg.Source != "" {
		return p.cfg.Source
	}
	return p.cfg.Layout.Name
}

// empty reports whether the partition holds no open file.
func (p *partition) empty() bool { return p.w.Empty() }

// buffered is the memory its open files hold (for the memory ceiling).
func (p *partition) buffered() int64 { return int64(p.w.BytesBuffered()) }

// openFiles is how many temp files it has open.
func (p *partition) openFiles() int { return p.w.OpenFiles() }

func (p *partition) enter(s State) {
	p.state = s
	p.cfg.Logger.Debug("state", "state", s.String())
	p.cfg.Observer.Entered(s)
	if p.cfg.Faults != nil {
		p.cfg.Faults.Enter(s)
	}
}

func (p *partition) walEntry(kind entry.Kind, s standing, files []writer.Closed) entry.Entry {
	e := entry.Entry{
		Kind: kind, Epoch: p.cfg.Epoch, Owner: p.cfg.Owner, Topic: p.topic(), Partition: p.cfg.Partition,
		CommittedOffset: s.committed, UnixMillis: p.cfg.Now().UnixMilli(),
		TopicID: s.topicID, Connector: s.connector, LeaderEpoch: s.epoch, SchemaID: s.schemaID, Refused: s.refused,
		MaxRecordMillis: s.recordMillis,
	}
	for _, f := range files {
		e.Files = append(e.Files, entry.FileMove{Temp: f.Temp, Final: f.Final, StartOffset: f.Start, EndOffset: f.End, Records: f.Records})
	}
	return e
}

// commitStanding is what a commit of closed records: their last offset,
// its leader epoch, the topic and schema they were written with.
func (p *partition) commitStanding(closed []writer.Closed) standing {
	s := standing{committed: lastOffset(closed), epoch: p.appended, topicID: p.topicID, connector: p.cfg.Connector,
		recordMillis: max(p.recordMillis, p.pendingMillis)}
	if p.current != nil {
		s.schemaID = p.current.ID
	}
	return s
}

// record is a decoded Kafka record ready to write.
type record struct {
	Offset      int64
	LeaderEpoch int32 // of the batch the record came in; -1: unknown
	Timestamp   time.Time
	Schema      *schema.Schema
	Datum       []byte
	// Key is the key as key.converter read it (its bytes when none did);
	// Headers are the record's, as Kafka delivered them. Transforms read
	// them; the files hold only the value.
	Key     convert.Value
	Headers []kgo.RecordHeader
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

// fetchedBatch describes one poll's records of the partition as Kafka
// returned them.
type fetchedBatch struct {
	First, Last   int64 // offsets of the first and last record
	LogStart      int64 // the partition's log start offset; -1: unknown
	HighWatermark int64
	TopicID       [16]byte // the topic id the fetch response named; zero: not sent
}

// beginBatch starts writing a batch of fetched records. It refuses a batch
// of another topic than the one HDFS holds (deleted and re-created under
// the same name: a new topic id), and a batch that starts at or below the
// committed offset: after a recovery the sink's own start position is past
// it, so Kafka has reset the position because the log now ends below what
// HDFS holds (topic re-created, truncation). Writing on would drop or
// misname records silently; stopping is loud, and the refusal is kept in
// the WAL until an operator resets the partition (refuse).
func (p *partition) beginBatch(b fetchedBatch) error {
	p.enter(WritePartitionPaused)
	p.batchAt, p.held = p.cfg.Now(), false
	if p.firstSeen < 0 {
		p.firstSeen = b.First // before decoding, so a failed first batch is fetched again
	}
	if err := p.checkTopicID(b); err != nil {
		return p.refuse(err)
	}
	if p.committed >= 0 && b.First <= p.committed {
		return p.refuse(p.rewound(b))
	}
	p.noteGap(b)
	p.expect = b.Last + 1
	return nil
}

// checkTopicID compares the batch's topic id with the one HDFS holds. An
// unknown id on either side is no evidence: a broker that does not send
// ids, a WAL written before version 2, nothing committed yet or an
// offsets reset; the batch's id is then adopted and recorded by the next
// commit (docs/design.md §4, "Topic identity").
func (p *partition) checkTopicID(b fetchedBatch) error {
	switch {
	case b.TopicID == [16]byte{} || b.TopicID == p.topicID:
		return nil
	case p.topicID == [16]byte{}:
		p.topicID = b.TopicID
		return nil
	}
	return &TopicChangedError{Topic: p.kafkaTopic(), Partition: p.cfg.Partition, Committed: p.committed, Was: p.topicID, Now: b.TopicID, Offset: b.First}
}

// refuse notes that Kafka's log no longer continues what HDFS holds: the
// partition writes nothing more, and its next recovery publishes the
// refusal in its claim, where every later owner finds it (recover).
func (p *partition) refuse(err error) error {
	p.cfg.Stats.Rewinds.Add(1)
	p.refusal = err.Error()
	// The refused records are no first batch to fetch again (audit F5):
	// they are not the topic HDFS holds, or not where it left off.
	p.firstSeen, p.seekStart = -1, true
	return err
}

// truncated is franz-go's report that the log diverged at divergeAt
// (ErrDataLoss, found by leader epoch). Below or at the committed offset,
// HDFS holds records the log no longer has: a refusal. Above it only
// uncommitted records are gone: the open files are dropped by the
// recovery that follows, which resumes after the committed offset in the
// log as it is now, so nothing is refused.
func (p *partition) truncated(divergeAt int64) error {
	if p.committed >= 0 && divergeAt <= p.committed {
		return p.refuse(&TruncatedError{Topic: p.kafkaTopic(), Partition: p.cfg.Partition, Committed: p.committed, DivergeAt: divergeAt})
	}
	return fmt.Errorf("topic %s partition %d: Kafka's log diverged at offset %d, past the committed offset %d (an unclean leader election?): "+
		"the open files are dropped and the records after the committed offset are read again", p.kafkaTopic(), p.cfg.Partition, divergeAt, p.committed)
}

// noteGap reports offsets that retention removed before they were read:
// inherent (Kafka deleted them), but never silent.
func (p *partition) noteGap(b fetchedBatch) {
	if p.expect < 0 || b.First <= p.expect || b.LogStart <= p.expect {
		return // contiguous, or a gap of compaction or transaction markers
	}
	p.cfg.Stats.RetentionGaps.Add(1)
	p.cfg.Logger.Error("offsets removed by Kafka's retention before they were written: a gap in HDFS",
		"missing_from", p.expect, "missing_to", b.LogStart-1, "log_start", b.LogStart)
}

func (p *partition) rewound(b fetchedBatch) error {
	return &RewindError{Topic: p.kafkaTopic(), Partition: p.cfg.Partition, Committed: p.committed,
		Offset: b.First, LogStart: b.LogStart, HighWatermark: b.HighWatermark}
}

// endBatch runs the rotation check the reference runs when its buffer is empty.
func (p *partition) endBatch(ctx context.Context) error {
	defer func() { p.batchAt = time.Time{} }()
	err := p.maybeRotate(ctx, nil, p.cfg.DetachCommits)
	if err == nil {
		p.enter(WriteStarted)
	}
	return err
}

// commitDue is what write, endBatch and tick return instead of committing when
// a rotation is due and DetachCommits is set: the connector runs
// rotate(reason) on a goroutine of its own and touches nothing of the
// partition until it has returned. write returns it before the record it
// was given, which is written after the commit, as the first record of
// the next files.
type commitDue struct{ reason string }

func (d *commitDue) Error() string { return "commit due (" + d.reason + ")" }

// commitDetached is the commit a *commitDue asked for, run off the poll
// loop: the rotation, then WRITE_STARTED, where endBatch or tick would
// have left the partition after an inline one.
func (p *partition) commitDetached(ctx context.Context, reason string) error {
	if err := p.rotate(ctx, reason); err != nil {
		return err
	}
	p.enter(WriteStarted)
	return nil
}

// continueBatch goes on with a batch whose writing stopped for a commit
// (commitDue): the clock is read anew, as at the start of a batch.
func (p *partition) continueBatch() {
	p.batchAt, p.held = p.cfg.Now(), false
}

// write appends one record, rotating first when a trigger says so: the
// record that trips a trigger starts the next file, as in the reference.
// Two contexts, because a stop ends them differently: ctx bounds the
// registry lookup that restores the committed files' schema, which a stop
// ends at once; store bounds the store calls (the record's temp file, its
// rotation), which a stop lets finish (Connector.storeContext).
func (p *partition) write(ctx, store context.Context, r record) error {
	if r.Offset <= p.committed {
		// Already committed; beginBatch refuses such batches, so this
		// never happens: never write an offset twice.
		return p.refuse(p.rewound(fetchedBatch{First: r.Offset, LogStart: -1, HighWatermark: -1}))
	}
	if err := p.resolveSchema(ctx, &r); err != nil {
		return err
	}
	if err := p.maybeRotate(store, &r, p.cfg.DetachCommits); err != nil {
		return err
	}
	enc, millis, err := p.encode(&r)
	if err != nil {
		return err
	}
	return p.append(store, enc, millis, r)
}

// encode is the record's directory and its record time: the one a
// time-based partitioner filed it by, else its Kafka timestamp.
func (p *partition) encode(r *record) (string, int64, error) {
	p.placing = *r
	defer func() { p.placing = record{} }() // no datum held past its record
	pr := partitioner.Record{
		Topic: p.topic(), Partition: p.cfg.Partition, Offset: r.Offset, Timestamp: kafkaMillis(r.Timestamp),
		Value: p.placingValue,
		Field: p.placingField,
	}
	if timed, ok := p.cfg.Partitioner.(partitioner.Timed); ok {
		return timed.EncodeTimed(pr)
	}
	enc, err := p.cfg.Partitioner.Encode(pr)
	return enc, pr.Timestamp, err
}

// append writes r into the file of directory enc; the first record of a
// rotation starts the schedule and tells the catalog its schema. A file it
// opens is written and committed under ctx.
func (p *partition) append(ctx context.Context, enc string, millis int64, r record) error {
	now := p.now()
	wasEmpty := p.w.Empty()
	if err := p.w.Append(ctx, enc, r.Schema, r.Offset, r.Datum, now); err != nil {
		return err
	}
	if wasEmpty {
		p.pendingMillis = 0 // the open files start here: what was pending before was committed or discarded
	}
	p.countLate(millis)
	p.pendingMillis = max(p.pendingMillis, millis, 0)
	if r.Schema != nil {
		p.current = r.Schema // current follows what is written, never what was only decided
	}
	p.appended = r.LeaderEpoch
	if wasEmpty {
		p.next = p.nextScheduled(now)
		if p.cfg.Catalog != nil && r.Schema != nil {
			p.cfg.Catalog.SchemaSeen(p.topic(), r.Schema.ID, r.Schema.Text)
		}
	}
	return nil
}

// countLate counts a record as late when its partition had already gone
// past its time directory's end by the lateness: a marker may have judged
// that directory complete (docs/design.md §11). The record is written all
// the same, exactly once, where it belongs.
func (p *partition) countLate(millis int64) {
	seen := max(p.recordMillis, p.pendingMillis)
	lateness := p.cfg.Lateness.Milliseconds()
	if !p.cfg.CountLate || millis >= seen-lateness { // a directory ends after its records: not late
		return
	}
	if timed, ok := p.cfg.Partitioner.(partitioner.Timed); ok {
		if _, end := timed.Span(millis); end+lateness <= seen {
			p.cfg.Stats.LateRecords.Add(1)
		}
	}
}

// resolveSchema applies schema.compatibility to a record: it reads the
// record with the current schema (a doc-only change, or a record projected
// to it) or keeps its own schema, which rotates the open files before it
// and becomes current once the record is written.
func (p *partition) resolveSchema(ctx context.Context, r *record) error {
	if r.Schema != nil && p.current == nil && p.restore != 0 {
		if err := p.restoreCurrent(ctx); err != nil {
			return err
		}
	}
	if r.Schema == nil || p.current == nil || p.current.ID == r.Schema.ID {
		return nil // schemaless, the first record, or no change
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
	}
	return nil
}

// restoreCurrent makes the committed files' schema current again after a
// recovery: the verdict on a record (written, projected, or bad) must not
// depend on whether a crash or a rebalance came before it. A registry
// failure is not the record's fault (the partition retries); a schema the
// registry no longer has leaves the next record's schema current, loudly.
func (p *partition) restoreCurrent(ctx context.Context) error {
	id := p.restore
	if p.cfg.SchemaByID == nil {
		p.restore = 0
		return nil
	}
	s, err := p.cfg.SchemaByID(ctx, id)
	switch {
	case errors.Is(err, schema.ErrRegistryRefused):
		return err
	case errors.Is(err, schema.ErrUnknownSchema):
		p.cfg.Logger.Error("the schema of the committed files is no longer in the registry: the next record's schema becomes current, "+
			"so schema.compatibility may judge records differently than before the recovery", "schema_id", id, "err", err)
	case err != nil:
		// %v, not %w: whatever the registry said, it is not this record's fault.
		return fmt.Errorf("look up schema %d of the committed files: %v", id, err)
	}
	p.current, p.restore = s, 0
	return nil
}

// now is the time the current batch started, or the clock's outside one.
func (p *partition) now() time.Time {
	if p.batchAt.IsZero() {
		return p.cfg.Now()
	}
	return p.batchAt
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
	p.held = false
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

// memoryDue is the commit the memory ceiling asks for, to run off the
// poll loop (commitDetached), or nil with nothing open. The partition
// waits in WRITE_PARTITION_PAUSED, as tick leaves it.
func (p *partition) memoryDue() *commitDue {
	if p.w.Empty() {
		return nil
	}
	p.enter(WritePartitionPaused)
	return &commitDue{reason: memoryReason}
}

// memoryReason is why the memory ceiling rotated a partition's files.
const memoryReason = "memory ceiling (hdfs.sink.memory.max.bytes / run --memory-max-bytes)"

// discard drops the open files without committing them: their records are
// consumed again by whoever owns the partition next.
func (p *partition) discard(ctx context.Context) {
	if err := p.w.Discard(ctx); err != nil {
		p.cfg.Logger.Warn("discard temp files", "err", err)
	}
}

// maybeRotate commits the open files when a trigger says so, or with
// detach set hands the commit back to its caller (commitDue).
func (p *partition) maybeRotate(ctx context.Context, r *record, detach bool) error {
	if p.w.Empty() {
		return nil
	}
	reason := p.rotateReason(r)
	if reason == "" || deferrable(reason) && !p.mayRotateNow() {
		return nil
	}
	if detach {
		return &commitDue{reason: reason}
	}
	return p.rotate(ctx, reason)
}

// mayRotateNow asks the poll's budget for a time-driven rotation, once per
// batch or tick: refused, the open files take this batch's records too, as
// if the timer had fired later, and the rotation comes in a later poll.
func (p *partition) mayRotateNow() bool {
	if p.held {
		return false
	}
	p.held = p.cfg.MayRotate != nil && !p.cfg.MayRotate()
	return !p.held
}

func (p *partition) rotateReason(r *record) string {
	now := p.now()
	switch {
	case p.w.Records() >= p.cfg.FlushSize:
		return "flush.size"
	case p.cfg.MaxFileBytes > 0 && p.w.Bytes() >= p.cfg.MaxFileBytes:
		return "hdfs.sink.rotate.max.file.bytes"
	case r != nil && p.schemaChanged(r.Schema):
		return "schema change"
	case p.cfg.RotateInterval > 0 && now.Sub(p.w.OpenedAt()) >= p.cfg.RotateInterval:
		return reasonInterval
	case p.scheduleDue(now):
		return reasonSchedule
	}
	return ""
}

// scheduleDue reports whether rotate.schedule.interval.ms has come. The
// schedule is on the wall clock (boundaries aligned to the day), unlike
// rotate.interval.ms, which measures on the monotonic clock and ignores
// clock jumps. A clock set forward past the boundary rotates at once, as
// it should: the files' interval is over. A clock set back by more than an
// interval would hold the files until the clock catches up with the old
// boundary (an hour back, with an hourly schedule: no scheduled rotation
// for two hours); the next boundary is computed anew from the clock's time.
func (p *partition) scheduleDue(now time.Time) bool {
	if p.cfg.RotateSchedule <= 0 || p.next.IsZero() {
		return false
	}
	if now.Before(p.next.Add(-p.cfg.RotateSchedule)) {
		next := p.nextScheduled(now)
		p.cfg.Logger.Warn("wall clock went back; the rotation schedule follows it", "next_was", p.next, "next", next)
		p.next = next
	}
	return !now.Before(p.next)
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
// Each step is timed for the observer (real time, not cfg.Now: tests fake
// the clock for rotation triggers, not for latencies).
func (p *partition) rotate(ctx context.Context, reason string) error {
	p.enter(ShouldRotate)
	bytes, start := p.w.Bytes(), time.Now()
	closed, err := p.w.Close()
	if err != nil {
		return err
	}
	start = p.stepDone(StepClose, start)
	p.enter(TempFileClosed)
	e := p.walEntry(entry.KindCommit, p.commitStanding(closed), closed)
	if err := p.publishCommit(ctx, e, closed); err != nil {
		return err
	}
	start = p.stepDone(StepPublish, start)
	p.enter(WALAppended)
	if err := p.applyOwnMoves(ctx, e.Files); err != nil {
		return err
	}
	p.stepDone(StepRename, start)
	p.enter(FileCommitted)
	p.committed, p.epoch, p.recordMillis = e.CommittedOffset, e.LeaderEpoch, e.MaxRecordMillis
	p.registerPartitions(closed)
	p.cfg.Logger.Info("files committed", "reason", reason, "files", len(closed), "end_offset", p.committed, "seq", p.seq)
	p.cfg.Observer.Committed(Commit{Files: len(closed), Records: records(closed), Bytes: bytes, Next: p.committed + 1, At: time.Now()})
	p.cfg.OnCommit(p.committed + 1)
	p.pruneSometimes(ctx)
	p.enter(WritePartitionPaused)
	return nil
}

// stepDone reports a commit step that began at start and returns when the
// next one begins.
func (p *partition) stepDone(step CommitStep, start time.Time) time.Time {
	now := time.Now()
	p.cfg.Observer.CommitStep(step, now.Sub(start))
	return now
}

func records(closed []writer.Closed) int64 {
	var n int64
	for _, c := range closed {
		n += c.Records
	}
	return n
}

// applyOwnMoves renames the files of the commit this owner just published.
// A move with neither its temp nor its final file can never be legitimate
// here: the error stops the partition instead of advancing past lost data.
func (p *partition) applyOwnMoves(ctx context.Context, moves []entry.FileMove) error {
	for _, m := range moves {
		err := p.move(ctx, m)
		if errors.Is(err, errCommittedFileMissing) {
			p.cfg.Stats.MissingFiles.Add(1)
		}
		if err != nil {
			return err
		}
	}
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
func (p *partition) pruneSometimes(ctx context.Context) {
	if p.seq%max(p.cfg.PruneEvery, 1) != 0 {
		return
	}
	if err := p.log.Prune(ctx, p.seq); err != nil {
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
//
// A commit whose final names are too long for the store is never published:
// its renames could never succeed, and recovery would retry them forever
// (audit F7). CheckNames at assignment assumes offsets of pad digits; this
// guard sees offsets that have outgrown them.
func (p *partition) publishCommit(ctx context.Context, e entry.Entry, closed []writer.Closed) error {
	if err := p.checkFinalNames(e.Files); err != nil {
		p.discardClosed(ctx, closed) // nothing refers to them: the commit was not published
		return err
	}
	seq := p.seq + 1
	err := p.log.Publish(ctx, seq, e)
	if errors.Is(err, wal.ErrSeqTaken) {
		p.discardClosed(ctx, closed)
		return p.fencedBy(ctx, seq, fmt.Sprintf("segment %d exists", seq))
	}
	if err != nil {
		// Unknown outcome (a lost reply, or a context that ended while
		// waiting): the segment may stand. Keep the temp files for
		// recovery, which applies the segment if it stands and removes them if not.
		return fmt.Errorf("publish WAL segment %d: %w", seq, err)
	}
	p.seq = seq
	head, err := p.newestSegment(ctx)
	if err != nil {
		return fmt.Errorf("list WAL after publishing %d: %w", seq, err)
	}
	if head != seq {
		return p.fencedBy(ctx, head, fmt.Sprintf("segment %d published below the newest, %d", seq, head))
	}
	return nil
}

// checkFinalNames fails when a final name of the commit is longer than the
// store allows, naming the first such file's offsets.
func (p *partition) checkFinalNames(moves []entry.FileMove) error {
	for _, m := range moves {
		if err := p.cfg.Layout.CheckCommitName(p.cfg.Partition, m.StartOffset, m.EndOffset, p.cfg.Pad, p.cfg.Format.Extension()); err != nil {
			return err
		}
	}
	return nil
}

func (p *partition) discardClosed(ctx context.Context, closed []writer.Closed) {
	for _, c := range closed {
		if err := p.cfg.FS.Remove(ctx, c.Temp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.cfg.Logger.Warn("remove unpublished temp file", "file", c.Temp, "err", err)
		}
	}
}
