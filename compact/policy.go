package compact

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hdfs-sink/hdfs-sink/layout"
)

// Policy is the daemon's own compaction of one topic
// (hdfs.sink.compaction.*): every pass it looks at each directory of the
// topic and compacts, with Compactor.Run, the ones it chooses, one after
// the other. Whatever it chooses, the compaction itself is the one-shot
// command's: the same steps, the same fence, the same single switch.
type Policy struct {
	C *Compactor
	// MinFiles: a directory with fewer committed files is left.
	MinFiles int
	// Complete says whether a directory is complete (its completeness
	// marker exists); nil: every directory is. The minimum age is the
	// Compactor's (Options.MinAge).
	Complete func(ctx context.Context, encoded string) (bool, error)
	// MaxInputBytes leaves a Parquet directory one of whose inputs is
	// larger: its merge holds two inputs whole (the one decoded and the
	// next, read ahead), two decoded batches of parquetBatchRows rows (the
	// one encoded and the next, decoded ahead) and one output row group,
	// within the connector's memory ceiling. 0: no bound.
	MaxInputBytes int64
	// Pace is the least time from the end of a compaction that fenced
	// the topic's writers to the start of the next compaction of the
	// topic (hdfs.sink.compaction.pace.ms); 0: back to back. Each fence
	// costs every writing partition of the topic its open files and a
	// backoff, so over a backlog of directories the pace bounds the share
	// of the sink's time the fences take (docs/design.md §12, "Pacing").
	Pace time.Duration

	// nextAt is when the next compaction of the topic may begin: the end
	// of the last one that fenced, plus Pace. Only the pass's goroutine
	// touches it.
	nextAt time.Time
}

// Action is what a pass does with a directory.
type Action string

// The actions.
const (
	ActionCompact Action = "compact" // not compacted yet, and chosen
	ActionFinish  Action = "finish"  // published, readers not switched yet (a crash): rolled forward
	ActionClean   Action = "clean"   // switched, merged inputs still there: removed after the grace period
	ActionLeave   Action = "leave"   // nothing to do, or not chosen (the reason says why)
	ActionWait    Action = "wait"    // chosen, but held: the pace does not allow a compaction yet
)

// Choose says what a pass does with a planned directory, and why it
// leaves one. complete is what Policy.Complete said (true without it).
func (p *Policy) Choose(plan Plan, complete bool) (Action, string) {
	switch plan.State {
	case StatePublished:
		return ActionFinish, ""
	case StateDone:
		if plan.Files > 0 {
			return ActionClean, ""
		}
		return ActionLeave, "compacted already"
	}
	switch {
	case !complete:
		return ActionLeave, "not complete yet (no completeness marker)"
	case plan.Refused != "":
		return ActionLeave, plan.Refused
	case plan.Files < p.MinFiles:
		return ActionLeave, fmt.Sprintf("%d committed files, fewer than hdfs.sink.compaction.min.files=%d", plan.Files, p.MinFiles)
	}
	if big := p.largestParquetInput(plan); big != nil {
		return ActionLeave, fmt.Sprintf("%s is %d bytes: a Parquet merge holds two inputs whole, and within the connector's memory ceiling an input may be %d bytes (hdfs.sink.memory.max.bytes / 16)",
			big.Path, big.Bytes, p.MaxInputBytes)
	}
	return ActionCompact, ""
}

// paced turns a compaction the pace does not allow yet at now into a
// wait. Only a new compaction waits: finishing one a crash left
// published makes records committed since visible, and cleaning fences
// nothing.
func (p *Policy) paced(action Action, now time.Time) Action {
	if action == ActionCompact && now.Before(p.nextAt) {
		return ActionWait
	}
	return action
}

// ranFence records a Run that claimed partitions (a compaction's C4,
// whether the Run then succeeded or not): the fence's cost is paid, so
// the next compaction waits Pace from now.
func (p *Policy) ranFence(res Result) {
	if res.Fenced > 0 && p.Pace > 0 {
		p.nextAt = p.C.o.Now().Add(p.Pace)
	}
}

func (p *Policy) largestParquetInput(plan Plan) *Input {
	if p.MaxInputBytes <= 0 || p.C.o.Ext != ".parquet" {
		return nil
	}
	for _, r := range plan.Runs {
		for i, in := range r.Inputs {
			if in.Bytes > p.MaxInputBytes {
				return &r.Inputs[i]
			}
		}
	}
	return nil
}

// Compacted is one directory whose readers a pass switched.
type Compacted struct {
	Dir                     string
	FilesBefore, FilesAfter int
	BytesBefore, BytesAfter int64
	Copied                  int // files committed meanwhile, copied over
	Duration                time.Duration
}

// PolicyPass is what one pass did.
type PolicyPass struct {
	At        time.Time
	Dirs      int         // directories looked at
	Compacted []Compacted // switched by this pass (finished ones included)
	Removed   int         // merged inputs removed after their grace period
	Left      int         // directories not chosen
	// Waiting are directories chosen but held by the pace; the next
	// pass after NextAllowed compacts the first of them (a pass walks
	// the directories in order and skips the compacted ones, so it
	// resumes where the last one stopped).
	Waiting     int
	NextAllowed time.Time // zero: no compaction is held
	Duration    time.Duration
}

// Pass looks at every directory of the topic once and compacts, finishes
// or cleans those Choose picks, one at a time; a compaction the pace does
// not allow yet is held (Waiting) for a later pass. It stops at the first
// failure (retried next pass: every step after the commit point is rolled
// forward by the next Run, docs/design.md §12).
func (p *Policy) Pass(ctx context.Context) (pass PolicyPass, err error) {
	pass = PolicyPass{At: p.C.o.Now()}
	defer func() {
		pass.Duration = p.C.o.Now().Sub(pass.At)
		if pass.Waiting > 0 {
			pass.NextAllowed = p.nextAt
		}
	}()
	dirs, err := p.C.Directories(ctx)
	if err != nil {
		return pass, fmt.Errorf("list the directories of topic %s: %w", p.C.o.Topic.Name, err)
	}
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return pass, err
		}
		pass.Dirs++
		if err := p.dir(ctx, d, &pass); err != nil {
			return pass, err
		}
	}
	return pass, nil
}

// dir does what Choose says with one directory.
func (p *Policy) dir(ctx context.Context, encoded string, pass *PolicyPass) error {
	plan, err := p.C.Plan(ctx, encoded)
	if err != nil {
		return err
	}
	complete := true
	if p.Complete != nil && plan.State == StateNone {
		if complete, err = p.Complete(ctx, encoded); err != nil {
			return fmt.Errorf("is %s complete: %w", encoded, err)
		}
	}
	action, reason := p.Choose(plan, complete)
	if action = p.paced(action, p.C.o.Now()); action == ActionWait {
		pass.Waiting++
		p.C.o.Logger.Debug("compaction waits for its pace", "topic", plan.Topic, "dir", encoded, "next_allowed", p.nextAt,
			"pace", p.Pace)
		return nil
	}
	if action == ActionLeave {
		pass.Left++
		p.C.o.Logger.Debug("compaction leaves a directory", "topic", plan.Topic, "dir", encoded, "reason", reason)
		return nil
	}
	res, err := p.C.Run(ctx, encoded)
	p.ranFence(res)
	pass.Removed += res.Removed
	var refused *RefusedError
	if errors.As(err, &refused) {
		pass.Left++ // found between the plan and the run (a foreign file): left, and said
		p.C.o.Logger.Warn("compaction refused a directory", "topic", plan.Topic, "dir", encoded, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	if res.Switched {
		done := Compacted{Dir: encoded, FilesBefore: plan.Files, BytesBefore: plan.Bytes, Copied: res.Copied, Duration: res.Duration}
		done.FilesAfter, done.BytesAfter, err = p.C.generationFiles(ctx, encoded)
		pass.Compacted = append(pass.Compacted, done)
		p.C.o.Logger.Info("directory compacted", "topic", plan.Topic, "dir", encoded, "files_before", done.FilesBefore,
			"files_after", done.FilesAfter, "bytes_before", done.BytesBefore, "bytes_after", done.BytesAfter, "duration", done.Duration)
	}
	return err
}

// generationFiles counts the committed files of a directory's generation
// and their bytes.
func (c *Compactor) generationFiles(ctx context.Context, encoded string) (int, int64, error) {
	gen := c.o.Topic.CompactedDir(encoded)
	infos, err := c.o.FS.ReadDir(ctx, gen)
	if err != nil {
		return 0, 0, fmt.Errorf("list %s: %w", gen, err)
	}
	n, size := 0, int64(0)
	for _, fi := range infos {
		if r, ok := layout.ParseFinalName(fi.Name()); ok && r.Topic == c.o.Topic.Name {
			n++
			size += fi.Size()
		}
	}
	return n, size, nil
}
