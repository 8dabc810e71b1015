package completeness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// DefaultMarkerName is Hadoop's convention for "this directory is done".
const DefaultMarkerName = "_SUCCESS"

// HiveParameter is the Hive partition parameter a complete directory gets,
// with the frontier (epoch milliseconds) it was judged complete at.
const HiveParameter = "hdfs.sink.complete"

// Catalog is the metastore side of a marking: set the partition parameter
// of a complete directory. It must be idempotent and fail while the
// partition is not registered yet (the marker then retries on its next
// pass, and writes no _SUCCESS before the parameter is set).
type Catalog interface {
	MarkComplete(ctx context.Context, topic, encoded string, params map[string]string) error
}

// Step is a step of marking one directory, a fault-injection point.
type Step int

// Marking steps, in order.
const (
	StepJudged    Step = iota + 1 // the directory is complete and not marked yet
	StepCataloged                 // the Hive parameter is set
	StepMarked                    // the _SUCCESS file is written
)

func (s Step) String() string {
	switch s {
	case StepJudged:
		return "judged"
	case StepCataloged:
		return "cataloged"
	case StepMarked:
		return "marked"
	}
	return "step?"
}

// Config is one topic's marker.
type Config struct {
	FS          storage.FS
	Layout      layout.Topic
	Partitioner partitioner.Timed
	Lateness    time.Duration
	// Lookback is how far behind the frontier the first pass looks for
	// directories left unmarked (a crash, a restart): later passes go on
	// from where the previous one stopped.
	Lookback time.Duration
	// MarkerName is the marker file's name (DefaultMarkerName when "").
	MarkerName string
	// LogEnds gives the log end offset of every partition of the topic;
	// its keys are the topic's partitions.
	LogEnds func(ctx context.Context, topic string) (map[int32]int64, error)
	Catalog Catalog // nil: no Hive
	Now     func() time.Time
	Logger  *slog.Logger
	// Marked hears of every directory this marker marked (the metric).
	Marked func(encoded string)
	// Faults, when set, is called on entering each step of a marking.
	Faults func(Step)
}

// Marker marks the complete time directories of one topic. One goroutine
// runs it; any number of markers may run for a topic at once (a rebalance,
// two daemons): every step is idempotent and the marker file's exclusive
// create decides which of them counts the marking.
type Marker struct {
	cfg    Config
	cursor int64 // the time from which the next pass looks, at least the lookback from the frontier
	last   Pass
}

// Pass is what one pass found.
type Pass struct {
	At      time.Time
	Verdict Verdict
	Marked  []string // directories this pass marked
	// From is the time the pass began looking at (epoch milliseconds):
	// the end of the last directory an earlier pass went past, or the
	// lookback before the frontier if that is later.
	From int64
	// Blocked, when not empty, is a directory judged complete that cannot
	// be marked yet: the newest commit of a partition has files for it
	// that are not renamed yet, or the catalog failed.
	Blocked string
}

// NewMarker returns a marker for cfg.
func NewMarker(cfg Config) *Marker {
	if cfg.MarkerName == "" {
		cfg.MarkerName = DefaultMarkerName
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Marked == nil {
		cfg.Marked = func(string) {}
	}
	if cfg.Faults == nil {
		cfg.Faults = func(Step) {}
	}
	return &Marker{cfg: cfg}
}

// Last is the previous pass (for /status).
func (m *Marker) Last() Pass { return m.last }

// Run makes one pass: read how far every partition has committed, then
// mark each complete directory from the cursor on, in time order, and stop
// at the first that is not complete or cannot be marked yet.
func (m *Marker) Run(ctx context.Context) (Pass, error) {
	pass, heads, err := m.judge(ctx)
	if err != nil {
		return pass, err
	}
	if len(pass.Verdict.Holding) == 0 {
		m.last = pass
		return pass, nil
	}
	// Never look further back than the lookback from the frontier: before
	// the first commits the frontier says 1970, and a cursor set then
	// would walk every hour since.
	m.cursor = max(m.cursor, pass.Verdict.Frontier-m.cfg.Lookback.Milliseconds())
	pass.From = m.cursor
	for at := m.cursor; ; {
		dir, end := m.cfg.Partitioner.Span(at)
		if !pass.Verdict.Complete(end) {
			break
		}
		marked, err := m.mark(ctx, dir, pass.Verdict, heads)
		if err != nil {
			pass.Blocked = dir
			m.last = pass
			return pass, err
		}
		if marked {
			pass.Marked = append(pass.Marked, dir)
		}
		at, m.cursor = end, end
	}
	m.last = pass
	return pass, nil
}

// judge reads the clock, then every partition's log end, then its WAL
// head: in that order, an idle partition's committed offset covers every
// record its log held when the clock was read.
func (m *Marker) judge(ctx context.Context) (Pass, []entry.Entry, error) {
	pass := Pass{At: m.cfg.Now()}
	ends, err := m.cfg.LogEnds(ctx, m.cfg.Layout.Name)
	if err != nil {
		return pass, nil, fmt.Errorf("completeness of %s: log end offsets: %w", m.cfg.Layout.Name, err)
	}
	if len(ends) == 0 {
		return pass, nil, fmt.Errorf("completeness of %s: Kafka names no partitions", m.cfg.Layout.Name)
	}
	parts := make([]Progress, 0, len(ends))
	heads := make([]entry.Entry, 0, len(ends))
	for p := int32(0); p < int32(len(ends)); p++ {
		end, ok := ends[p]
		if !ok {
			return pass, nil, fmt.Errorf("completeness of %s: no log end offset for partition %d", m.cfg.Layout.Name, p)
		}
		head, err := m.head(ctx, p)
		if err != nil {
			return pass, nil, err
		}
		heads = append(heads, head)
		parts = append(parts, Progress{Partition: p, MaxRecordMillis: head.MaxRecordMillis, Committed: head.CommittedOffset, LogEnd: end})
	}
	pass.Verdict = Frontier(parts, pass.At, m.cfg.Lateness)
	return pass, heads, nil
}

// head is the newest WAL segment of partition p; a partition without a
// WAL has committed nothing this marker can see.
func (m *Marker) head(ctx context.Context, p int32) (entry.Entry, error) {
	log := wal.Open(m.cfg.FS, m.cfg.Layout.WALDir(p))
	seqs, err := log.Segments(ctx)
	if err != nil {
		return entry.Entry{}, fmt.Errorf("completeness of %s: list WAL of partition %d: %w", m.cfg.Layout.Name, p, err)
	}
	if len(seqs) == 0 {
		return entry.Entry{Partition: p, CommittedOffset: -1}, nil
	}
	e, err := log.Read(ctx, seqs[len(seqs)-1])
	if err != nil {
		return entry.Entry{}, fmt.Errorf("completeness of %s: read WAL head %d of partition %d: %w", m.cfg.Layout.Name, seqs[len(seqs)-1], p, err)
	}
	return e, nil
}

// mark marks one complete directory unless it is marked already or holds
// no files; marked reports whether this call wrote the marker. The Hive
// parameter comes first and the marker file last: the marker's existence
// is the state, so a crash between them sets the parameter again (it is
// idempotent) and a crash after leaves nothing to do.
func (m *Marker) mark(ctx context.Context, encoded string, v Verdict, heads []entry.Entry) (marked bool, err error) {
	// First the pending renames: the newest commit's first file for the
	// directory may be what creates it.
	if err := m.applied(ctx, encoded, heads); err != nil {
		return false, err
	}
	dir := path.Join(m.cfg.Layout.Dir(), encoded)
	if exists, err := m.exists(ctx, dir); err != nil || !exists {
		return false, err // no records in that time: nothing to mark
	}
	marker := path.Join(dir, m.cfg.MarkerName)
	if exists, err := m.exists(ctx, marker); err != nil || exists {
		return false, err
	}
	m.cfg.Faults(StepJudged)
	if m.cfg.Catalog != nil {
		params := map[string]string{HiveParameter: strconv.FormatInt(v.Frontier, 10)}
		if err := m.cfg.Catalog.MarkComplete(ctx, m.cfg.Layout.Name, encoded, params); err != nil {
			return false, fmt.Errorf("completeness of %s: Hive parameter of %s: %w", m.cfg.Layout.Name, encoded, err)
		}
	}
	m.cfg.Faults(StepCataloged)
	created, err := m.create(ctx, marker)
	if err != nil || !created {
		return false, err
	}
	m.cfg.Faults(StepMarked)
	m.cfg.Logger.Info("time directory complete", "topic", m.cfg.Layout.Name, "directory", encoded,
		"marker", marker, "frontier", time.UnixMilli(v.Frontier).UTC().Format(time.RFC3339), "idle_partitions", v.Idle)
	m.cfg.Marked(encoded)
	return true, nil
}

// applied fails when the newest commit of a partition has files for the
// directory that are not at their final names yet: its owner (or the next
// recovery) is still renaming them, and a reader that trusts the marker
// would miss them. Only the newest segment can be unapplied.
func (m *Marker) applied(ctx context.Context, encoded string, heads []entry.Entry) error {
	for _, h := range heads {
		if h.Kind != entry.KindCommit {
			continue
		}
		for _, f := range h.Files {
			if e, ok := m.cfg.Layout.EncodedDir(f.Final); !ok || e != encoded {
				continue
			}
			exists, err := m.exists(ctx, f.Final)
			if err != nil {
				return err
			}
			if !exists {
				return &PendingError{Topic: m.cfg.Layout.Name, Partition: h.Partition, Encoded: encoded, File: f.Final}
			}
		}
	}
	return nil
}

// PendingError says a complete directory waits for a commit's renames.
type PendingError struct {
	Topic     string
	Partition int32
	Encoded   string
	File      string
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("completeness of %s: %s waits for partition %d's commit to rename %s", e.Topic, e.Encoded, e.Partition, e.File)
}

func (m *Marker) exists(ctx context.Context, name string) (bool, error) {
	_, err := m.cfg.FS.Stat(ctx, name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("completeness of %s: %w", m.cfg.Layout.Name, err)
}

// create writes the empty marker file; created is false when another
// marker wrote it first (Create is exclusive).
func (m *Marker) create(ctx context.Context, marker string) (created bool, err error) {
	f, err := m.cfg.FS.Create(ctx, marker)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("completeness of %s: create %s: %w", m.cfg.Layout.Name, marker, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("completeness of %s: close %s: %w", m.cfg.Layout.Name, marker, err)
	}
	return true, nil
}
