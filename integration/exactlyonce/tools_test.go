//go:build integration

package exactlyonce

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"path"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/wal"
)

// verifyJSON runs `hdfs-sink verify --json` and decodes its report.
func (s *setup) verifyJSON(cfg string) (int, []verify.TopicReport) {
	s.t.Helper()
	code, out, errOut := s.tool("verify", "--json", "--config", cfg, "--topic", s.topic)
	var doc struct {
		OK     bool
		Topics []verify.TopicReport
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		s.t.Fatalf("verify --json: exit %d, not JSON: %v\n%s%s", code, err, out, errOut)
	}
	return code, doc.Topics
}

// committedFiles lists partition p's committed files in name order.
func (s *setup) committedFiles(p int32) []string {
	s.t.Helper()
	dir := layout.Topic{TopicsDir: s.topicsDir(), Name: s.topic}.PartitionDir(p)
	infos, err := s.fs.ReadDir(context.Background(), dir)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, fi := range infos {
		out = append(out, path.Join(dir, fi.Name()))
	}
	return out
}

// copyFile copies an HDFS file to a new name.
func (s *setup) copyFile(from, to string) {
	s.t.Helper()
	r, err := s.fs.Open(context.Background(), from)
	if err != nil {
		s.t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	r.Close()
	s.writeFile(to, data)
}

func (s *setup) writeFile(name string, data []byte) {
	s.t.Helper()
	w, err := s.fs.Create(context.Background(), name)
	if err != nil {
		s.t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		s.t.Fatal(err)
	}
}

// TestVerifyReportsEachPlantedViolation: verify passes on an exactly-once
// topic and then names each planted violation, exiting 1, and passes again
// once it is undone.
func TestVerifyReportsEachPlantedViolation(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	cfg := s.connector("planted", map[string]string{"flush.size": "100", "rotate.interval.ms": "-1"})
	d := s.start(cfg)
	s.produce(counts, 1000)
	s.waitCommitted(1000, 2*time.Minute)
	d.stop()
	s.check(counts) // runs verify too: exit 0
	code, out, _ := s.tool("verify", "--config", cfg)
	t.Logf("hdfs-sink verify on an exactly-once topic (exit %d):\n%s", code, out)
	files := s.committedFiles(0)
	middle, first := files[2], files[0]
	r, _ := layout.ParseFinalName(first)
	tempRoot := layout.Topic{TopicsDir: s.topicsDir(), Name: s.topic}.TempRoot(0)
	aside := path.Join(s.base, "aside", path.Base(middle)) // out of topics.dir
	if err := s.fs.MkdirAll(t.Context(), path.Dir(aside)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		plant, undo  func()
		kind, detail string
	}{
		{"deleted file", func() { s.fs.Rename(t.Context(), middle, aside) }, func() { s.fs.Rename(t.Context(), aside, middle) }, "hole", "offsets 200-299"},
		{"duplicated file", func() { s.copyFile(first, path.Join(path.Dir(first), "copy", path.Base(first))) },
			func() { s.fs.RemoveAll(t.Context(), path.Join(path.Dir(first), "copy")) }, "duplicate", "offsets 0-99 are also in"},
		{"overlapping name", func() {
			s.copyFile(first, path.Join(path.Dir(first), layout.FinalName(s.topic, 0, r.Start+50, r.End+50, 10, ".avro")))
		}, func() {
			s.fs.Remove(t.Context(), path.Join(path.Dir(first), layout.FinalName(s.topic, 0, r.Start+50, r.End+50, 10, ".avro")))
		},
			"overlap", "offsets 50-149 overlap"},
		{"orphan temp file", func() { s.writeFile(path.Join(tempRoot, "stray_tmp.avro"), []byte("x")) },
			func() { s.fs.RemoveAll(t.Context(), tempRoot) }, "orphan-temp", "stray_tmp.avro"},
	} {
		tc.plant()
		code, reps := s.verifyJSON(cfg)
		v := reps[0].Partitions[0].Violations
		if code != 1 || !onlyKind(v, tc.kind) || !strings.Contains(v[0].Path+" "+v[0].Detail, tc.detail) {
			t.Fatalf("%s: exit %d, violations %+v; want exit 1 and %s violations, the first naming %q", tc.name, code, v, tc.kind, tc.detail)
		}
		_, text, _ := s.tool("verify", "--config", cfg)
		t.Logf("%s planted: exit %d\n%s", tc.name, code, text)
		tc.undo()
		if code, reps := s.verifyJSON(cfg); code != 0 {
			t.Fatalf("%s undone: exit %d, %+v", tc.name, code, reps)
		}
	}
}

// onlyKind reports whether vs is not empty and all of kind k.
func onlyKind(vs []verify.Violation, k string) bool {
	for _, v := range vs {
		if string(v.Kind) != k {
			return false
		}
	}
	return len(vs) > 0
}

// TestWALInspectMidCommit: a daemon frozen right after publishing a commit
// (before renaming its file): wal inspect shows the commit and the roll
// forward recovery would do, and verify counts the pending file as
// committed, not as a hole.
func TestWALInspectMidCommit(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	cfg := s.connector("midcommit", map[string]string{"flush.size": "300", "rotate.interval.ms": "-1"})
	d := s.start(cfg, "HDFS_SINK_FREEZE_AT=WAL_APPENDED:2")
	s.produce(counts, 700)
	waitLog(t, d, "fault injection: SIGSTOP at WAL_APPENDED (#2)", 2*time.Minute)
	code, out, errOut := s.tool("wal", "inspect", s.topic, "0", "--config", cfg)
	t.Logf("hdfs-sink wal inspect, owner frozen mid-commit (exit %d):\n%s%s", code, out, errOut)
	for _, want := range []string{"commit by", "committed offset 599", "roll forward: rename", "resume consuming at offset 600"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("wal inspect mid-commit: exit %d, output lacks %q", code, want)
		}
	}
	if code, reps := s.verifyJSON(cfg); code != 0 || !strings.Contains(strings.Join(reps[0].Partitions[0].Notes, "\n"), "rename is under way") {
		t.Fatalf("verify mid-commit: exit %d %+v", code, reps)
	}
	d.signal(syscall.SIGCONT)
	s.waitCommitted(600, time.Minute)
	d.stop()
	s.check(map[int32]int64{0: 700})
}

// tearHead cuts partition p's newest WAL segment in half on HDFS.
func (s *setup) tearHead(cfgLogs string, p int32) uint64 {
	s.t.Helper()
	log := wal.Open(s.fs, layout.Topic{LogsDir: cfgLogs, Name: s.topic}.WALDir(p))
	seqs, err := log.Segments(context.Background())
	if err != nil || len(seqs) == 0 {
		s.t.Fatalf("no WAL to tear: %v", err)
	}
	head := seqs[len(seqs)-1]
	r, err := s.fs.Open(context.Background(), log.SegmentPath(head))
	if err != nil {
		s.t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	r.Close()
	if err := s.fs.Remove(context.Background(), log.SegmentPath(head)); err != nil {
		s.t.Fatal(err)
	}
	s.writeFile(log.SegmentPath(head), data[:len(data)/2])
	return head
}

// TestWALRepairTornSegment: a torn head stops the partition; repair refuses
// while the stuck daemon is a live group member, repairs with --force
// --yes, and the daemon, at its next retry, recovers cleanly and writes
// every offset exactly once.
func TestWALRepairTornSegment(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	cfg := s.connector("torn", map[string]string{"flush.size": "200", "rotate.interval.ms": "-1"})
	d := s.start(cfg)
	s.produce(counts, 600)
	s.waitCommitted(600, 2*time.Minute)
	d.stop()
	head := s.tearHead(path.Join(s.base, "logs"), 0)
	stuck := s.start(cfg)
	waitLog(t, stuck, "torn tail", time.Minute)
	code, out, _ := s.tool("wal", "inspect", s.topic, "0", "--config", cfg)
	t.Logf("wal inspect of a torn head (exit %d):\n%s", code, out)
	if code != 1 || !strings.Contains(out, "UNREADABLE") {
		t.Fatalf("wal inspect of a torn segment %d: exit %d", head, code)
	}
	code, out, errOut := s.tool("wal", "repair", s.topic, "0", "--config", cfg, "--yes", "--min-age", "0s")
	if code != 1 || !strings.Contains(errOut, "is assigned this partition") {
		t.Fatalf("repair under a live owner must refuse: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = s.tool("wal", "repair", s.topic, "0", "--config", cfg, "--yes", "--force")
	t.Logf("wal repair --yes --force (exit %d):\n%s%s", code, out, errOut)
	if code != 0 || !strings.Contains(out, "committed offset 599") {
		t.Fatalf("repair: exit %d", code)
	}
	s.produce(counts, 400)
	s.waitCommitted(1000, 4*time.Minute) // the stuck daemon's retry backoff has grown meanwhile
	stuck.stop()
	s.check(counts)
	if code, out, _ := s.tool("wal", "inspect", s.topic, "0", "--config", cfg); code != 0 {
		t.Fatalf("wal inspect after the repair and a recovery: exit %d\n%s", code, out)
	}
}

// TestOffsetsResetToTimestamp: offsets shows where each partition stands;
// a reset of partition 0 to a time skips the records before it, and the
// partition resumes there exactly once while partition 1 is untouched.
func TestOffsetsResetToTimestamp(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	cfg := s.connector("reset", map[string]string{"flush.size": "100", "rotate.interval.ms": "1000"})
	d := s.start(cfg)
	s.produce(counts, 400)
	s.waitCommitted(400, 2*time.Minute)
	time.Sleep(6 * time.Second) // the group's advisory offsets follow within the 5 s auto-commit interval
	d.stop()
	code, out, errOut := s.tool("offsets", "--config", cfg, "--json")
	var rows []struct {
		Partition int32
		HDFSNext  int64  `json:"hdfs_next_offset"`
		Group     *int64 `json:"group_offset"`
		LogStart  int64  `json:"log_start_offset"`
		LogEnd    int64  `json:"log_end_offset"`
		Lag       int64
	}
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 2 {
		t.Fatalf("offsets: exit %d %v\n%s%s", code, err, out, errOut)
	}
	for _, r := range rows {
		if r.HDFSNext != 200 || r.Lag != 0 || r.LogStart != 0 || r.LogEnd != 200 || r.Group == nil || *r.Group != 200 {
			t.Fatalf("offsets after committing 200 per partition: %+v", r)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	s.produce(counts, 200) // offsets 200-299 of each partition
	time.Sleep(1500 * time.Millisecond)
	at := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(1500 * time.Millisecond)
	s.produce(counts, 200) // 300-399
	code, out, errOut = s.tool("offsets", "--reset-to", at, "--config", cfg, "--topic", s.topic, "--partition", "0", "--yes")
	if code != 0 || !strings.Contains(out, "resumes at offset 300") {
		t.Fatalf("offsets --reset-to %s: exit %d\n%s%s", at, code, out, errOut)
	}
	d = s.start(cfg)
	s.waitCommitted(700, 2*time.Minute)
	d.stop()
	s.noVerify = true // verify must report the skipped range: asserted below
	rep, err := verify.Check(t.Context(), s.fs, verify.Options{TopicsDir: s.topicsDir(), Topic: s.topic, Want: counts, SeqField: "seq",
		Skip: map[int32][2]int64{0: {200, 300}}})
	if err != nil {
		t.Fatalf("exactly once from the new position: %v (%d files)", err, len(rep.Files))
	}
	code, reps := s.verifyJSON(cfg)
	v := reps[0].Partitions[0].Violations
	if code != 1 || len(v) != 1 || v[0].Kind != verify.KindHole || !strings.Contains(v[0].Detail, "offsets 200-299") || len(reps[0].Partitions[1].Violations) != 0 {
		t.Fatalf("verify after the reset: exit %d %+v", code, reps)
	}
}

// TestCheckConnectNamesTheServiceThatIsDown stops each service in turn:
// the stopped one refuses connections, which is reported at once with the
// refusal, never as a probe that ran out of time.
func TestCheckConnectNamesTheServiceThatIsDown(t *testing.T) {
	s := newSetup(t, 1)
	db := itest.UniqueName(t, "cc_")
	cfg := s.connector("connect", hiveOn(db, nil))
	if code, out, errOut := s.tool("check", "--connect", "--config", cfg); code != 0 || strings.Count(out, ": OK") != 4 {
		t.Fatalf("check --connect with every service up: exit %d\n%s%s", code, out, errOut)
	}
	startOnCleanup(t, "kafka", "namenode", "hms")
	for _, tc := range []struct{ svc, service string }{
		{"kafka", "Kafka"}, {"namenode", "store"}, {"hms", "Hive Metastore"}, {"registry", "Schema Registry"},
	} {
		cfg, stopped := cfg, tc.svc != "registry"
		if stopped {
			testenv(t, "stop", tc.svc)
		} else {
			// Not stopped: the Kerberos tests, which run beside this
			// package, share the registry. A registry address nobody
			// listens on refuses connections as a stopped one does.
			cfg = s.connector("connect", hiveOn(db, map[string]string{"value.converter.schema.registry.url": refusingURL(t)}))
		}
		code, out, errOut := s.tool("check", "--connect", "--config", cfg, "--timeout", "10s")
		t.Logf("check --connect with %s stopped (exit %d):\n%s", tc.svc, code, out)
		failed := strings.Count(out, "FAILED")
		if code != 1 || failed != 1 || !strings.Contains(out, `connector "connect": `+tc.service+" ") ||
			!strings.Contains(out[strings.Index(out, `": `+tc.service+" "):], "FAILED") ||
			strings.Contains(out, "timed out") || strings.Contains(out, "deadline exceeded") {
			t.Fatalf("with %s stopped: exit %d, %d failures\n%s%s", tc.svc, code, failed, out, errOut)
		}
		if stopped {
			testenv(t, "start", tc.svc)
		}
	}
}

// refusingURL is a registry URL on a port of 127.0.0.1 that was free a
// moment ago: a connection to it is refused.
func refusingURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/apis/ccompat/v7"
}
