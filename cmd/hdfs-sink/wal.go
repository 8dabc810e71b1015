package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/sink/inspect"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// cmdWAL is `hdfs-sink wal inspect|repair`.
func cmdWAL(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "inspect":
			return cmdWALInspect(ctx, args[1:], stdout, stderr)
		case "repair":
			return cmdWALRepair(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintln(stderr, "hdfs-sink wal: want `wal inspect TOPIC PARTITION` or `wal repair TOPIC PARTITION` (with --config)")
	return exitUsage
}

// walTarget is the connector, store settings and partition a wal command
// works on.
type walTarget struct {
	c     *configs.Connector
	s     sink.WriteSettings
	topic string
	p     int32
	close func()
}

func openWALTarget(t toolFlags, pos []string) (*walTarget, error) {
	topic, p, err := topicPartition(pos)
	if err != nil {
		return nil, err
	}
	c, err := t.load()
	if err != nil {
		return nil, err
	}
	store, err := openToolStore(c)
	if err != nil {
		return nil, err
	}
	s, err := writeSettings(c, store)
	if err != nil {
		store.Close()
		return nil, err
	}
	return &walTarget{c: c, s: s, topic: topic, p: p, close: func() { store.Close() }}, nil
}

// cmdWALInspect only reads: safe next to a running daemon.
func cmdWALInspect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var t toolFlags
	fs := flag.NewFlagSet("wal inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t.register(fs)
	pos, err := parseTool(fs, args)
	if err != nil {
		return exitUsage
	}
	wt, err := openWALTarget(t, pos)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink wal inspect:", err)
		return exitUsage
	}
	defer wt.close()
	rep, err := sink.InspectWAL(ctx, wt.s, wt.topic, wt.p)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink wal inspect:", err)
		return exitCantLook
	}
	show(stdout, t.json, rep, printWAL)
	if rep.Stuck {
		return exitFinding
	}
	return exitOK
}

// printStanding prints what a version 2 entry adds (docs/wal.md).
func printStanding(w io.Writer, e entry.Entry) {
	if e.Legacy {
		fmt.Fprintln(w, "    (WAL version 1: no topic id, connector, leader epoch or schema)")
		return
	}
	fmt.Fprintf(w, "    connector %q, topic id %s, leader epoch %d, schema id %d\n", e.Connector, topicID(e.TopicID), e.LeaderEpoch, e.SchemaID)
	if e.Refused != "" {
		fmt.Fprintf(w, "    REFUSED until an offsets reset: %s\n", e.Refused)
	}
}

// topicID prints a Kafka topic id as Kafka's tools do.
func topicID(id [entry.TopicIDSize]byte) string {
	if id == ([entry.TopicIDSize]byte{}) {
		return "unknown"
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

func printWAL(w io.Writer, rep inspect.Report) {
	fmt.Fprintf(w, "WAL of topic %s partition %d in %s: %d segments\n", rep.Topic, rep.Partition, rep.Dir, len(rep.Segments))
	for _, sg := range rep.Segments {
		fmt.Fprintf(w, "  segment %d  published %s\n", sg.Seq, sg.Published.UTC().Format(time.RFC3339))
		if sg.Err != "" {
			fmt.Fprintf(w, "    UNREADABLE: %s\n", sg.Err)
			continue
		}
		e := sg.Entry
		fmt.Fprintf(w, "    %s by %s, epoch %s, committed offset %d, at %s\n", e.Kind, e.Owner, e.Epoch, e.CommittedOffset,
			time.UnixMilli(e.UnixMillis).UTC().Format(time.RFC3339Nano))
		printStanding(w, *e)
		for _, f := range e.Files {
			fmt.Fprintf(w, "    move %s -> %s (offsets %d-%d, %d records)\n", f.Temp, f.Final, f.StartOffset, f.EndOffset, f.Records)
		}
	}
	for _, st := range rep.Staging {
		fmt.Fprintf(w, "  staging directory (a publish under way, or left by a crash): %s\n", st)
	}
	fmt.Fprintln(w, "what recovery would do now:")
	for i, step := range rep.Recovery {
		fmt.Fprintf(w, "  %d. %s\n", i+1, step)
	}
}

// repairArgs are `wal repair`'s flags.
type repairArgs struct {
	toolFlags
	to     int64
	yes    bool
	force  bool
	minAge time.Duration
}

// cmdWALRepair plans a repair, prints why, and applies it only with --yes
// and only when no live owner holds the partition (or with --force).
func cmdWALRepair(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var a repairArgs
	fs := flag.NewFlagSet("wal repair", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	fs.Int64Var(&a.to, "to", -1, "resume at this offset instead of the one the repair finds")
	fs.BoolVar(&a.yes, "yes", false, "apply the repair (without it, only say what it would do)")
	fs.BoolVar(&a.force, "force", false, "repair even while a live group member owns the partition or the damaged segment is new")
	fs.DurationVar(&a.minAge, "min-age", time.Minute, "refuse while the damaged segment is younger than this: its publisher may still be renaming files")
	pos, err := parseTool(fs, args)
	if err != nil {
		return exitUsage
	}
	wt, err := openWALTarget(a.toolFlags, pos)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink wal repair:", err)
		return exitUsage
	}
	defer wt.close()
	ctx, cancel := a.context(ctx)
	defer cancel()
	return a.repair(ctx, wt, stdout, stderr)
}

func (a repairArgs) repair(ctx context.Context, wt *walTarget, stdout, stderr io.Writer) int {
	plan, err := sink.PlanRepair(ctx, wt.s, wt.topic, wt.p, a.to)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink wal repair:", err)
		return exitCantLook
	}
	printPlan(stdout, plan)
	switch {
	case !plan.Needed:
		return exitOK
	case plan.Refused != "":
		fmt.Fprintln(stderr, "hdfs-sink wal repair: refused:", plan.Refused)
		return exitFinding
	}
	if err := a.refuseLive(ctx, wt, plan); err != nil {
		fmt.Fprintln(stderr, "hdfs-sink wal repair: refused:", err)
		return exitFinding
	}
	if !a.yes {
		fmt.Fprintln(stdout, "nothing changed: run again with --yes to apply this repair")
		return exitFinding
	}
	if err := sink.Repair(ctx, wt.s, plan, toolLogger(stderr)); err != nil {
		fmt.Fprintln(stderr, "hdfs-sink wal repair:", err)
		return exitFinding
	}
	fmt.Fprintf(stdout, "repaired: segment %d claims the partition with committed offset %d; the damaged segment is kept in %s\n", plan.Head.Seq+1, plan.Committed, plan.Copy)
	return exitOK
}

func printPlan(w io.Writer, plan sink.RepairPlan) {
	fmt.Fprintf(w, "topic %s partition %d:\n", plan.Topic, plan.Partition)
	for _, why := range plan.Why {
		fmt.Fprintf(w, "  - %s\n", why)
	}
	if plan.Needed && plan.Refused == "" {
		fmt.Fprintf(w, "repair: copy segment %d to %s, then publish a claim at segment %d with committed offset %d (the partition resumes at %d)\n",
			plan.Head.Seq, plan.Copy, plan.Head.Seq+1, plan.Committed, plan.Committed+1)
	}
}

// refuseLive is the liveness rule of docs/operations.md: a partition is
// owned by a live owner when a member of the connector's consumer group is
// assigned it (the group coordinator's view: joined, session not expired),
// and a damaged segment younger than --min-age may belong to a publisher
// still renaming its files. Kafka unreachable means it cannot be told:
// refused too. --force skips all of it.
func (a repairArgs) refuseLive(ctx context.Context, wt *walTarget, plan sink.RepairPlan) error {
	if a.force {
		return nil
	}
	if age := time.Since(plan.Head.Published); age < a.minAge {
		return fmt.Errorf("segment %d was published %v ago, less than --min-age %v: its publisher may still be renaming files; wait, or --force", plan.Head.Seq, age.Round(time.Second), a.minAge)
	}
	kt, err := newKafkaTool(wt.c, toolLogger(io.Discard))
	if err != nil {
		return err
	}
	defer kt.close()
	owner, err := kt.owner(ctx, wt.topic, wt.p)
	if err != nil {
		return fmt.Errorf("cannot tell whether a live owner holds the partition: %w; stop the connector's processes and --force", err)
	}
	if owner != "" {
		return errors.New(owner + " of group " + wt.c.Consumer.GroupID + " is assigned this partition: stop it first, or --force if its log shows it stuck on this segment (it then writes nothing and picks the repair up at its next retry)")
	}
	return nil
}
