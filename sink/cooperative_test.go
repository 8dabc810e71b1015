package sink

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// tenures records, per partition, how often a connector was assigned it
// and whether it holds it now.
type tenures struct {
	nopObserver
	mu       sync.Mutex
	assigned map[int32]int
	held     map[int32]bool
	revoked  map[int32]bool
}

func newTenures() *tenures {
	return &tenures{assigned: map[int32]int{}, held: map[int32]bool{}, revoked: map[int32]bool{}}
}

func (o *tenures) Partition(_ string, p int32) PartitionObserver {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.assigned[p]++
	o.held[p] = true
	return tenure{o: o, p: p}
}

func (o *tenures) heldNow() []int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []int32
	for p, h := range o.held {
		if h {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func (o *tenures) snapshot() (assigned map[int32]int, revoked []int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.assigned), slices.Sorted(maps.Keys(o.revoked))
}

type tenure struct {
	nopPartition
	o *tenures
	p int32
}

func (t tenure) Released() {
	t.o.mu.Lock()
	defer t.o.mu.Unlock()
	t.o.held[t.p] = false
	t.o.revoked[t.p] = true
}

// TestJoinRevokesOnlyWhatMoves: a second member joining the group takes
// some partitions, and the first gives up only those (cooperative-sticky,
// franz-go's default balancer, as Connect's incremental rebalancing): the
// partitions it keeps are neither revoked nor recovered again, and keep
// their open files. Every offset still lands once (docs/design.md §6).
func TestJoinRevokesOnlyWhatMoves(t *testing.T) {
	const parts = 6
	k := newKafkaFixture(t, parts, testTopic)
	next := map[int32]int64{}
	produce := func(n int64) { produceEach(k, parts, next, n) }
	cfg := k.config("cooperative")
	cfg.FlushSize, cfg.RotateInterval = 1_000_000, 0 // only a release commits
	first, second := newTenures(), newTenures()
	cfgA, cfgB := cfg, cfg
	cfgA.Observer, cfgB.Observer = first, second
	a := start(t, cfgA)
	produce(20)
	waitFor(t, "the first member writing every partition", func() bool { return a.Stats.Records.Load() >= 20*parts })
	b := start(t, cfgB)
	waitFor(t, "the second member holding partitions", func() bool {
		return len(second.heldNow()) > 0 && len(first.heldNow())+len(second.heldNow()) == parts
	})
	assignedA, revokedA := first.snapshot()
	moved := second.heldNow()
	if !slices.Equal(revokedA, moved) {
		t.Fatalf("the first member gave up partitions %v, the second took %v: only what moves may be revoked", revokedA, moved)
	}
	for p, n := range assignedA {
		if n != 1 {
			t.Fatalf("partition %d was assigned to the first member %d times: a kept partition was revoked and assigned back", p, n)
		}
	}
	produce(20)
	waitFor(t, "both members writing", func() bool { return a.Stats.Records.Load()+b.Stats.Records.Load() >= 40*parts })
	stopAndCheck(t, k, next, a, b)
}

// hold stops, once armed, every storage call that matches until released:
// a NameNode that does not answer one kind of call.
type hold struct {
	armed    atomic.Bool
	once     sync.Once
	blocked  chan struct{} // closed at the first call held
	released chan struct{}
	paths    []string // set before arming; none: every call of the kind
}

func newHold() *hold { return &hold{blocked: make(chan struct{}), released: make(chan struct{})} }

// release lets every held call and every later one through; twice is harmless.
func (h *hold) release() {
	h.armed.Store(false)
	select {
	case <-h.released:
	default:
		close(h.released)
	}
}

// heldFS is inner whose calls of kind op wait for h once h is armed (only
// those on the partitions of h.only, if set).
func heldFS(inner storage.FS, h *hold, op string) *opFS {
	fs := newOpFS(inner)
	fs.before = func(_ int, called, name string) {
		if called != op || !h.armed.Load() || !h.matches(name) {
			return
		}
		h.once.Do(func() { close(h.blocked) })
		<-h.released
	}
	return fs
}

// only limits the calls held to those on the given partitions of the test
// topic (their temp files and WAL); call it before arming.
func (h *hold) only(parts ...int32) {
	for _, p := range parts {
		h.paths = append(h.paths, fmt.Sprintf("/%s/%d/", testTopic, p))
	}
}

func (h *hold) matches(name string) bool {
	if len(h.paths) == 0 {
		return true
	}
	for _, p := range h.paths {
		if strings.Contains(name, p) {
			return true
		}
	}
	return false
}

func (h *hold) isBlocked() bool {
	select {
	case <-h.blocked:
		return true
	default:
		return false
	}
}

// produceEach produces n records to each of parts partitions, numbered on
// from next.
func produceEach(k *kafkaFixture, parts int32, next map[int32]int64, n int64) {
	var recs []*kgo.Record
	for p := int32(0); p < parts; p++ {
		for range n {
			recs = append(recs, k.good(p, next[p]))
			next[p]++
		}
	}
	k.produce(recs...)
}

// TestKeptPartitionsWriteWhileRevokedCommit: when a member joins, the
// partitions the first member keeps go on being written while the
// revocation commits the moved ones (issue 25: the kept partitions stall
// < 1 s; before, the poll loop waited for the revocation's commits). The
// first member's renames are held from the join on, so its revocation
// cannot finish until the test lets it; the kept partitions' records must
// be written meanwhile, and every offset still lands once.
func TestKeptPartitionsWriteWhileRevokedCommit(t *testing.T) {
	const parts = 6
	k := newKafkaFixture(t, parts, testTopic)
	next := map[int32]int64{}
	cfg := k.config("revoke-beside")
	cfg.FlushSize, cfg.RotateInterval = 1_000_000, 0 // only a release commits
	h := newHold()
	cfgA := cfg
	cfgA.FS = heldFS(k.fs, h, "rename")
	a := start(t, cfgA)
	produceEach(k, parts, next, 20)
	waitFor(t, "the first member writing every partition", func() bool { return a.Stats.Records.Load() >= 20*parts })
	h.armed.Store(true)
	b := start(t, cfg)
	t.Cleanup(h.release) // before the members' own cleanups, which stop them
	waitFor(t, "the revocation committing on the first member", h.isBlocked)
	produceEach(k, parts, next, 20)
	// Only partitions the first member keeps can add to its count now: the
	// revoked ones are out of its poll loop.
	waitFor(t, "the kept partitions written while the revoked ones commit", func() bool {
		return a.Stats.Records.Load() >= 20*parts+20
	})
	h.release()
	waitFor(t, "both members writing", func() bool { return a.Stats.Records.Load()+b.Stats.Records.Load() >= 40*parts })
	stopAndCheck(t, k, next, a, b)
}

// TestRevocationWaitsForTheBatchUnderWay injects a revocation in the middle
// of a poll's batch, at each kind of storage call a batch makes (a temp
// file opened, temp files closed by a flush.size rotation, its commit's
// renames), and every offset must land once. A temp file is opened by the
// poll itself: the callback must not take a partition before the poll
// under way has finished with it (pollGate). A flush.size commit runs off
// the poll loop (pipeline.go): the poll does not hold it, so the callback
// takes the partitions while it is held, and its release must wait for
// the commit before it commits or drops a partition (settle; a release
// touching a committing partition is a data race, which -race reports,
// and a second commit of its records, which the check reports).
func TestRevocationWaitsForTheBatchUnderWay(t *testing.T) {
	for _, op := range []string{"create", "close", "rename"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			revokeMidBatch(t, op)
		})
	}
}

func revokeMidBatch(t *testing.T, op string) {
	const parts = 4
	k := newKafkaFixture(t, parts, testTopic)
	next := map[int32]int64{}
	cfg := k.config("revoke-mid-batch-" + op)
	cfg.FlushSize, cfg.RotateInterval = 10, 0
	h := newHold()
	cfgA := cfg
	cfgA.FS = heldFS(k.fs, h, op)
	a := start(t, cfgA)
	produceEach(k, parts, next, 10)
	waitFor(t, "the first member committing every partition", func() bool { return a.Stats.Commits.Load() >= parts })
	h.armed.Store(true)
	produceEach(k, parts, next, 15) // opens files, and rotates them at 10
	waitFor(t, "a batch held at "+op, h.isBlocked)
	b := start(t, cfg)
	t.Cleanup(h.release)
	if op == "create" {
		waitFor(t, "the revocation", func() bool { return a.gate.waiting.Load() > 0 || len(a.parts.all()) < parts })
		if n := len(a.parts.all()); n < parts {
			t.Fatalf("the revocation took %d partitions while a batch was held at %s: a revoke interleaved with a batch", parts-n, op)
		}
	} else {
		waitFor(t, "the revocation taking partitions while a commit is held at "+op, func() bool { return len(a.parts.all()) < parts })
	}
	h.release()
	produceEach(k, parts, next, 10)
	waitFor(t, "both members writing every record", func() bool {
		return len(a.parts.all()) < parts && a.Stats.Records.Load()+b.Stats.Records.Load() >= 35*parts
	})
	stopAndCheck(t, k, next, a, b)
}

// TestPollDoesNotWaitForACommit: a partition whose commit is slow (the
// close of its temp file held) holds back only itself. The others are
// fetched, written and committed beside it, and every offset lands once.
// When commits ran inline, every poll waited for the commits its records
// had started, and this one slow commit stalled every partition.
func TestPollDoesNotWaitForACommit(t *testing.T) {
	const parts = 4
	k, a, h := startHoldingCloses(t, parts, "commit-off-the-poll")
	next := map[int32]int64{}
	produceEach(k, parts, next, 10)
	waitFor(t, "partition 0's commit held at close", h.isBlocked)
	before := a.Stats.Commits.Load()
	produceEach(k, parts, next, 30)
	waitFor(t, "the other partitions committing while partition 0's commit is held", func() bool {
		return a.Stats.Commits.Load() >= before+3*(parts-1)
	})
	// Partition 0's records wait behind its commit, and the memory
	// ceiling counts them.
	waitFor(t, "partition 0's records counted as held", func() bool { return a.holding.Load() > 0 })
	h.release()
	waitFor(t, "every record written", func() bool { return a.Stats.Records.Load() >= 40*parts })
	stopAndCheck(t, k, next, a)
}

// startHoldingCloses starts a connector committing every 10 records whose
// temp-file closes on partition 0 are held from its recovery on (h).
func startHoldingCloses(t *testing.T, parts int32, name string) (*kafkaFixture, *running, *hold) {
	k := newKafkaFixture(t, parts, testTopic)
	cfg := k.config(name)
	cfg.FlushSize, cfg.RotateInterval = 10, 0
	h := newHold()
	h.only(0)
	cfg.FS = heldFS(k.fs, h, "close")
	a := start(t, cfg)
	t.Cleanup(h.release)
	waitFor(t, "every partition recovered", func() bool { return len(a.parts.all()) == int(parts) })
	h.armed.Store(true) // after the claims, which close a WAL segment too
	return k, a, h
}

// TestStopWritesWhatCommitsHeld: a stop that comes while a partition's
// commit runs and records wait behind it ends the commit, writes those
// records and commits them, as a stop commits what its polls wrote (D6).
// Dropping them would lose nothing (the next owner reads them), but HDFS
// would lag what the stopped connector had consumed.
func TestStopWritesWhatCommitsHeld(t *testing.T) {
	const parts = 2
	k, a, h := startHoldingCloses(t, parts, "stop-writes-held")
	next := map[int32]int64{}
	produceEach(k, parts, next, 15) // partition 0 commits at 10 and holds the rest behind it
	waitFor(t, "partition 0's commit held at close", h.isBlocked)
	waitFor(t, "partition 0's records counted as held", func() bool { return a.holding.Load() > 0 })
	a.stop()
	h.release()
	stopAndCheck(t, k, next, a)
}

// TestAssignmentWaitsForTheBatchUnderWay: partitions assigned while a
// batch is under way (here: the other member left) become the poll loop's
// only after that poll, never in the middle of it (pollGate), and every
// offset lands once.
func TestAssignmentWaitsForTheBatchUnderWay(t *testing.T) {
	const parts = 4
	k := newKafkaFixture(t, parts, testTopic)
	next := map[int32]int64{}
	cfg := k.config("assign-mid-batch")
	cfg.FlushSize, cfg.RotateInterval = 10, 0
	h := newHold()
	cfgA := cfg
	cfgA.FS = heldFS(k.fs, h, "create")
	a, b := start(t, cfgA), start(t, cfg)
	t.Cleanup(h.release)
	produceEach(k, parts, next, 10)
	waitFor(t, "both members writing every record", func() bool {
		n, m := len(a.parts.all()), len(b.parts.all())
		return n > 0 && m > 0 && n+m == parts && a.Stats.Records.Load()+b.Stats.Records.Load() >= 10*parts
	})
	mine := a.parts.keys()[testTopic]
	h.only(mine...) // the partitions b holds are recovered by a when b leaves: not held
	h.armed.Store(true)
	produceEach(k, parts, next, 5) // a's partitions open new temp files
	waitFor(t, "a batch held at create", h.isBlocked)
	b.stop()
	if err, ok := b.wait(30 * time.Second); !ok || err != nil {
		t.Fatalf("second member: stopped=%v err=%v", ok, err)
	}
	waitFor(t, "the assignment", func() bool { return a.gate.waiting.Load() > 0 || len(a.parts.all()) > len(mine) })
	if n := len(a.parts.all()); n != len(mine) {
		t.Fatalf("the first member holds %d partitions while its batch is held, %d before: an assignment reached the poll loop mid-batch", n, len(mine))
	}
	h.release()
	produceEach(k, parts, next, 5)
	waitFor(t, "the first member holding every partition", func() bool { return len(a.parts.all()) == parts })
	waitFor(t, "every record written", func() bool { return a.Stats.Records.Load()+b.Stats.Records.Load() >= 20*parts })
	stopAndCheck(t, k, next, a)
}

// stopAndCheck stops the members and checks that every offset below next
// is on the fixture's store exactly once.
func stopAndCheck(t *testing.T, k *kafkaFixture, next map[int32]int64, members ...*running) {
	t.Helper()
	for _, r := range members {
		r.stop()
		if err, ok := r.wait(30 * time.Second); !ok || err != nil {
			t.Fatalf("connector: stopped=%v err=%v", ok, err)
		}
	}
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: maps.Clone(next), SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}
