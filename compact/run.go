package compact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
)

// Result is what one Run did.
type Result struct {
	Plan     Plan
	Built    int  // files built into the generation (0: another compaction published it)
	Fenced   int  // partitions claimed
	Copied   int  // files committed into the directory after the plan, copied over
	Switched bool // readers moved to the generation
	Removed  int  // inputs removed after the grace period
	Duration time.Duration
}

// Run compacts encoded, or finishes a compaction of it that a crash
// interrupted (docs/design.md §12, steps C1 to C8). Every step after the
// generation is published is idempotent and correct whoever runs it, so
// a Run after any crash rolls the compaction forward; before that, a
// crash leaves only a staging directory, which no reader and no writer
// looks at.
func (c *Compactor) Run(ctx context.Context, encoded string) (Result, error) {
	begin := c.o.Now()
	res := Result{}
	plan, err := c.Plan(ctx, encoded)
	res.Plan = plan
	if err != nil {
		return res, err
	}
	if plan.State == StateNone {
		if plan.Refused != "" {
			return res, &RefusedError{Topic: plan.Topic, Dir: encoded, Reason: plan.Refused}
		}
		if res.Built, err = c.buildAndPublish(ctx, plan); err != nil {
			return res, err
		}
	}
	if plan.State != StateDone {
		if err := c.finish(ctx, encoded, &res); err != nil {
			return res, err
		}
	}
	c.removeDeadStagings(ctx, encoded)
	removed, err := c.clean(ctx, encoded)
	res.Removed = removed
	res.Duration = c.o.Now().Sub(begin)
	return res, err
}

// buildAndPublish is C2 and C3: the generation is built privately, then
// renamed into place. The rename is the compaction's commit point and is
// exclusive: when another compaction's stands, ours is dropped and the
// other's is finished instead.
func (c *Compactor) buildAndPublish(ctx context.Context, plan Plan) (int, error) {
	c.o.AtStep("C2 build")
	staging, built, err := c.build(ctx, plan)
	if err != nil {
		_ = c.o.FS.RemoveAll(ctx, staging)
		return 0, err
	}
	gen := c.o.Topic.CompactedDir(plan.Dir)
	if err := c.o.FS.MkdirAll(ctx, path.Dir(gen)); err != nil {
		return 0, fmt.Errorf("publish %s: %w", gen, err)
	}
	c.o.AtStep("C3 publish")
	err = c.o.FS.Rename(ctx, staging, gen)
	if err == nil {
		c.o.Logger.Info("compaction published", "topic", plan.Topic, "dir", plan.Dir, "files_before", plan.Files, "files_built", built)
		return built, nil
	}
	if _, serr := c.o.FS.Stat(ctx, gen); serr != nil {
		return 0, fmt.Errorf("publish %s: %w", gen, err)
	}
	// Published, by another compaction or by our rename whose reply was
	// lost: either way the generation stands and is finished from here.
	c.o.Logger.Info("compaction's generation already published; finishing it", "topic", plan.Topic, "dir", plan.Dir, "err", err)
	_ = c.o.FS.RemoveAll(ctx, staging)
	return 0, nil
}

// finish is C4 to C7: fence every writer, copy what was committed into
// the directory meanwhile, switch readers, mark.
func (c *Compactor) finish(ctx context.Context, encoded string, res *Result) error {
	c.o.AtStep("C4 fence")
	fenced, err := c.fenceAll(ctx)
	res.Fenced = fenced
	if err != nil {
		return err
	}
	c.o.AtStep("C5 delta")
	if res.Copied, err = c.copyDelta(ctx, encoded); err != nil {
		return err
	}
	gen := c.o.Topic.CompactedDir(encoded)
	c.o.AtStep("C6 switch")
	if err := c.o.Catalog.SetLocation(ctx, c.o.Topic.Name, encoded, gen); err != nil {
		return fmt.Errorf("switch the Hive partition of %s to %s: %w", encoded, gen, err)
	}
	res.Switched = true
	c.o.AtStep("C7 mark")
	return c.mark(ctx, gen)
}

// fenceAll claims every partition of the topic that has a WAL, listed
// after the generation was published: an owner that claimed before that
// has a WAL, so none is missed (docs/design.md §12).
func (c *Compactor) fenceAll(ctx context.Context) (int, error) {
	root := path.Dir(c.o.Topic.WALDir(0))
	infos, err := c.o.FS.ReadDir(ctx, root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("list the WALs of %s: %w", c.o.Topic.Name, err)
	}
	n := 0
	for _, fi := range infos {
		p, err := strconv.ParseInt(fi.Name(), 10, 32)
		if err != nil || !fi.IsDir() {
			continue
		}
		if err := c.o.Fence(ctx, int32(p)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// covers holds the offset ranges of a generation's files, by partition.
type covers map[int32][]layout.FileRange

func (cv covers) covered(r layout.FileRange) bool {
	for _, g := range cv[r.Partition] {
		if g.Start <= r.Start && r.End <= g.End {
			return true
		}
	}
	return false
}

func (c *Compactor) generationCovers(ctx context.Context, gen string) (covers, error) {
	infos, err := c.o.FS.ReadDir(ctx, gen)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", gen, err)
	}
	cv := covers{}
	for _, fi := range infos {
		if r, ok := layout.ParseFinalName(fi.Name()); ok && r.Topic == c.o.Topic.Name {
			cv[r.Partition] = append(cv[r.Partition], r)
		}
	}
	return cv, nil
}

// copyDelta is C5: every file of the directory that no file of the
// generation covers was committed after the plan (and before the fence):
// it is copied into the generation under its own name. Copies are staged
// and renamed, so a file in the generation is always complete; a copy
// made twice puts the same bytes under the same name.
func (c *Compactor) copyDelta(ctx context.Context, encoded string) (int, error) {
	gen := c.o.Topic.CompactedDir(encoded)
	cv, err := c.generationCovers(ctx, gen)
	if err != nil {
		return 0, err
	}
	inputs, refused, err := c.list(ctx, path.Join(c.o.Topic.Dir(), encoded))
	if err != nil {
		return 0, err
	}
	if refused != "" {
		return 0, &RefusedError{Topic: c.o.Topic.Name, Dir: encoded, Reason: refused + " (found after the generation was published: fix it and run compact again)"}
	}
	staging := c.newStaging(encoded)
	defer func() { _ = c.o.FS.RemoveAll(ctx, staging) }()
	n := 0
	for _, in := range inputs {
		if cv.covered(in.Range) {
			continue
		}
		tmp := path.Join(staging, path.Base(in.Path))
		if err := c.copyFile(ctx, in.Path, tmp); err != nil {
			return n, err
		}
		if err := c.o.FS.Rename(ctx, tmp, path.Join(gen, path.Base(in.Path))); err != nil {
			return n, fmt.Errorf("copy %s into %s: %w", in.Path, gen, err)
		}
		n++
	}
	return n, nil
}

// mark is C7: the marker holds when readers were switched, from which the
// grace period runs.
func (c *Compactor) mark(ctx context.Context, gen string) error {
	name := path.Join(gen, layout.CompactedMarker)
	f, err := c.o.FS.Create(ctx, name)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mark %s: %w", gen, err)
	}
	if _, err := io.WriteString(f, c.o.Now().UTC().Format(time.RFC3339Nano)+"\n"); err != nil {
		_ = f.Close()
		return fmt.Errorf("mark %s: %w", gen, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mark %s: %w", gen, err)
	}
	return nil
}

// switchedAt reads the marker; ok is false without one.
func (c *Compactor) switchedAt(ctx context.Context, gen string) (time.Time, bool, error) {
	rc, err := c.o.FS.Open(ctx, path.Join(gen, layout.CompactedMarker))
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 256))
	if err != nil {
		return time.Time{}, false, err
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	if err != nil {
		// A marker cut short by a crash (its Close never returned): the
		// switch happened, its time is unknown; the grace runs from now.
		return c.o.Now(), true, nil
	}
	return t, true, nil
}

// clean is C8: once the grace period after the switch has passed, the
// directory's files that the generation covers are removed. Readers in
// flight had the grace period to finish with them.
func (c *Compactor) clean(ctx context.Context, encoded string) (int, error) {
	gen := c.o.Topic.CompactedDir(encoded)
	at, ok, err := c.switchedAt(ctx, gen)
	if err != nil || !ok || c.o.Now().Sub(at) < c.o.Grace {
		return 0, err
	}
	c.o.AtStep("C8 clean")
	cv, err := c.generationCovers(ctx, gen)
	if err != nil {
		return 0, err
	}
	inputs, _, err := c.list(ctx, path.Join(c.o.Topic.Dir(), encoded))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, in := range inputs {
		if !cv.covered(in.Range) {
			continue // never happens after C5: kept rather than lost
		}
		if err := c.o.FS.Remove(ctx, in.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("remove compacted input: %w", err)
		}
		n++
	}
	return n, nil
}

// removeDeadStagings removes the staging directories of encoded once its
// generation exists: none of them can be published any more.
func (c *Compactor) removeDeadStagings(ctx context.Context, encoded string) {
	if _, err := c.o.FS.Stat(ctx, c.o.Topic.CompactedDir(encoded)); err != nil {
		return
	}
	root := c.o.Topic.CompactionStagingRoot()
	infos, err := c.o.FS.ReadDir(ctx, root)
	if err != nil {
		return
	}
	for _, fi := range infos {
		if strings.HasPrefix(fi.Name(), stagingKey(encoded)+"-") {
			_ = c.o.FS.RemoveAll(ctx, path.Join(root, fi.Name()))
		}
	}
}
