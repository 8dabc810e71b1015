package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// verifyArgs are `hdfs-sink verify`'s flags.
type verifyArgs struct {
	toolFlags
	topic     string
	partition int
	deep      bool
}

// cmdVerify is `hdfs-sink verify`: per topic-partition, the committed
// names against Kafka's log and the WAL head (verify.Audit). Exit 0: no
// violation; 1: a violation; 2: bad usage; 3: the store or Kafka failed.
func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var a verifyArgs
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	fs.StringVar(&a.topic, "topic", "", "only this topic")
	fs.IntVar(&a.partition, "partition", -1, "only this partition")
	fs.BoolVar(&a.deep, "deep", false, "read every Avro and Parquet file: record counts, and record offsets when hdfs.sink.extra.columns has offset")
	c, ok := a.parseLoad("hdfs-sink verify", fs, args, stderr)
	if !ok {
		return exitUsage
	}
	ctx, cancel := a.context(ctx)
	defer cancel()
	reps, err := a.audit(ctx, c)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink verify:", err)
		return exitCantLook
	}
	return printAudit(stdout, c, reps, a.json)
}

// audit runs verify.Audit on every topic the flags select.
func (a verifyArgs) audit(ctx context.Context, c *configs.Connector) ([]verify.TopicReport, error) {
	kt, topics, err := openTopics(ctx, c)
	if err != nil {
		return nil, err
	}
	defer kt.close()
	if a.topic != "" {
		if !slices.Contains(topics, a.topic) {
			return nil, fmt.Errorf("connector %q does not write topic %q (it writes %v)", c.Name, a.topic, topics)
		}
		topics = []string{a.topic}
	}
	store, err := openToolStore(c)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var reps []verify.TopicReport
	for _, t := range topics {
		rep, err := a.auditTopic(ctx, c, kt, store, t)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

func (a verifyArgs) auditTopic(ctx context.Context, c *configs.Connector, kt *kafkaTool, store storage.FS, topic string) (verify.TopicReport, error) {
	logs, err := kt.logOffsets(ctx, topic)
	if err != nil {
		return verify.TopicReport{}, err
	}
	s, err := writeSettings(c, store)
	if err != nil {
		return verify.TopicReport{}, err
	}
	ends := map[string]map[int32]int64{topic: {}}
	for p, lo := range logs {
		ends[topic][p] = lo.End
	}
	o := verify.AuditOptions{
		Layout: wiring.TopicLayout(c, topic), KafkaTopic: topic,
		Dense: isDefaultPartitioner(s), Kafka: logs, Deep: a.deep,
		Probe: &kafkaProber{c: c, log: toolLogger(io.Discard), ends: ends},
	}
	if a.partition >= 0 {
		o.Partitions = []int32{int32(a.partition)}
	}
	if slices.Contains(c.ExtraColumns, "offset") {
		o.OffsetField = "kafka_offset"
	}
	rep, err := verify.Audit(ctx, store, o)
	if err != nil {
		return rep, fmt.Errorf("connector %q: %w", c.Name, err)
	}
	return rep, nil
}

// printAudit prints the reports and returns the exit status.
func printAudit(w io.Writer, c *configs.Connector, reps []verify.TopicReport, asJSON bool) int {
	ok := true
	for _, r := range reps {
		ok = ok && r.OK()
	}
	if asJSON {
		printJSON(w, map[string]any{"connector": c.Name, "ok": ok, "topics": reps})
	} else {
		for _, r := range reps {
			printTopicTable(w, c.Name, r)
		}
	}
	if !ok {
		return exitFinding
	}
	return exitOK
}

func printTopicTable(w io.Writer, conn string, r verify.TopicReport) {
	fmt.Fprintf(w, "connector %q topic %s\n", conn, r.Topic)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tFILES\tFIRST\tLAST\tCOMMITTED\tLOG START\tLOG END\tLAG\tWAL HEAD\tTEMP\tSTATUS")
	for _, p := range r.Partitions {
		start, end := "?", "?"
		if p.Log != nil {
			start, end = fmt.Sprint(p.Log.Start), fmt.Sprint(p.Log.End)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%d\t%s\n", p.Partition, p.Files, p.First, p.Last, p.Committed,
			start, end, p.Lag, walHead(p.WAL), p.InProgress, status(p))
	}
	tw.Flush()
	for _, p := range r.Partitions {
		for _, v := range p.Violations {
			fmt.Fprintf(w, "  partition %d: VIOLATION %s: %s\n", p.Partition, v.Kind, strings.TrimSpace(v.Path+" "+v.Detail))
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "  partition %d: note: %s\n", p.Partition, n)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func walHead(h verify.WALHead) string {
	switch {
	case h.Err != "":
		return fmt.Sprintf("%d UNREADABLE", h.Seq)
	case h.Kind == "":
		return "none"
	}
	return fmt.Sprintf("%d %s", h.Seq, h.Kind)
}

func status(p verify.PartitionReport) string {
	if len(p.Violations) == 0 {
		return "OK"
	}
	return fmt.Sprintf("%d VIOLATIONS", len(p.Violations))
}
