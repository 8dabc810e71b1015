package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// Audit, unlike Check, knows nothing of what was produced: it compares a
// topic's committed file names with Kafka's log offsets and with each
// partition's WAL head, for `hdfs-sink verify`. Without Deep it lists
// directories and reads only WAL heads, so it stays cheap on large topics.

// LogOffsets is what Kafka says of one partition: the log start offset and
// the log end offset (the offset the next record will get).
type LogOffsets struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Prober asks Kafka which records it still holds. FirstRecord returns the
// offset of the first record at or after from, or the log end when there
// is none. It tells a hole in HDFS from a range Kafka holds no records in
// (transaction markers, compaction).
type Prober interface {
	FirstRecord(ctx context.Context, topic string, p int32, from int64) (int64, error)
}

// AuditOptions says what to audit and with what evidence.
type AuditOptions struct {
	Layout layout.Topic // topics.dir and logs.dir expanded for the topic, under its routed name
	// KafkaTopic is the consumed topic Kafka and Probe know, when Layout is
	// named otherwise (RegexRouter); "": Layout.Name.
	KafkaTopic string
	// Dense is true for the default partitioner: one directory per Kafka
	// partition, so files must tile the offsets. Other partitioners spread
	// one commit's offsets over several directories, whose files' ranges
	// may then interleave.
	Dense bool
	// Partitions limits the report; nil: every partition Kafka lists or the
	// store has files or a WAL for.
	Partitions []int32
	Kafka      map[int32]LogOffsets // nil or missing: not known
	Probe      Prober               // nil: every gap Kafka's log covers is a hole
	// Deep reads every file: record counts, and with OffsetField (a long
	// column holding each record's Kafka offset, as hdfs.sink.extra.columns
	// =offset writes kafka_offset) every record's offset.
	Deep        bool
	OffsetField string
}

func (o AuditOptions) kafkaTopic() string {
	if o.KafkaTopic != "" {
		return o.KafkaTopic
	}
	return o.Layout.Name
}

// Kind names one sort of violation.
type Kind string

// Violations Audit reports. Each makes the report fail.
const (
	KindHole      Kind = "hole"        // offsets Kafka still has are in no committed file
	KindOverlap   Kind = "overlap"     // two files hold some offsets twice
	KindDuplicate Kind = "duplicate"   // two files name the same offsets
	KindCount     Kind = "count"       // a file's records disagree with its name (Deep)
	KindOffsets   Kind = "offsets"     // a record's offset is outside its file's name, or twice (Deep)
	KindOrphan    Kind = "orphan-temp" // a temp file no owner will commit
	KindWAL       Kind = "wal"         // the WAL head cannot be read: recovery is stuck
	KindBeyondWAL Kind = "beyond-wal"  // committed files past the WAL's committed offset
	KindUnread    Kind = "unreadable"  // a committed file that cannot be read (Deep)
)

// Violation is one finding that breaks exactly-once or blocks the sink.
type Violation struct {
	Kind   Kind   `json:"kind"`
	Path   string `json:"path,omitempty"`
	Detail string `json:"detail"`
}

// WALHead is the newest WAL segment of a partition.
type WALHead struct {
	Segments        int    `json:"segments"`
	Seq             uint64 `json:"seq"`
	Kind            string `json:"kind,omitempty"` // claim or commit; empty without a WAL
	CommittedOffset int64  `json:"committed_offset"`
	Err             string `json:"error,omitempty"`
}

// PartitionReport is the audit of one Kafka partition.
type PartitionReport struct {
	Partition int32       `json:"partition"`
	Files     int         `json:"files"`
	Records   int64       `json:"records"` // by the names; read from the files with Deep
	First     int64       `json:"first_offset"`
	Last      int64       `json:"last_offset"`
	WAL       WALHead     `json:"wal"`
	Log       *LogOffsets `json:"log,omitempty"`
	// Committed is the offset the sink resumes after: the WAL head's, or
	// the names' last without a WAL; -1: nothing committed.
	Committed  int64       `json:"committed_offset"`
	Lag        int64       `json:"uncommitted_lag"` // log end - (Committed+1); -1: log unknown
	InProgress int         `json:"temp_files_in_progress"`
	Violations []Violation `json:"violations,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
}

// TopicReport is the audit of one topic.
type TopicReport struct {
	Topic      string            `json:"topic"`
	Partitions []PartitionReport `json:"partitions"`
	Notes      []string          `json:"notes,omitempty"`
}

// OK reports whether no partition has a violation.
func (r TopicReport) OK() bool {
	for _, p := range r.Partitions {
		if len(p.Violations) > 0 {
			return false
		}
	}
	return true
}

// namedFile is a committed file found by listing.
type namedFile struct {
	path    string
	r       layout.FileRange
	pending bool // the head commit's, still under its temp name
}

// Audit checks one topic. An error means the store could not be listed;
// what it finds is in the report.
func Audit(ctx context.Context, fsys storage.FS, o AuditOptions) (TopicReport, error) {
	rep := TopicReport{Topic: o.Layout.Name}
	byPart, foreign, err := listCommitted(ctx, fsys, o.Layout)
	if err != nil {
		return rep, err
	}
	if len(foreign) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d files that are not committed names are ignored, e.g. %s", len(foreign), foreign[0]))
	}
	parts, err := o.partitions(ctx, fsys, byPart)
	if err != nil {
		return rep, err
	}
	for _, p := range parts {
		pr, err := auditPartition(ctx, fsys, o, p, byPart[p])
		if err != nil {
			return rep, err
		}
		rep.Partitions = append(rep.Partitions, pr)
	}
	return rep, nil
}

// listCommitted walks the topic directory once: committed files by Kafka
// partition, and the names that are not committed files of this topic.
func listCommitted(ctx context.Context, fsys storage.FS, t layout.Topic) (map[int32][]namedFile, []string, error) {
	byPart := map[int32][]namedFile{}
	var foreign, paths []string
	err := storage.WalkFiles(ctx, fsys, t.Dir(), layout.IsTempDir, func(p string) error {
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", t.Dir(), err)
	}
	// A compaction's inputs stay for a grace period beside the generation
	// that holds their records: the generation's files count, not them.
	superseded := t.Superseded(paths)
	for _, p := range paths {
		r, ok := layout.ParseFinalName(p)
		switch {
		case superseded[p], layout.IsHidden(path.Base(p)): // compaction and completeness markers are not data
		case !ok || r.Topic != t.Name:
			foreign = append(foreign, p)
		default:
			byPart[r.Partition] = append(byPart[r.Partition], namedFile{path: p, r: r})
		}
	}
	return byPart, foreign, nil
}

// partitions is the sorted set to report.
func (o AuditOptions) partitions(ctx context.Context, fsys storage.FS, byPart map[int32][]namedFile) ([]int32, error) {
	if o.Partitions != nil {
		return sortedParts(o.Partitions), nil
	}
	seen := map[int32]bool{}
	for p := range byPart {
		seen[p] = true
	}
	for p := range o.Kafka {
		seen[p] = true
	}
	walParts, err := listWALPartitions(ctx, fsys, o.Layout)
	for _, p := range walParts {
		seen[p] = true
	}
	var out []int32
	for p := range seen {
		out = append(out, p)
	}
	return sortedParts(out), err
}

func sortedParts(ps []int32) []int32 {
	out := append([]int32(nil), ps...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// listWALPartitions lists <logs.dir>/<topic>: one directory per partition.
func listWALPartitions(ctx context.Context, fsys storage.FS, t layout.Topic) ([]int32, error) {
	dir := path.Dir(t.WALDir(0))
	infos, err := fsys.ReadDir(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []int32
	for _, fi := range infos {
		var p int32
		if _, err := fmt.Sscanf(fi.Name(), "%d", &p); err == nil && fi.IsDir() && fmt.Sprint(p) == fi.Name() {
			out = append(out, p)
		}
	}
	return out, nil
}

// auditPartition runs every check of one partition.
func auditPartition(ctx context.Context, fsys storage.FS, o AuditOptions, p int32, files []namedFile) (PartitionReport, error) {
	pr := PartitionReport{Partition: p, Files: len(files), First: -1, Last: -1, Committed: -1, Lag: -1}
	if lo, ok := o.Kafka[p]; ok {
		pr.Log = &lo
	}
	var head *entry.Entry
	pr.WAL, head = readHead(ctx, fsys, o.Layout.WALDir(p))
	files = append(files, pendingMoves(ctx, fsys, head, &pr)...)
	sort.Slice(files, func(i, j int) bool { return files[i].r.Start < files[j].r.Start })
	pr.summarize(files)
	pr.committedFrom()
	a := &auditor{ctx: ctx, o: o, pr: &pr}
	a.checkNames(files)
	if err := a.checkTemp(ctx, fsys); err != nil {
		return pr, err
	}
	if o.Deep {
		a.checkRecords(ctx, fsys, files)
	}
	return pr, nil
}

// readHead reads the newest WAL segment; a missing WAL is no error.
func readHead(ctx context.Context, fsys storage.FS, dir string) (WALHead, *entry.Entry) {
	h := WALHead{CommittedOffset: -1}
	log := wal.Open(fsys, dir)
	seqs, err := log.Segments(ctx)
	if err != nil {
		h.Err = err.Error()
		return h, nil
	}
	h.Segments = len(seqs)
	if len(seqs) == 0 {
		return h, nil
	}
	h.Seq = seqs[len(seqs)-1]
	e, err := log.Read(ctx, h.Seq)
	if err != nil {
		h.Err = err.Error()
		return h, nil
	}
	h.Kind, h.CommittedOffset = e.Kind.String(), e.CommittedOffset
	return h, &e
}

// pendingMoves are the head commit's files still under their temp names:
// committed (the WAL says so) and renamed by the owner now, or by the next
// recovery's roll forward. They count as committed files, with a note.
func pendingMoves(ctx context.Context, fsys storage.FS, head *entry.Entry, pr *PartitionReport) []namedFile {
	if head == nil || head.Kind != entry.KindCommit {
		return nil
	}
	var out []namedFile
	for _, m := range head.Files {
		r, ok := layout.ParseFinalName(m.Final)
		if _, err := fsys.Stat(ctx, m.Final); !ok || err == nil {
			continue
		}
		if _, err := fsys.Stat(ctx, m.Temp); err != nil {
			continue // gone under both names: the gap checks report it
		}
		out = append(out, namedFile{path: m.Final, r: r, pending: true})
		pr.note(fmt.Sprintf("%s is committed by WAL segment %d and still named %s: its rename is under way, or the next recovery rolls it forward", m.Final, pr.WAL.Seq, m.Temp))
	}
	pr.Files += len(out)
	return out
}

// summarize counts the files' records and offsets by their names.
func (pr *PartitionReport) summarize(files []namedFile) {
	for _, f := range files {
		pr.Records += f.r.End - f.r.Start + 1
		pr.Last = max(pr.Last, f.r.End)
	}
	if len(files) > 0 {
		pr.First = files[0].r.Start
	}
}

// committedFrom sets where the sink resumes, the lag, and the WAL findings.
func (pr *PartitionReport) committedFrom() {
	switch {
	case pr.WAL.Err != "":
		pr.Committed = pr.Last
		pr.add(KindWAL, "", "the WAL head cannot be read, so recovery of this partition fails until `hdfs-sink wal repair`: "+pr.WAL.Err)
	case pr.WAL.Kind != "":
		pr.Committed = pr.WAL.CommittedOffset
		if pr.Last > pr.Committed {
			pr.add(KindBeyondWAL, "", fmt.Sprintf("committed files reach offset %d, past the WAL head's committed offset %d: no commit accounts for them", pr.Last, pr.Committed))
		}
	default:
		pr.Committed = pr.Last
		if pr.Files > 0 {
			pr.note("no WAL: the sink resumes after the last file name")
		}
	}
	if pr.Log != nil {
		pr.Lag = max(0, pr.Log.End-(pr.Committed+1))
	}
}

func (pr *PartitionReport) add(k Kind, p, detail string) {
	pr.Violations = append(pr.Violations, Violation{Kind: k, Path: p, Detail: detail})
}

func (pr *PartitionReport) note(s string) { pr.Notes = append(pr.Notes, s) }

// auditor carries one partition's audit.
type auditor struct {
	ctx context.Context
	o   AuditOptions
	pr  *PartitionReport
}

// checkNames finds overlaps, duplicates and gaps from the names alone,
// and the gap between the last file and the committed offset.
func (a *auditor) checkNames(files []namedFile) {
	next := int64(-1) // one past the highest offset seen so far
	var prev namedFile
	for i, f := range files {
		if i > 0 && f.r.Start < next {
			a.overlap(prev, f)
		}
		if i > 0 && f.r.Start > next {
			a.gap(next, f.r.Start-1, "before "+f.path)
		}
		if f.r.End+1 > next {
			next, prev = f.r.End+1, f
		}
	}
	if len(files) > 0 && a.pr.Committed >= next {
		a.gap(next, a.pr.Committed, "after the last file, below the WAL's committed offset")
	}
	if len(files) > 0 && a.pr.Log != nil && files[0].r.Start > a.pr.Log.Start {
		a.pr.note(fmt.Sprintf("offsets %d-%d precede the first file: not a hole, the sink may have started there (auto.offset.reset, an offsets reset)", a.pr.Log.Start, files[0].r.Start-1))
	}
}

// overlap reports f, which starts inside an earlier file's range. With a
// partitioner that spreads offsets over directories, ranges of files in
// different directories interleave legitimately; equal starts never do.
func (a *auditor) overlap(prev, f namedFile) {
	same := path.Dir(prev.path) == path.Dir(f.path)
	switch {
	case prev.r.Start == f.r.Start && prev.r.End == f.r.End:
		a.pr.add(KindDuplicate, f.path, fmt.Sprintf("offsets %d-%d are also in %s", f.r.Start, f.r.End, prev.path))
	case prev.r.Start == f.r.Start:
		a.pr.add(KindDuplicate, f.path, fmt.Sprintf("offset %d is also the first of %s", f.r.Start, prev.path))
	case a.o.Dense || same:
		a.pr.add(KindOverlap, f.path, fmt.Sprintf("offsets %d-%d overlap %s (%d-%d)", f.r.Start, f.r.End, prev.path, prev.r.Start, prev.r.End))
	}
}

// gap reports offsets from..to that no file holds: a hole where Kafka
// still has records, a note where retention removed them or none exist.
func (a *auditor) gap(from, to int64, where string) {
	lo := a.pr.Log
	if lo != nil && to < lo.Start {
		a.pr.note(fmt.Sprintf("offsets %d-%d (%s) are in no file and gone from Kafka (retention)", from, to, where))
		return
	}
	if lo != nil {
		from = max(from, lo.Start)
	}
	if a.o.Probe != nil && lo != nil {
		first, err := a.o.Probe.FirstRecord(a.ctx, a.o.kafkaTopic(), a.pr.Partition, from)
		if err != nil {
			a.pr.add(KindHole, "", fmt.Sprintf("offsets %d-%d (%s) are in no file, and asking Kafka whether it holds records there failed: %v", from, to, where, err))
			return
		}
		if first > to {
			a.pr.note(fmt.Sprintf("offsets %d-%d (%s) are in no file; Kafka holds no records there (transaction markers or compaction)", from, to, where))
			return
		}
		from = first
	}
	a.pr.add(KindHole, "", fmt.Sprintf("offsets %d-%d (%s) are in no committed file, and Kafka still has them", from, to, where))
}

// checkTemp reports temp files outside the newest claim directory: their
// owners were fenced by a newer claim and nobody will commit them (the
// next recovery removes them). The newest claim directory's files may be
// a live owner's work, so they are counted, not reported.
func (a *auditor) checkTemp(ctx context.Context, fsys storage.FS) error {
	root := a.o.Layout.TempRoot(a.pr.Partition)
	infos, err := fsys.ReadDir(ctx, root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", root, err)
	}
	newest := ""
	for _, fi := range infos {
		if _, ok := layout.ParseClaimDir(fi.Name()); ok && fi.IsDir() {
			newest = fi.Name() // ReadDir sorts; claim names are fixed-width
		}
	}
	for _, fi := range infos {
		files := []string{path.Join(root, fi.Name())}
		if fi.IsDir() {
			files = nil
			listTemp(ctx, fsys, path.Join(root, fi.Name()), &files)
		}
		if fi.Name() == newest {
			a.pr.InProgress += len(files)
			continue
		}
		for _, f := range files {
			a.pr.add(KindOrphan, f, "a temp file outside the newest claim directory "+newest+": its owner was fenced, nobody commits it")
		}
	}
	return nil
}

// checkRecords reads every file (Deep).
func (a *auditor) checkRecords(ctx context.Context, fsys storage.FS, files []namedFile) {
	a.pr.Records = 0
	seen := map[int64]string{}
	for _, nf := range files {
		if nf.pending {
			continue
		}
		f, err := a.read(ctx, fsys, nf)
		if err != nil {
			a.pr.add(KindUnread, nf.path, err.Error())
			continue
		}
		a.pr.Records += f.Records
		if f.Records == 0 {
			a.pr.add(KindCount, nf.path, "the file holds no records")
			continue
		}
		if a.o.OffsetField != "" {
			a.checkOffsets(f, seen)
			continue
		}
		a.checkCount(f)
	}
}

func (a *auditor) read(ctx context.Context, fsys storage.FS, nf namedFile) (File, error) {
	switch {
	case strings.HasSuffix(nf.path, ".parquet"):
		return readParquet(ctx, fsys, nf.path, nf.r, a.o.OffsetField)
	case strings.HasSuffix(nf.path, ".avro"):
		return readAvro(ctx, fsys, nf.path, nf.r, a.o.OffsetField)
	}
	return File{}, fmt.Errorf("--deep reads Avro and Parquet files only")
}

// checkCount compares the records with the name: equal in one directory
// per partition, at most the range where offsets interleave.
func (a *auditor) checkCount(f File) {
	span := f.Range.End - f.Range.Start + 1
	if f.Records > span || (a.o.Dense && f.Records != span) {
		a.pr.add(KindCount, f.Path, fmt.Sprintf("the name says offsets %d-%d (%d records), the file holds %d", f.Range.Start, f.Range.End, span, f.Records))
	}
}

// checkOffsets compares every record's own offset with the file's name and
// with the partition's other files.
func (a *auditor) checkOffsets(f File, seen map[int64]string) {
	if f.Seqs[0] != f.Range.Start || f.Seqs[len(f.Seqs)-1] != f.Range.End {
		a.pr.add(KindOffsets, f.Path, fmt.Sprintf("the name says offsets %d-%d, the records span %s", f.Range.Start, f.Range.End, span(f.Seqs)))
	}
	for _, off := range f.Seqs {
		if other, dup := seen[off]; dup {
			a.pr.add(KindOffsets, f.Path, fmt.Sprintf("offset %d is also in %s", off, other))
			return
		}
		seen[off] = f.Path
	}
}
