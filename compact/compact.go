// Package compact owns compaction: merging the committed files of one
// encoded directory of a topic into fewer files, named by the reference's
// rule, built beside the directory and switched to by one Hive metastore
// call, so that readers see every record exactly once at every moment
// (docs/design.md §12). It streams Avro blocks and Parquet batches (each
// input read once), fences the topic's writers through their WAL claims
// (Options.Fence) and switches readers through Options.Catalog; it knows
// neither the sink's state machine nor the metastore. Policy is the
// daemon's choice of the directories to compact (hdfs.sink.compaction.*);
// the compaction itself is the same Run as `hdfs-sink compact`'s.
package compact

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Defaults of Options.
const (
	DefaultTargetBytes = 128 << 20 // HDFS's default block size
	DefaultMinAge      = time.Hour
	DefaultGrace       = time.Hour
)

// Catalog moves readers: the Hive partition of the encoded directory gets
// location (a path in the store). Called only after the generation at
// location is complete, and only ever with that one location per
// directory, so a repeated or late call sets what already stands.
type Catalog interface {
	SetLocation(ctx context.Context, topic, encoded, location string) error
}

// Options is one topic's compaction.
type Options struct {
	FS            storage.FS
	Topic         layout.Topic
	Ext           string // the connector's files: ".avro" or ".parquet"
	Pad           int    // filename.offset.zero.pad.width
	TargetBytes   int64  // inputs are merged up to about this size
	RowGroupBytes int64  // Parquet outputs' row groups
	MinAge        time.Duration
	Grace         time.Duration
	Now           func() time.Time
	// Fence claims partition p (sink.FenceForCompaction).
	Fence   func(ctx context.Context, p int32) error
	Catalog Catalog
	Logger  *slog.Logger
	// AtStep, when set, is called as each step begins ("C2 build" to "C8
	// clean"): the fault point `hdfs-sink compact` kills itself at
	// (HDFS_SINK_COMPACT_CRASH_AT), for the real-service tests.
	AtStep func(step string)
}

func (o *Options) defaults() {
	if o.TargetBytes <= 0 {
		o.TargetBytes = DefaultTargetBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AtStep == nil {
		o.AtStep = func(string) {}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// State is how far a directory's compaction got.
type State string

// The states, in order.
const (
	StateNone      State = "none"      // no generation: compaction not started or not published
	StatePublished State = "published" // generation published, readers not yet switched
	StateDone      State = "done"      // readers switched; inputs removed after the grace period
)

// Input is one committed file of the directory.
type Input struct {
	Path    string
	Range   layout.FileRange
	Bytes   int64
	ModTime time.Time
}

// Run is files of one Kafka partition, consecutive in offset order, to be
// merged into one file (more when their schemas differ).
type Run struct {
	Partition int32
	Inputs    []Input
}

// Plan is what a compaction of one directory would do.
type Plan struct {
	Topic      string
	Dir        string // encoded, relative to the topic's directory
	State      State
	Files      int   // committed files in the directory
	Bytes      int64 // their size
	Runs       []Run // runs of more than one file (the others are copied as they are)
	Copies     []Input
	Refused    string // non-empty: the directory is not compacted, and why
	Generation string // the generation's path
}

// Outputs is at least how many files the directory will hold after.
func (p Plan) Outputs() int { return len(p.Runs) + len(p.Copies) }

// RefusedError says why a directory is not compacted.
type RefusedError struct {
	Topic, Dir, Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("topic %s directory %s: not compacted: %s", e.Topic, e.Dir, e.Reason)
}

// Compactor compacts directories of one topic.
type Compactor struct{ o Options }

// New returns a Compactor.
func New(o Options) *Compactor {
	o.defaults()
	return &Compactor{o: o}
}

// Directories lists the encoded directories of the topic that hold
// committed files, generations excluded.
func (c *Compactor) Directories(ctx context.Context) ([]string, error) {
	var dirs []string
	skip := func(name string) bool { return layout.IsTempDir(name) || name == layout.CompactedDirName }
	err := storage.WalkFiles(ctx, c.o.FS, c.o.Topic.Dir(), skip, func(name string) error {
		if r, ok := layout.ParseFinalName(name); ok && r.Topic == c.o.Topic.Name {
			if dir, ok := c.o.Topic.EncodedDir(name); ok && !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	slices.Sort(dirs)
	return dirs, err
}

// state is how far the compaction of encoded got.
func (c *Compactor) state(ctx context.Context, encoded string) (State, error) {
	gen := c.o.Topic.CompactedDir(encoded)
	if _, err := c.o.FS.Stat(ctx, path.Join(gen, layout.CompactedMarker)); err == nil {
		return StateDone, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if _, err := c.o.FS.Stat(ctx, gen); err == nil {
		return StatePublished, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return StateNone, nil
}

// Plan says what compacting encoded would do, changing nothing.
func (c *Compactor) Plan(ctx context.Context, encoded string) (Plan, error) {
	plan := Plan{Topic: c.o.Topic.Name, Dir: encoded, Generation: c.o.Topic.CompactedDir(encoded)}
	st, err := c.state(ctx, encoded)
	if err != nil {
		return plan, err
	}
	plan.State = st
	inputs, refused, err := c.list(ctx, path.Join(c.o.Topic.Dir(), encoded))
	if err != nil {
		return plan, err
	}
	plan.Refused = refused
	for _, in := range inputs {
		plan.Files++
		plan.Bytes += in.Bytes
	}
	if st != StateNone {
		if st == StateDone {
			plan.Refused = "compacted already (a directory is compacted once: docs/design.md §12)"
		}
		return plan, nil
	}
	if plan.Refused == "" {
		plan.Refused = c.tooYoung(inputs)
	}
	plan.Runs, plan.Copies = c.runs(inputs)
	if plan.Refused == "" && len(plan.Runs) == 0 {
		plan.Refused = "nothing to merge (no two files of one partition)"
	}
	return plan, nil
}

// list reads the committed files of dir, in partition and offset order.
// Hidden names are skipped (readers skip them too); anything else that is
// not a committed file refuses the directory.
func (c *Compactor) list(ctx context.Context, dir string) ([]Input, string, error) {
	infos, err := c.o.FS.ReadDir(ctx, dir)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", dir, err)
	}
	var inputs []Input
	for _, fi := range infos {
		p := path.Join(dir, fi.Name())
		if fi.IsDir() {
			continue // a nested encoded directory, compacted on its own
		}
		if layout.IsHidden(fi.Name()) {
			continue // no reader reads it as data: a completeness marker (_SUCCESS) stays where it is
		}
		r, ok := layout.ParseFinalName(p)
		if !ok || r.Topic != c.o.Topic.Name || r.Ext != c.o.Ext {
			return nil, fmt.Sprintf("%s is not a committed %s file of topic %s", p, c.o.Ext, c.o.Topic.Name), nil
		}
		inputs = append(inputs, Input{Path: p, Range: r, Bytes: fi.Size(), ModTime: fi.ModTime()})
	}
	slices.SortFunc(inputs, func(a, b Input) int {
		if a.Range.Partition != b.Range.Partition {
			return int(a.Range.Partition) - int(b.Range.Partition)
		}
		return int(a.Range.Start - b.Range.Start)
	})
	return inputs, "", nil
}

func (c *Compactor) tooYoung(inputs []Input) string {
	now := c.o.Now()
	for _, in := range inputs {
		if age := now.Sub(in.ModTime); age < c.o.MinAge {
			return fmt.Sprintf("%s is %s old, younger than the minimum age %s", path.Base(in.Path), age.Round(time.Second), c.o.MinAge)
		}
	}
	return ""
}

// runs groups inputs per partition into runs up to the target size; a
// file alone in its run is copied as it is.
func (c *Compactor) runs(inputs []Input) (runs []Run, copies []Input) {
	var cur Run
	var size int64
	flush := func() {
		switch len(cur.Inputs) {
		case 0:
		case 1:
			copies = append(copies, cur.Inputs[0])
		default:
			runs = append(runs, cur)
		}
		cur, size = Run{}, 0
	}
	for _, in := range inputs {
		if len(cur.Inputs) > 0 && (in.Range.Partition != cur.Partition || size+in.Bytes > c.o.TargetBytes) {
			flush()
		}
		cur.Partition = in.Range.Partition
		cur.Inputs = append(cur.Inputs, in)
		size += in.Bytes
	}
	flush()
	return runs, copies
}

// describe is a plan in words, for the dry run and the log.
func (p Plan) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s: %d files, %d bytes, state %s", p.Topic, p.Dir, p.Files, p.Bytes, p.State)
	if p.Refused != "" {
		fmt.Fprintf(&b, ": %s", p.Refused)
	}
	return b.String()
}
