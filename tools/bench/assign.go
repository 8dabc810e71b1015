package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/sink/memory"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

// The assignment case (issue 25): how long a newly assigned partition takes
// to commit its first file, and what a second member joining and leaving
// the group does to the partitions that stay. One child process ("assign")
// produces a steady trickle to every partition and runs member A; it starts
// member B as a second process of this binary ("member") with the same
// group, stops it later, and measures from both members' state machines
// (sink.Observer):
//
//  1. fresh: A starts alone on an empty topic;
//  2. join: once A is steady, B starts: which of A's partitions are
//     revoked, which reach B, B's assignment → first commit, and the
//     longest gap in writes of the partitions A keeps (the stall);
//  3. leave: B stops (commits what it holds, leaves the group); A's newly
//     assigned partitions' assignment → first commit, and the stall of the
//     partitions A held throughout.
//
// flush.size is out of reach, so every first commit is rotate.interval.ms's.

// assignResult is one round of the assignment case.
type assignResult struct {
	Partitions int     `json:"partitions"`
	RotateSec  float64 `json:"rotate_interval_seconds"`
	// StartToAssignedSec is A's start → its first partition's assignment.
	StartToAssignedSec float64 `json:"start_to_assigned_seconds"`
	// BStartToAssignedSec is B's start → its first partition's assignment.
	BStartToAssignedSec float64      `json:"b_start_to_assigned_seconds"`
	Fresh               phaseLatency `json:"fresh"` // A's assignments at start
	Join                phaseLatency `json:"join"`  // B's assignments when it joins
	Leave               phaseLatency `json:"leave"` // A's new assignments when B leaves
	Moves               moves        `json:"moves"`
	// Baseline is the writes' longest gap in a steady window before B
	// joins (A's own rotations included); JoinStall and LeaveStall the
	// same for the partitions A holds throughout each rebalance, from B's
	// start (stop) to the last moved partition's assignment, reaching to
	// each partition's first write after it.
	Baseline   gapStats `json:"baseline"`
	JoinStall  gapStats `json:"join_stall"`
	LeaveStall gapStats `json:"leave_stall"`
	// A's counters at the end: commits, rotations the memory ceiling
	// forced, the most files open at once.
	ACommits         int64 `json:"a_commits"`
	AMemoryRotations int64 `json:"a_memory_rotations"`
	APeakOpenFiles   int64 `json:"a_peak_open_files"`
	// ADeferredRotations: time-driven rotations A moved to a later poll
	// (sink.Config.TimedRotationsPerPoll), once per partition and poll.
	ADeferredRotations int64 `json:"a_deferred_rotations"`
}

// phaseLatency is assignment → first commit over the partitions assigned
// in one phase, and where that time went.
type phaseLatency struct {
	Partitions     int  `json:"partitions"`
	AssignToCommit stat `json:"assign_to_first_commit_seconds"`
	// The steps: assignment → recovered (start offset known), → first
	// records written, → rotation (rotate.interval.ms fired), → committed.
	Recovery   stat `json:"assign_to_recovered_seconds"`
	FirstWrite stat `json:"recovered_to_first_write_seconds"`
	Interval   stat `json:"first_write_to_rotate_seconds"`
	Commit     stat `json:"rotate_to_committed_seconds"`
}

type stat struct {
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// moves counts partitions by what the two rebalances did to them.
type moves struct {
	RevokedOnA      int     `json:"revoked_on_a"`         // when B joined
	AssignedToB     int     `json:"assigned_to_b"`        // when B joined
	RevokedNotMoved int     `json:"revoked_but_not_to_b"` // revoked on A, not B's: revoked needlessly
	ReassignedToA   int     `json:"reassigned_to_a"`      // assigned to A again when B joined (an eager rebalance does this)
	KeptOnA         int     `json:"kept_on_a"`            // A's throughout the join
	JoinSec         float64 `json:"join_seconds"`         // B's start → its last partition assigned
	RevokedInLeave  int     `json:"revoked_on_a_when_b_left"`
	AssignedInLeave int     `json:"assigned_to_a_when_b_left"`
	LeaveSec        float64 `json:"leave_seconds"` // B's stop → A's last new assignment
}

// gapStats is, over the partitions considered, each one's longest time
// without records written within a window (the window's edges reach to the
// writes just outside it).
type gapStats struct {
	WindowSec  float64 `json:"window_seconds"`
	Partitions int     `json:"partitions"`
	LongestGap stat    `json:"longest_gap_seconds"`
}

// trickle produces one record to every partition each spec.Trickle until
// the returned stop is called.
func trickle(ctx context.Context, spec caseSpec) (stop func() error, err error) {
	pool, _, err := datumPool(spec.Size)
	if err != nil {
		return nil, err
	}
	id, err := registerSchema(spec.Topic, spec.Size)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(spec.Topic), kgo.ProducerLinger(5*time.Millisecond),
		// A topic of 1,000 partitions created a moment ago may not be
		// hosted everywhere yet (UNKNOWN_TOPIC_OR_PARTITION): retry until
		// it is, within the case's context, instead of failing the round.
		kgo.UnknownTopicRetries(-1))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var firstErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(spec.Trickle)
		defer t.Stop()
		for i := 0; ; i++ {
			for p := range spec.Partitions {
				v := schema.AppendWire(nil, id, pool[(i+p)%len(pool)])
				cl.Produce(ctx, &kgo.Record{Partition: int32(p), Value: v}, func(_ *kgo.Record, err error) {
					if err != nil && ctx.Err() == nil {
						mu.Lock()
						firstErr = err
						mu.Unlock()
					}
				})
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() error {
		cancel()
		<-done
		cl.Close()
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil {
			return fmt.Errorf("trickle to %s: %w", spec.Topic, firstErr)
		}
		return nil
	}, nil
}

// member is one running sink.Connector of the case's group.
type member struct {
	conn *sink.Connector
	stop context.CancelFunc
	done chan error
}

func startMember(ctx context.Context, spec caseSpec, store storage.FS, obs sink.Observer) (*member, error) {
	mem := memory.NewPlan(spec.MemoryMax, 1)
	cfg, _, err := sinkConfig(spec, mem, store)
	if err != nil {
		return nil, err
	}
	cfg.Observer, cfg.Parallelism, cfg.TimedRotationsPerPoll = obs, spec.Parallelism, spec.TimedPerPoll
	mem.Govern() // as hdfs-sink run does
	conn, err := sink.New(cfg)
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	m := &member{conn: conn, stop: stop, done: make(chan error, 1)}
	go func() { m.done <- conn.Run(runCtx) }()
	return m, nil
}

// end stops the member (it commits what it holds and leaves the group).
func (m *member) end() error {
	m.stop()
	return <-m.done
}

// runMemberCase is member B: it runs until its standard input closes and
// prints every assignment event as a JSON line on standard output.
func runMemberCase(ctx context.Context, spec caseSpec) (caseResult, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser, Connections: spec.HDFSConns})
	if err != nil {
		return caseResult{}, err
	}
	defer store.Close()
	obs := &assignObserver{out: json.NewEncoder(os.Stdout)}
	m, err := startMember(ctx, spec, store, obs)
	if err != nil {
		return caseResult{}, err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return caseResult{}, m.end()
}

// runAssignCase is member A and the conductor of the three phases.
func runAssignCase(ctx context.Context, spec caseSpec) (caseResult, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser, Connections: spec.HDFSConns})
	if err != nil {
		return caseResult{}, err
	}
	defer store.Close()
	stopTrickle, err := trickle(ctx, spec)
	if err != nil {
		return caseResult{}, err
	}
	obsA := &assignObserver{keepWrites: true}
	startA := time.Now()
	a, err := startMember(ctx, spec, store, obsA)
	if err != nil {
		_ = stopTrickle()
		return caseResult{}, err
	}
	var sc assignScenario
	err = sc.run(ctx, spec, a, obsA)
	if endErr := a.end(); err == nil {
		err = endErr
	}
	if tErr := stopTrickle(); err == nil {
		err = tErr
	}
	if err != nil {
		return caseResult{}, err
	}
	res := sc.result(spec, startA, obsA.snapshot())
	st := &a.conn.Stats
	res.ACommits, res.AMemoryRotations, res.APeakOpenFiles = st.Commits.Load(), st.MemoryRotations.Load(), st.PeakOpenFiles.Load()
	res.ADeferredRotations = st.DeferredRotations.Load()
	return caseResult{Assign: &res}, nil
}

// assignScenario holds the phases' moments and member B's record.
type assignScenario struct {
	freshDone, joinAt, joinDone, leaveAt, leaveDone time.Time
	b                                               []assignment
}

const phaseLimit = 4 * time.Minute

func (sc *assignScenario) run(ctx context.Context, spec caseSpec, a *member, obsA *assignObserver) error {
	steady := spec.Rotate + 2*time.Second
	if err := waitUntil(ctx, a.done, "A's first commit of every partition", func() bool {
		return len(owned(obsA.snapshot())) == spec.Partitions && allCommitted(obsA.snapshot(), time.Time{})
	}); err != nil {
		return err
	}
	sc.freshDone = time.Now()
	if err := sleepCtx(ctx, steady); err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	b, err := spawnMember(ctx, bin, spec)
	if err != nil {
		return err
	}
	defer b.kill()
	sc.joinAt = time.Now()
	if err := waitUntil(ctx, a.done, "B's partitions committed once", func() bool {
		as, bs := obsA.snapshot(), b.log.snapshot()
		own := owned(bs)
		return len(own) > 0 && len(owned(as))+len(own) == spec.Partitions && allCommitted(bs, time.Time{}) && allCommitted(as, sc.joinAt)
	}); err != nil {
		return err
	}
	sc.joinDone = time.Now()
	if err := sleepCtx(ctx, steady); err != nil {
		return err
	}
	sc.leaveAt = time.Now()
	if err := b.leave(); err != nil {
		return err
	}
	sc.b = b.log.snapshot()
	if err := waitUntil(ctx, a.done, "A's new partitions committed once", func() bool {
		as := obsA.snapshot()
		return len(owned(as)) == spec.Partitions && allCommitted(as, sc.leaveAt)
	}); err != nil {
		return err
	}
	sc.leaveDone = time.Now()
	return nil
}

// spawned is member B's process.
type spawned struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	log   *memberLog
	ended bool
}

func spawnMember(ctx context.Context, bin string, spec caseSpec) (*spawned, error) {
	spec.Kind = "member"
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "-case", string(js))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start member B: %w", err)
	}
	return &spawned{cmd: cmd, stdin: stdin, log: followMember(stdout)}, nil
}

// leave closes B's input: B commits, leaves the group and exits.
func (s *spawned) leave() error {
	s.stdin.Close()
	s.ended = true
	<-s.log.eof // Wait closes the pipe: read B's last lines first
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("member B: %w", err)
	}
	return nil
}

func (s *spawned) kill() {
	if !s.ended {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// waitUntil polls cond every 50 ms for phaseLimit.
func waitUntil(ctx context.Context, done <-chan error, what string, cond func() bool) error {
	deadline := time.Now().Add(phaseLimit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: assignment case: no %s after %v", what, phaseLimit)
		}
		select {
		case err := <-done:
			return fmt.Errorf("%w waiting for %s: %v", errStopped, what, err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// owned are the assignments not released.
func owned(as []assignment) []assignment {
	var out []assignment
	for _, a := range as {
		if a.Released.IsZero() && !a.Assigned.IsZero() {
			out = append(out, a)
		}
	}
	return out
}

// allCommitted reports whether every held assignment made since since has
// committed once.
func allCommitted(as []assignment, since time.Time) bool {
	for _, a := range owned(as) {
		if !a.Assigned.Before(since) && a.Committed.IsZero() {
			return false
		}
	}
	return true
}

func (sc *assignScenario) result(spec caseSpec, startA time.Time, as []assignment) assignResult {
	r := assignResult{Partitions: spec.Partitions, RotateSec: spec.Rotate.Seconds()}
	var fresh, join, leave []assignment
	for _, a := range as {
		switch {
		case a.Assigned.Before(sc.joinAt):
			fresh = append(fresh, a)
		case a.Assigned.Before(sc.leaveAt):
			join = append(join, a) // A's re-assignments when B joined
		default:
			leave = append(leave, a)
		}
	}
	r.StartToAssignedSec = firstAssigned(fresh).Sub(startA).Seconds()
	r.Fresh = latency(fresh)
	bOnJoin := assignedBetween(sc.b, sc.joinAt, sc.leaveAt)
	r.BStartToAssignedSec = firstAssigned(bOnJoin).Sub(sc.joinAt).Seconds()
	r.Join = latency(bOnJoin)
	r.Leave = latency(leave)
	r.Moves = sc.moves(fresh, join, leave, bOnJoin)
	// The stall windows are the rebalances themselves: from B's start
	// (stop) to the last moved partition's assignment. A window to the
	// moved partitions' first commits would take in A's own rotations,
	// which the baseline shows apart.
	r.Baseline = gaps(fresh, sc.freshDone, sc.joinAt)
	joined := later(lastAssigned(bOnJoin), sc.joinAt)
	r.JoinStall = gaps(heldThrough(fresh, sc.joinAt, joined), sc.joinAt, joined)
	left := later(lastAssigned(leave), sc.leaveAt)
	r.LeaveStall = gaps(heldThrough(as, sc.leaveAt, left), sc.leaveAt, left)
	return r
}

func (sc *assignScenario) moves(fresh, join, leave, b []assignment) moves {
	m := moves{ReassignedToA: len(join), AssignedToB: len(b), AssignedInLeave: len(leave)}
	toB := map[int32]bool{}
	for _, a := range b {
		toB[a.Partition] = true
	}
	for _, a := range fresh {
		switch {
		case released(a, sc.joinAt, sc.leaveAt):
			m.RevokedOnA++
			if !toB[a.Partition] {
				m.RevokedNotMoved++
			}
		case released(a, sc.leaveAt, sc.leaveDone):
			m.RevokedInLeave++
		}
		if !released(a, time.Time{}, sc.joinDone) {
			m.KeptOnA++
		}
	}
	for _, a := range join {
		if released(a, sc.leaveAt, sc.leaveDone) {
			m.RevokedInLeave++
		}
	}
	m.JoinSec = lastAssigned(b).Sub(sc.joinAt).Seconds()
	m.LeaveSec = lastAssigned(leave).Sub(sc.leaveAt).Seconds()
	return m
}

// released reports a release within [from, to).
func released(a assignment, from, to time.Time) bool {
	return !a.Released.IsZero() && !a.Released.Before(from) && a.Released.Before(to)
}

func heldThrough(as []assignment, from, to time.Time) []assignment {
	var out []assignment
	for _, a := range as {
		if a.Assigned.Before(from) && (a.Released.IsZero() || a.Released.After(to)) {
			out = append(out, a)
		}
	}
	return out
}

func assignedBetween(as []assignment, from, to time.Time) []assignment {
	var out []assignment
	for _, a := range as {
		if !a.Assigned.Before(from) && a.Assigned.Before(to) {
			out = append(out, a)
		}
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func firstAssigned(as []assignment) time.Time {
	var t time.Time
	for _, a := range as {
		if t.IsZero() || a.Assigned.Before(t) {
			t = a.Assigned
		}
	}
	return t
}

func lastAssigned(as []assignment) time.Time {
	var t time.Time
	for _, a := range as {
		if a.Assigned.After(t) {
			t = a.Assigned
		}
	}
	return t
}

func latency(as []assignment) phaseLatency {
	l := phaseLatency{Partitions: len(as)}
	span := func(from, to func(assignment) time.Time) stat {
		var ds []float64
		for _, a := range as {
			if f, t := from(a), to(a); !f.IsZero() && !t.IsZero() {
				ds = append(ds, t.Sub(f).Seconds())
			}
		}
		return summarize(ds)
	}
	assigned := func(a assignment) time.Time { return a.Assigned }
	recovered := func(a assignment) time.Time { return a.Recovered }
	firstWrite := func(a assignment) time.Time { return a.FirstWrite }
	rotate := func(a assignment) time.Time { return a.Rotate }
	committed := func(a assignment) time.Time { return a.Committed }
	l.AssignToCommit = span(assigned, committed)
	l.Recovery = span(assigned, recovered)
	l.FirstWrite = span(recovered, firstWrite)
	l.Interval = span(firstWrite, rotate)
	l.Commit = span(rotate, committed)
	return l
}

func summarize(ds []float64) stat {
	if len(ds) == 0 {
		return stat{}
	}
	sort.Float64s(ds)
	return stat{Median: ds[len(ds)/2], Max: ds[len(ds)-1]}
}

// gaps is each assignment's longest time without writes in [from, to],
// counting from the last write before from to the first after to.
func gaps(as []assignment, from, to time.Time) gapStats {
	g := gapStats{WindowSec: to.Sub(from).Seconds(), Partitions: len(as)}
	var longest []float64
	for _, a := range as {
		longest = append(longest, longestGap(a.writes, from, to).Seconds())
	}
	g.LongestGap = summarize(longest)
	return g
}

func longestGap(writes []time.Time, from, to time.Time) time.Duration {
	prev := from
	var longest time.Duration
	for _, w := range writes {
		if !w.After(from) {
			prev = w
			continue
		}
		longest = max(longest, w.Sub(prev))
		prev = w
		if w.After(to) {
			return longest
		}
	}
	return max(longest, to.Sub(prev))
}
