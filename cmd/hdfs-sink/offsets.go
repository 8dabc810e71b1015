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
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hdfs-sink/hdfs-sink/configs"
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
	next, name, err := r.run(ctx, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink offsets reset:", err)
		return exitFinding
	}
	fmt.Fprintf(stdout, "ok: connector %q topic %s partition %d resumes at offset %d\n", name, r.topic, r.partition, next)
	return exitOK
}

type resetArgs struct {
	cf               configFlags
	connector, topic string
	partition        int
	to               string
	takeOver         bool
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
	if err := fs.Parse(args); err != nil {
		return r, err
	}
	if r.cf.Config == "" || r.topic == "" || r.partition < 0 || r.to == "" {
		return r, errors.New("--config, --topic, --partition and --to are required")
	}
	return r, nil
}

// run resolves the target offset (through Kafka unless it is a number)
// and publishes the reset claim; it returns the offset and the connector.
func (r resetArgs) run(ctx context.Context, stderr io.Writer) (next int64, connector string, err error) {
	conns, redact, err := loadConnectors(r.cf)
	if err != nil {
		return 0, "", errors.New(redact.Text(err.Error()))
	}
	c, err := pickConnector(conns, r.connector)
	if err != nil {
		return 0, "", err
	}
	keep := r.to == "committed"
	if !keep {
		if next, err = r.target(ctx, c); err != nil {
			return 0, c.Name, err
		}
	}
	log := toolLogger(stderr)
	store, err := openToolStore(c)
	if err != nil {
		return 0, c.Name, errors.New(redact.Text(err.Error()))
	}
	defer store.Close()
	s := sink.WriteSettings{FS: store, TopicsDir: c.TopicsDir, LogsDir: c.LogsDir, Now: time.Now}
	reset := sink.Reset{Connector: c.Name, Topic: r.topic, Partition: int32(r.partition), Next: next, KeepCommitted: keep, TakeOver: r.takeOver}
	if err := sink.ResetOffset(ctx, s, reset, log.With("connector", c.Name)); err != nil {
		return 0, c.Name, err
	}
	if keep {
		committed, err := sink.CommittedOffset(s, r.topic, int32(r.partition))
		return committed + 1, c.Name, err
	}
	return next, c.Name, nil
}

// target is --to as an offset.
func (r resetArgs) target(ctx context.Context, c *configs.Connector) (int64, error) {
	if n, err := strconv.ParseInt(r.to, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("--to %d: an offset is >= 0", n)
		}
		return n, nil
	}
	kt, err := newKafkaTool(c, toolLogger(io.Discard))
	if err != nil {
		return 0, err
	}
	defer kt.close()
	return kt.offsetAt(ctx, r.topic, int32(r.partition), r.to)
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
		committed, err := sink.CommittedOffset(s, topic, p)
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
