package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// cmdOffsets is `hdfs-sink offsets` (where each partition stands) and
// `hdfs-sink offsets reset` (resume a partition at an offset, through a
// fenced WAL claim: sink.ResetOffset). `offsets --reset-to X` is short for
// `offsets reset --to X`.
func cmdOffsets(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "reset" {
		return cmdOffsetsReset(ctx, args[1:], stdout, stderr)
	}
	for i, a := range args {
		if a == "--reset-to" || a == "-reset-to" {
			rest := append(append([]string{}, args[:i]...), "--to")
			return cmdOffsetsReset(ctx, append(rest, args[i+1:]...), stdout, stderr)
		}
	}
	return cmdOffsetsShow(ctx, args, stdout, stderr)
}

func cmdOffsetsReset(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	r, err := parseReset(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink offsets reset:", err)
		return exitUsage
	}
	return r.run(ctx, stdout, stderr)
}

type resetArgs struct {
	cf               configFlags
	connector, topic string
	partition        int
	to               string
	takeOver         bool
	yes, force       bool
}

func parseReset(args []string, stderr io.Writer) (resetArgs, error) {
	var r resetArgs
	fs := flag.NewFlagSet("offsets reset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	r.cf.register(fs)
	fs.StringVar(&r.connector, "connector", "", "connector name (may be left out when the config holds one connector)")
	fs.StringVar(&r.topic, "topic", "", "topic")
	fs.IntVar(&r.partition, "partition", -1, "Kafka partition")
	fs.StringVar(&r.to, "to", "", "where to resume: an offset, earliest, latest, an RFC 3339 time (the first record at or after it), "+
		"or committed (where the WAL says: with --take-over, hands a renamed connector's partition over unchanged)")
	fs.BoolVar(&r.takeOver, "take-over", false, "allow a WAL written by another connector (one that was renamed and no longer runs)")
	fs.BoolVar(&r.yes, "yes", false, "apply the reset (without it, only say what it would do)")
	fs.BoolVar(&r.force, "force", false, "reset without comparing the offset with Kafka's log (an offset outside it, or Kafka unreachable)")
	if err := fs.Parse(args); err != nil {
		return r, err
	}
	if r.cf.Config == "" || r.topic == "" || r.partition < 0 || r.to == "" {
		return r, errors.New("--config, --topic, --partition and --to are required")
	}
	return r, nil
}

// run checks the reset (the connector consumes the topic; the offset is
// inside the partition's log, unless --force), says what it would do,
// and with --yes publishes the reset claim.
func (r resetArgs) run(ctx context.Context, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "hdfs-sink offsets reset:", err)
		return code
	}
	conns, redact, err := loadConnectors(r.cf)
	if err != nil {
		return fail(exitUsage, errors.New(redact.Text(err.Error())))
	}
	c, err := pickConnector(conns, r.connector)
	if err != nil {
		return fail(exitUsage, err)
	}
	p := int32(r.partition)
	if err := wiring.CheckConsumes(c, r.topic, p); err != nil {
		return fail(exitFinding, err)
	}
	plan := resetPlan{connector: c.Name, topic: r.topic, partition: p, keep: r.to == "committed", forced: r.force}
	if !plan.keep {
		if code, err := r.target(ctx, c, &plan); err != nil {
			return fail(code, err)
		}
	}
	store, err := openToolStore(c)
	if err != nil {
		return fail(exitCantLook, errors.New(redact.Text(err.Error())))
	}
	defer store.Close()
	s, err := writeSettings(c, store)
	if err != nil {
		return fail(exitUsage, err)
	}
	plan.now, plan.nowErr = sink.CommittedOffset(ctx, s, r.topic, p)
	plan.print(stdout)
	if !r.yes {
		fmt.Fprintln(stdout, "nothing changed: run again with --yes to apply this reset")
		return exitFinding
	}
	reset := sink.Reset{Connector: c.Name, Topic: r.topic, Partition: p, Next: plan.next, KeepCommitted: plan.keep, TakeOver: r.takeOver}
	if err := sink.ResetOffset(ctx, s, reset, toolLogger(stderr).With("connector", c.Name)); err != nil {
		return fail(exitFinding, err)
	}
	if plan.keep {
		committed, err := sink.CommittedOffset(ctx, s, r.topic, p)
		if err != nil {
			return fail(exitCantLook, err)
		}
		plan.next = committed + 1
	}
	fmt.Fprintf(stdout, "ok: connector %q topic %s partition %d resumes at offset %d\n", c.Name, r.topic, p, plan.next)
	return exitOK
}

// target resolves --to as an offset (through Kafka unless it is a
// number) and, without --force, refuses one outside the partition's log
// or a Kafka that cannot be asked. The code is the exit status of a
// failure.
func (r resetArgs) target(ctx context.Context, c *configs.Connector, plan *resetPlan) (int, error) {
	n, err := strconv.ParseInt(r.to, 10, 64)
	numeric := err == nil
	if numeric && n < 0 {
		return exitUsage, fmt.Errorf("--to %d: an offset is >= 0", n)
	}
	if numeric && r.force {
		plan.next = n
		return exitOK, nil
	}
	kt, err := newKafkaTool(c, toolLogger(io.Discard))
	if err != nil {
		return exitUsage, err
	}
	defer kt.close()
	if plan.next = n; !numeric {
		if plan.next, err = kt.offsetAt(ctx, r.topic, plan.partition, r.to); err != nil {
			return exitFinding, err
		}
	}
	if r.force {
		return exitOK, nil
	}
	lr, err := wiring.CheckInLog(ctx, kt.admin, r.topic, plan.partition, plan.next)
	var refused *wiring.ResetRefusedError
	switch {
	case errors.As(err, &refused):
		return exitFinding, fmt.Errorf("%w (--force resets anyway)", err)
	case err != nil:
		return exitCantLook, fmt.Errorf("%w; --force resets without this check", err)
	}
	plan.log = &lr
	return exitOK, nil
}

// resetPlan is what a reset will do, printed before it is applied.
type resetPlan struct {
	connector, topic string
	partition        int32
	keep, forced     bool
	next             int64            // where the partition resumes after the reset
	now              int64            // the committed offset now
	nowErr           error            // why now could not be read
	log              *wiring.LogRange // the partition's log; nil: not asked (--force)
}

func (p resetPlan) print(w io.Writer) {
	fmt.Fprintf(w, "connector %q topic %s partition %d:\n", p.connector, p.topic, p.partition)
	if p.nowErr != nil {
		fmt.Fprintf(w, "  resumes at: cannot tell (%v)\n", p.nowErr)
	} else {
		fmt.Fprintf(w, "  resumes now at offset %d (what HDFS has committed)\n", p.now+1)
	}
	switch {
	case p.keep:
		fmt.Fprintln(w, "  the reset keeps where the WAL says it resumes, under this connector's name")
		return
	case p.log != nil:
		fmt.Fprintf(w, "  Kafka's log holds %s\n", p.log)
	case p.forced:
		fmt.Fprintln(w, "  the offset is not compared with Kafka's log (--force)")
	}
	fmt.Fprintf(w, "  the reset makes it resume at offset %d%s\n", p.next, p.effect())
}

// effect says which offsets the reset skips or has written again.
func (p resetPlan) effect() string {
	from := p.now + 1
	switch {
	case p.nowErr != nil || p.next == from:
		return ""
	case p.next > from:
		return fmt.Sprintf(": offsets %d to %d are skipped (verify reports them as a hole)", from, p.next-1)
	case p.next == 0:
		return ": nothing committed, it starts where consumer.auto.offset.reset says (refused while committed files hold offsets)"
	}
	return fmt.Sprintf(": offsets %d to %d are written again (refused while committed files hold them)", p.next, from-1)
}

// partitionOffsets is one row of `hdfs-sink offsets`.
type partitionOffsets struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	HDFSNext  int64  `json:"hdfs_next_offset"` // where recovery resumes; 0 with nothing committed
	Group     *int64 `json:"group_offset"`     // the group's advisory offset; null: none committed
	LogStart  int64  `json:"log_start_offset"` //
	LogEnd    int64  `json:"log_end_offset"`   //
	Lag       int64  `json:"lag"`              // log end - HDFS next
	Error     string `json:"error,omitempty"`  // why HDFS could not tell
}

func cmdOffsetsShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var t toolFlags
	fs := flag.NewFlagSet("offsets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t.register(fs)
	topic := fs.String("topic", "", "only this topic")
	c, ok := t.parseLoad("hdfs-sink offsets", fs, args, stderr)
	if !ok {
		return exitUsage
	}
	ctx, cancel := t.context(ctx)
	defer cancel()
	rows, err := offsetRows(ctx, c, *topic)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink offsets:", err)
		return exitCantLook
	}
	show(stdout, t.json, rows, printOffsets)
	return exitOK
}

// offsetRows asks Kafka for the log and group offsets and the store for
// where each partition resumes.
func offsetRows(ctx context.Context, c *configs.Connector, only string) ([]partitionOffsets, error) {
	kt, topics, err := openTopics(ctx, c)
	if err != nil {
		return nil, err
	}
	defer kt.close()
	group, err := kt.groupOffsets(ctx)
	if err != nil {
		return nil, err
	}
	store, err := openToolStore(c)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var rows []partitionOffsets
	for _, t := range topics {
		if only != "" && t != only {
			continue
		}
		more, err := topicOffsets(ctx, c, kt, store, group, t)
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

func topicOffsets(ctx context.Context, c *configs.Connector, kt *kafkaTool, store storage.FS, group kadm.OffsetResponses, topic string) ([]partitionOffsets, error) {
	logs, err := kt.logOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	s, err := writeSettings(c, store)
	if err != nil {
		return nil, err
	}
	var rows []partitionOffsets
	for p, lo := range logs {
		row := partitionOffsets{Topic: topic, Partition: p, LogStart: lo.Start, LogEnd: lo.End}
		committed, err := sink.CommittedOffset(ctx, s, topic, p)
		if err != nil {
			row.Error = err.Error()
		}
		row.HDFSNext, row.Lag = committed+1, lo.End-(committed+1)
		if g, ok := group.Lookup(topic, p); ok && g.Err == nil && g.At >= 0 {
			row.Group = &g.At
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Partition < rows[j].Partition })
	return rows, nil
}

func printOffsets(w io.Writer, rows []partitionOffsets) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tHDFS NEXT\tGROUP\tLOG START\tLOG END\tLAG")
	for _, r := range rows {
		group := "-"
		if r.Group != nil {
			group = fmt.Sprint(*r.Group)
		}
		next := fmt.Sprint(r.HDFSNext)
		if r.Error != "" {
			next = "UNREADABLE"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t%d\n", r.Topic, r.Partition, next, group, r.LogStart, r.LogEnd, r.Lag)
	}
	tw.Flush()
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(w, "  %s partition %d: %s\n", r.Topic, r.Partition, r.Error)
		}
	}
}
