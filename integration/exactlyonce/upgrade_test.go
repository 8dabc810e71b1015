//go:build integration

package exactlyonce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/wal"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// The earlier builds an upgrade starts from. There is no release tag yet,
// so they are commits: the first and the last of WAL version 1, and the
// last of the temp layout before claim directories (docs/operations.md,
// "Upgrades"; CHANGELOG.md, Upgrade notes).
var (
	// lastVersion1 is the newest build that writes WAL entry version 1:
	// the parent of c455b10, which made the WAL version 2 (issue 20). It
	// has claim directories, so it is what a deployment of the previous
	// build runs.
	lastVersion1 = earlierBuild{"last-v1", "183f4a2726019e502d7a5c4d11e6407532f6c64b", true, true, true}
	// beforeClaimDirs is the newest build before claim directories: the
	// parent of fa220b9 (audit F1/F3), which moved temp files from
	// +tmp/<topic>/<p>/ into +tmp/<topic>/<p>/<claim seq>/ (design.md §5,
	// m9 in §10). Its WAL is version 1 as well; its /status has no
	// partition errors.
	beforeClaimDirs = earlierBuild{"before-claim-dirs", "37079a05f507e137b4d9e76798b19ed13e29983d", false, false, true}
	// firstDaemon is the oldest build of the daemon (8b75643, the first
	// with `hdfs-sink run`), so the oldest whose WAL this build reads: no
	// claim directories, no HTTP endpoint at all.
	firstDaemon = earlierBuild{"first-daemon", "8b756436bcf4eb741d8c3007ce173991ad5fab35", false, false, false}
)

// earlierBuild is a build an upgrade starts from.
type earlierBuild struct {
	name         string
	commit       string
	claimDirs    bool // writes temp files below claim directories
	statusErrors bool // GET /status names each broken partition's error
	statusAddr   bool // has --status-addr
}

// Killed at every state, then upgraded: the newest and the oldest build of
// WAL version 1 (the oldest also covers the temp layout before claim
// directories). Sharing a group with this build: the newest version 1
// build and the newest before claim directories (the rolling test reads
// their /status). Each subtest costs seconds; these are the builds whose
// differences matter.
var (
	crashedBuilds = []earlierBuild{lastVersion1, firstDaemon}
	rollingBuilds = []earlierBuild{lastVersion1, beforeClaimDirs}
)

// startEarlier runs the earlier build b with config and env; its status
// endpoint, where it has one, on a free port.
func (s *setup) startEarlier(b earlierBuild, config string, env ...string) *daemon {
	s.t.Helper()
	var flags []string
	if b.statusAddr {
		flags = []string{"--status-addr", "127.0.0.1:0"}
	}
	return s.startBinary(itest.BinaryAt(s.t, b.commit), config, flags, env...)
}

// TestUpgradeAfterCrashAtEveryState: an earlier build commits, is killed,
// then killed again (HDFS_SINK_CRASH_AT, SIGKILL) on entering each state
// of both machines with a history behind it; this build then starts on the
// same WAL and temp directories and must commit every offset exactly once.
// Before it starts, the WAL is all version 1 (so this build reads the
// earlier one's segments) and, for a build before claim directories,
// temp files lie where that build put them; after, every WAL head is this
// build's version 2 and no temp file of the earlier layout is left.
func TestUpgradeAfterCrashAtEveryState(t *testing.T) {
	t.Parallel()
	for _, b := range crashedBuilds {
		for st := sink.RecoveryStarted; st <= sink.FileCommitted; st++ {
			t.Run(b.name+"/"+st.String(), func(t *testing.T) { upgradeAfterCrash(t, b, st) })
		}
	}
}

func upgradeAfterCrash(t *testing.T, b earlierBuild, st sink.State) {
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	// A history: one committed file per partition (flush.size 500) and 30
	// records in an open file, which no timer rotates: the earlier build
	// is killed holding temp files, in its layout.
	s.produce(counts, 1060)
	first := s.startEarlier(b, s.upgradeConnector("history", "-1"))
	s.waitCommitted(1000, 2*time.Minute)
	first.signal(syscall.SIGKILL)
	first.wait(30 * time.Second)
	// Recovery states die recovering that history, write states in their
	// first rotation after it (flush.size).
	s.produce(counts, 1000)
	crashed := s.startEarlier(b, s.upgradeConnector("crash", "-1"), fmt.Sprintf("HDFS_SINK_CRASH_AT=%s:1", st))
	if err, exited := crashed.wait(2 * time.Minute); !exited || !killedBySIGKILL(err) {
		t.Fatalf("%s did not die at %s (exited=%v err=%v)", b.name, st, exited, err)
	}
	for p := range s.parts {
		for _, e := range s.walEntries(p) {
			if !e.Legacy {
				t.Fatalf("partition %d: the earlier build wrote a version %d entry, want only version 1", p, entry.Version)
			}
		}
	}
	loose, claimed := s.tempFiles()
	switch {
	case b.claimDirs && len(loose) > 0:
		t.Fatalf("%s writes below claim directories, but temp files lie outside them: %v", b.name, loose)
	case !b.claimDirs && len(claimed) > 0:
		t.Fatalf("%s predates claim directories, but temp files lie in them: %v", b.name, claimed)
	case holdsTempFiles(st) && len(loose)+len(claimed) == 0:
		t.Fatalf("%s killed at %s left no temp file: its layout is not covered", b.name, st)
	}
	t.Logf("%s killed at %s; temp files outside claim directories: %d, in them: %d", b.name, st, len(loose), len(claimed))

	s.produce(counts, 500)
	d := s.start(s.upgradeConnector("upgraded", "1000"))
	s.waitCommitted(total(counts), 2*time.Minute)
	d.stop()
	s.check(counts)
	for p := range s.parts {
		if e := s.walHead(p); e.Legacy {
			t.Errorf("partition %d: after this build ran, the WAL head is still version 1", p)
		}
	}
	if loose, _ := s.tempFiles(); len(loose) > 0 {
		t.Errorf("temp files of the earlier layout left after the upgrade: %v", loose)
	}
}

// holdsTempFiles says whether a process killed on entering st holds temp
// files for sure: recovery before its cleanup (the history's open files),
// or a rotation before its renames.
func holdsTempFiles(st sink.State) bool {
	switch st {
	case sink.RecoveryStarted, sink.RecoveryPartitionPaused, sink.WALApplied,
		sink.ShouldRotate, sink.TempFileClosed, sink.WALAppended:
		return true
	}
	return false
}

// upgradeConnector is the connector file of one step of an upgrade test.
// Each step's process joins a consumer group of its own: a SIGKILLed
// member holds its group until its session times out (6 s, three times a
// step), and where a partition resumes is the WAL's to say, never the
// group's (docs/design.md §4), so the group changes nothing of what is
// tested.
func (s *setup) upgradeConnector(step, rotateMs string) string {
	return s.connector("upgrade", map[string]string{"rotate.interval.ms": rotateMs,
		"consumer.override.group.id": s.topic + "-" + step})
}

// TestRollingUpgradeAcrossWALVersion2: a group of an earlier build (A:
// the last version 1 build, and the last before claim directories, whose
// temp files this build's cleanup removes, m9) and this build (B). B
// writes version 2 on the partitions it takes; when B leaves, A cannot read their heads ("unknown entry version"): it
// stops those partitions and publishes nothing on them, while its own
// version 1 partitions go on. Once A is stopped and this build runs alone,
// every offset is on HDFS exactly once. This is the documented rule: a
// rolling upgrade across WAL version 2 loses nothing, but a partition that
// goes back to an old process stalls until that process is stopped; so
// stop the old processes first (docs/operations.md, "Upgrades").
func TestRollingUpgradeAcrossWALVersion2(t *testing.T) {
	t.Parallel()
	for _, b := range rollingBuilds {
		t.Run(b.name, func(t *testing.T) { rollingUpgrade(t, b) })
	}
}

func rollingUpgrade(t *testing.T, from earlierBuild) {
	s := newSetup(t, 4)
	counts := map[int32]int64{}
	cfg := s.connector("rolling", map[string]string{"flush.size": "300", "rotate.interval.ms": "1000"})
	a := s.startEarlier(from, cfg)
	s.produce(counts, 2000)
	s.waitCommitted(2000, 2*time.Minute)

	b := s.start(cfg)
	var v2 []int32
	// B's claim, at its assignment, is its first version 2 segment.
	until(t, "the group shares the partitions: B claims some (version 2 heads), A keeps the others", 2*time.Minute, func() bool {
		v2 = s.version2Heads()
		return len(v2) > 0 && len(v2) < int(s.parts)
	})
	s.produce(counts, 2000)
	s.waitCommitted(total(counts), 2*time.Minute)
	b.stop()
	v2 = s.version2Heads() // as B left them
	heads := map[int32]uint64{}
	for _, p := range v2 {
		heads[p] = s.headSeq(p)
	}
	t.Logf("B (this build) left holding version 2 heads on partitions %v at %v", v2, heads)

	// A is alone: B's partitions come to it, and it cannot read them.
	s.produce(counts, 2000)
	until(t, "the old build reports every version 2 partition broken", 2*time.Minute, func() bool {
		if from.statusErrors && !slices.Equal(a.brokenWith(s.topic, "unknown entry version"), v2) {
			return false
		}
		return slices.Equal(a.loggedFailing(s.topic, "unknown entry version"), v2)
	})
	// Its own partitions go on: everything produced to them is committed.
	for p := range s.parts {
		if !slices.Contains(v2, p) {
			until(t, fmt.Sprintf("the old build commits partition %d's records", p), 2*time.Minute, func() bool {
				return s.committedInPartition(p) == counts[p]
			})
		}
	}
	for p, seq := range heads {
		if got := s.headSeq(p); got != seq {
			t.Fatalf("partition %d: the old build published segment %d over this build's %d", p, got, seq)
		}
	}
	t.Logf("A (%s) on the version 2 partitions:\n%s\n/status: %v", from.commit[:7], a.grepLog("unknown entry version", 4), a.status()["connectors"])

	// The rule: stop the old process; this build alone finishes the work.
	a.stop()
	c := s.start(cfg)
	s.waitCommitted(total(counts), 2*time.Minute)
	c.stop()
	s.check(counts)
	if got := s.version2Heads(); len(got) != int(s.parts) {
		t.Errorf("version 2 heads after the upgrade: %v, want all %d partitions", got, s.parts)
	}
	if loose, _ := s.tempFiles(); len(loose) > 0 {
		t.Errorf("temp files of the earlier layout left after the upgrade: %v", loose)
	}
}

// walEntries decodes every segment of partition p's WAL (none: no WAL).
func (s *setup) walEntries(p int32) []entry.Entry {
	s.t.Helper()
	ctx := context.Background()
	log := wal.Open(s.fs, layout.Topic{LogsDir: path.Join(s.base, "logs"), Name: s.topic}.WALDir(p))
	seqs, err := log.Segments(ctx)
	if err != nil {
		s.t.Fatalf("WAL of partition %d: %v", p, err)
	}
	var out []entry.Entry
	for _, seq := range seqs {
		e, err := log.Read(ctx, seq)
		if err != nil {
			s.t.Fatalf("WAL segment %d of partition %d: %v", seq, p, err)
		}
		out = append(out, e)
	}
	return out
}

// headSeq is the number of partition p's newest WAL segment.
func (s *setup) headSeq(p int32) uint64 {
	s.t.Helper()
	log := wal.Open(s.fs, layout.Topic{LogsDir: path.Join(s.base, "logs"), Name: s.topic}.WALDir(p))
	seqs, err := log.Segments(context.Background())
	if err != nil || len(seqs) == 0 {
		s.t.Fatalf("WAL of partition %d: %v (%d segments)", p, err, len(seqs))
	}
	return seqs[len(seqs)-1]
}

// version2Heads are the partitions whose WAL head this build wrote.
func (s *setup) version2Heads() []int32 {
	var out []int32
	for p := range s.parts {
		if e, ok := s.liveHead(p); ok && !e.Legacy {
			out = append(out, p)
		}
	}
	return out
}

// liveHead is partition p's newest WAL entry (false: no WAL yet) while a
// daemon may be writing it: a head listed and then pruned, because a newer
// one was published meanwhile, is listed again.
func (s *setup) liveHead(p int32) (entry.Entry, bool) {
	s.t.Helper()
	ctx := context.Background()
	log := wal.Open(s.fs, layout.Topic{LogsDir: path.Join(s.base, "logs"), Name: s.topic}.WALDir(p))
	for try := 0; ; try++ {
		seqs, err := log.Segments(ctx)
		if err != nil {
			s.t.Fatalf("WAL of partition %d: %v", p, err)
		}
		if len(seqs) == 0 {
			return entry.Entry{}, false
		}
		e, err := log.Read(ctx, seqs[len(seqs)-1])
		if err == nil {
			return e, true
		}
		if !errors.Is(err, fs.ErrNotExist) || try == 10 {
			s.t.Fatalf("WAL head %d of partition %d: %v", seqs[len(seqs)-1], p, err)
		}
	}
}

// tempFiles lists the partitions' temp roots: loose are the entries that
// are not claim directories (where a build before claim directories
// wrote), claimed the files below claim directories.
func (s *setup) tempFiles() (loose, claimed []string) {
	s.t.Helper()
	for p := range s.parts {
		root := layout.Topic{TopicsDir: s.topicsDir(), Name: s.topic}.TempRoot(p)
		for _, fi := range s.readDir(root) {
			dir := path.Join(root, fi.Name())
			if _, ok := layout.ParseClaimDir(fi.Name()); !ok || !fi.IsDir() {
				loose = append(loose, dir)
				continue
			}
			for _, f := range s.readDir(dir) {
				claimed = append(claimed, path.Join(dir, f.Name()))
			}
		}
	}
	return loose, claimed
}

// readDir lists an HDFS directory; a missing one is empty.
func (s *setup) readDir(dir string) []fs.FileInfo {
	s.t.Helper()
	infos, err := s.fs.ReadDir(context.Background(), dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.t.Fatalf("list %s: %v", dir, err)
	}
	return infos
}

// committedInPartition is how many records partition p's committed file names cover.
func (s *setup) committedInPartition(p int32) int64 {
	var n int64
	for _, f := range s.committedFiles(p) {
		if r, ok := layout.ParseFinalName(path.Base(f)); ok {
			n += r.End - r.Start + 1
		}
	}
	return n
}

// brokenWith are the topic's partitions that the daemon's GET /status
// reports broken with an error containing text, in order.
func (d *daemon) brokenWith(topic, text string) []int32 {
	var out []int32
	conns, _ := d.status()["connectors"].([]any)
	for _, c := range conns {
		ps, _ := c.(map[string]any)["partitions"].(map[string]any)
		errs, _ := ps["errors"].(map[string]any)
		for tp, e := range errs {
			var p int32
			if _, err := fmt.Sscanf(strings.TrimPrefix(tp, topic+"/"), "%d", &p); err == nil && strings.HasPrefix(tp, topic+"/") && strings.Contains(fmt.Sprint(e), text) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// loggedFailing are the topic's partitions whose failures the daemon has
// logged with an error containing text, in order: builds whose /status
// does not name a broken partition's error say it only there.
func (d *daemon) loggedFailing(topic, text string) []int32 {
	b, _ := os.ReadFile(d.log)
	partition := regexp.MustCompile(` topic=` + regexp.QuoteMeta(topic) + ` partition=(\d+) `)
	var out []int32
	for _, l := range strings.Split(string(b), "\n") {
		m := partition.FindStringSubmatch(l)
		if m == nil || !strings.Contains(l, text) {
			continue
		}
		p, _ := strconv.ParseInt(m[1], 10, 32)
		if !slices.Contains(out, int32(p)) {
			out = append(out, int32(p))
		}
	}
	slices.Sort(out)
	return out
}

// grepLog is up to n lines of the daemon's log that contain text.
func (d *daemon) grepLog(text string, n int) string {
	b, _ := os.ReadFile(d.log)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) && len(out) < n {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
