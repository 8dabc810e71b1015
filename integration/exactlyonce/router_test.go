//go:build integration

package exactlyonce

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
)

// TestRegexRouterThroughSIGKILL (issue 23): a RegexRouter renames the
// consumed topic itest_… to orders_…; the daemon is killed after its first
// commits and started again. Every offset of both partitions is in the
// files under topics/<routed>/ exactly once (their names carry the routed
// name and the source partition's offsets), the WALs are under
// logs/<routed>/, nothing is kept under the consumed name, the Hive table
// is named by the routed name and holds both partitions, and `hdfs-sink
// verify`, asked about the consumed topic, agrees.
func TestRegexRouterThroughSIGKILL(t *testing.T) {
	t.Parallel()
	const parts, n = 2, 600
	s := newSetup(t, parts)
	routed := "orders_" + strings.TrimPrefix(s.topic, "itest_")
	db := itest.UniqueName(t, "route_")
	counts := map[int32]int64{}
	s.produce(counts, n/2)
	cfg := s.connector("router", hiveOn(db, map[string]string{
		"flush.size": "100", "rotate.interval.ms": "1000",
		"transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex": "itest_(.*)", "transforms.route.replacement": "orders_$1",
	}))
	d := s.start(cfg)
	s.waitCommittedAs(routed, 100, time.Minute)
	d.signal(syscall.SIGKILL)
	d.wait(30 * time.Second)
	// The second half after the SIGKILL: the restarted daemon recovers from
	// what the routed name holds and has records of its own to commit.
	s.produce(counts, n/2)
	d = s.start(cfg)
	s.waitCommittedAs(routed, n, 2*time.Minute)
	table := hive.TableName("${topic}", routed)
	hivePartitions(t, db, table, parts, time.Minute)
	d.stop()

	rep, err := verify.Check(context.Background(), s.fs, verify.Options{TopicsDir: s.topicsDir(), Topic: routed, Want: counts, SeqField: "seq"})
	if err != nil {
		t.Fatalf("exactly-once violated under the routed name: %v", err)
	}
	for _, f := range rep.Files {
		if !strings.HasPrefix(path.Base(f.Path), routed+"+") {
			t.Errorf("committed file %s: want it named %s+<partition>+<first>+<last>", f.Path, routed)
		}
	}
	for _, dir := range []string{path.Join(s.base, "logs", routed, "0"), path.Join(s.base, "logs", routed, "1")} {
		if _, err := s.fs.Stat(context.Background(), dir); err != nil {
			t.Errorf("WAL of the routed name: %v", err)
		}
	}
	for _, dir := range []string{path.Join(s.topicsDir(), s.topic), path.Join(s.base, "logs", s.topic)} {
		if _, err := s.fs.Stat(context.Background(), dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v; want nothing under the consumed name", dir, err)
		}
	}
	s.routedTableAt(db, table, path.Join(s.topicsDir(), routed))
	if code, out, errOut := s.tool("verify", "--config", cfg, "--topic", s.topic); code != 0 {
		t.Fatalf("hdfs-sink verify --topic %s (routed to %s): exit %d\n%s%s", s.topic, routed, code, out, errOut)
	}
	t.Logf("%d records of %s exactly once under %s in %d files across a SIGKILL", rep.Records, s.topic, routed, len(rep.Files))
}

// waitCommittedAs waits until the files committed under name cover n records.
func (s *setup) waitCommittedAs(name string, n int64, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	var got int64
	for time.Now().Before(deadline) {
		var err error
		if got, err = verify.CountByNames(context.Background(), s.fs, s.topicsDir(), name); err == nil && got >= n {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	s.t.Fatalf("after %v, files committed under %s hold %d records, want %d", within, name, got, n)
}

// routedTableAt checks that the metastore's table of the routed name
// points at the routed topic directory.
func (s *setup) routedTableAt(db, table, dir string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := hive.Dial(ctx, itest.MetastoreURI())
	if err != nil {
		s.t.Fatal(err)
	}
	defer cl.Close()
	tab, err := cl.GetTable(ctx, db, table)
	if err != nil {
		s.t.Fatalf("Hive table %s.%s of the routed name: %v", db, table, err)
	}
	if !strings.HasSuffix(tab.Location, dir) {
		s.t.Errorf("Hive table %s.%s at %s, want the routed directory %s", db, table, tab.Location, dir)
	}
}
