package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/hdfs-sink/hdfs-sink/compact"
	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
)

// compactArgs are `hdfs-sink compact`'s flags.
type compactArgs struct {
	toolFlags
	topic  string
	dir    string
	dryRun bool
	set    wiring.CompactionSettings
}

// compactRow is one directory's line of the report.
type compactRow struct {
	Topic    string        `json:"topic"`
	Dir      string        `json:"dir"`
	State    compact.State `json:"state"`
	Files    int           `json:"files"`
	Bytes    int64         `json:"bytes"`
	Merge    int           `json:"merged_runs"`    // runs of several files to merge
	Outputs  int           `json:"files_after"`    // at least this many files after (a schema change adds one)
	Refused  string        `json:"refused"`        // why not compacted
	Copied   int           `json:"copied_late"`    // files committed meanwhile, copied over
	Removed  int           `json:"inputs_removed"` // inputs removed after the grace period
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// cmdCompact is `hdfs-sink compact`: per directory of each topic of the
// connector, merge the committed files of each Kafka partition and switch
// the Hive partition to the merged set (docs/design.md §12); --dry-run
// only lists what would be merged. Exit 0: done (refused directories are
// reported, not failures); 1: a compaction failed; 2: bad usage; 3: the
// store could not be read.
func cmdCompact(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var a compactArgs
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	fs.StringVar(&a.topic, "topic", "", "only this topic (required with topics.regex)")
	fs.StringVar(&a.dir, "dir", "", "only this encoded directory, relative to the topic's (e.g. year=2026/month=12/day=01/hour=13)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "list what would be merged; change nothing")
	fs.Int64Var(&a.set.TargetBytes, "target-bytes", compact.DefaultTargetBytes, "merge a partition's files up to about this size")
	fs.DurationVar(&a.set.MinAge, "min-age", compact.DefaultMinAge, "leave directories with files younger than this")
	fs.DurationVar(&a.set.Grace, "grace", compact.DefaultGrace, "remove merged inputs this long after readers were switched")
	a.set.AtStep = compactCrashAt(os.Getenv("HDFS_SINK_COMPACT_CRASH_AT"))
	c, ok := a.parseLoad("hdfs-sink compact", fs, args, stderr)
	if !ok {
		return exitUsage
	}
	topics, err := a.topics(c)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink compact:", err)
		return exitUsage
	}
	ctx, cancel := a.context(ctx)
	defer cancel()
	store, err := openToolStore(c)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink compact:", err)
		return exitCantLook
	}
	defer store.Close()
	ws, err := writeSettings(c, store)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink compact:", err)
		return exitUsage
	}
	logins := kerberos.NewLogins(slog.New(slog.DiscardHandler))
	defer logins.Close()
	var rows []compactRow
	status := exitOK
	for _, topic := range topics {
		comp, err := wiring.Compactor(c, store, ws, topic, logins, a.set, toolLogger(stderr))
		if err != nil {
			fmt.Fprintln(stderr, "hdfs-sink compact:", err)
			return exitUsage
		}
		r, st := a.compactTopic(ctx, comp, topic)
		rows, status = append(rows, r...), max(status, st)
	}
	show(stdout, a.json, rows, printCompactRows)
	return status
}

// topics are the topics the flags select: --topic, else the connector's
// listed topics.
func (a compactArgs) topics(c *configs.Connector) ([]string, error) {
	if a.topic != "" {
		return []string{a.topic}, nil
	}
	if len(c.Topics) == 0 {
		return nil, fmt.Errorf("connector %q selects topics by topics.regex: name one with --topic", c.Name)
	}
	return c.Topics, nil
}

func (a compactArgs) compactTopic(ctx context.Context, comp *compact.Compactor, topic string) ([]compactRow, int) {
	dirs := []string{a.dir}
	if a.dir == "" {
		var err error
		if dirs, err = comp.Directories(ctx); err != nil {
			return []compactRow{{Topic: topic, Error: err.Error()}}, exitCantLook
		}
	}
	var rows []compactRow
	status := exitOK
	for _, d := range dirs {
		plan, err := comp.Plan(ctx, d)
		row := rowOf(plan)
		if err == nil && !a.dryRun && (plan.Refused == "" || plan.State == compact.StatePublished || plan.State == compact.StateDone) {
			var res compact.Result
			res, err = comp.Run(ctx, d)
			row.Copied, row.Removed, row.Duration = res.Copied, res.Removed, res.Duration
			if res.Switched {
				row.State = compact.StateDone
			}
			var refused *compact.RefusedError
			if errors.As(err, &refused) {
				row.Refused, err = refused.Reason, nil
			}
		}
		if err != nil {
			row.Error = err.Error()
			status = exitFinding
		}
		rows = append(rows, row)
	}
	return rows, status
}

func rowOf(p compact.Plan) compactRow {
	return compactRow{Topic: p.Topic, Dir: p.Dir, State: p.State, Files: p.Files, Bytes: p.Bytes, Merge: len(p.Runs), Outputs: p.Outputs(), Refused: p.Refused}
}

func printCompactRows(w io.Writer, rows []compactRow) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tDIRECTORY\tSTATE\tFILES\tBYTES\tFILES AFTER\tNOTE")
	for _, r := range rows {
		note := r.Refused
		if r.Error != "" {
			note = "error: " + r.Error
		} else if r.Copied > 0 || r.Removed > 0 {
			note = fmt.Sprintf("%d late files copied, %d inputs removed", r.Copied, r.Removed)
		}
		after := "-" // only a plan of a directory not yet compacted says
		if r.State == compact.StateNone {
			after = fmt.Sprint(r.Outputs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.Topic, r.Dir, r.State, r.Files, r.Bytes, after, note)
	}
	tw.Flush()
}
