//go:build integration

package exactlyonce

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/layout"
)

// TestCompletenessMarkers: hourly directories by record time, three
// partitions of which one stays empty (idle), two past hours written by
// partitions 0 and 1 and the current hour by partition 0. A daemon alone
// is SIGKILLed at one step of its first marking; then two daemons of the
// connector share the partitions. Each past hour gets its Hive parameter
// and its _SUCCESS, and whenever a _SUCCESS is seen, the committed files of
// its hour already hold every record produced for it; the current hour
// gets none; every offset is committed exactly once.
func TestCompletenessMarkers(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"judged", "cataloged", "marked"} {
		t.Run(step, func(t *testing.T) { completenessAfterCrash(t, step) })
	}
}

func completenessAfterCrash(t *testing.T, step string) {
	s := newSetup(t, 3)
	db := itest.UniqueName(t, "cm_")
	now := time.Now().UTC()
	base := now.Truncate(time.Hour).Add(-4 * time.Hour)
	counts := map[int32]int64{}
	s.parts = 2 // partitions 0 and 1: 12 records 10 minutes apart, two hours
	s.produceTimed(counts, 12, base)
	s.parts = 1 // partition 0: three in the current hour
	s.produceAt(counts, func(int32, int) time.Time { return now }, 0, 3)
	s.parts = 3 // partition 2 stays empty
	want := map[string]int64{hourOf(base): 12, hourOf(base.Add(time.Hour)): 12}
	cfg := s.connector("complete", hiveOn(db, map[string]string{
		"partitioner.class":   "io.confluent.connect.storage.partitioner.HourlyPartitioner",
		"timestamp.extractor": "Record", "timezone": "UTC", "locale": "en", "flush.size": "3",
		"hdfs.sink.completeness.enabled": "true", "hdfs.sink.completeness.interval.ms": "500",
	}))
	d := s.start(cfg, "HDFS_SINK_CRASH_AT_MARK="+step+":1")
	if err, exited := d.wait(2 * time.Minute); !exited || !killedBySIGKILL(err) {
		t.Fatalf("daemon did not die at marking step %s (exited=%v err=%v)", step, exited, err)
	}
	d1, d2 := s.start(cfg), s.start(cfg)
	s.waitMarkedComplete(want, 2*time.Minute)
	if s.marked(hourOf(now)) {
		t.Fatalf("the current hour %s is marked complete", hourOf(now))
	}
	table := hive.TableName("${topic}", s.topic)
	for dir := range want {
		if v := partitionParam(t, db, table, dir); v == "" {
			t.Errorf("%s: marked, but its Hive partition has no hdfs.sink.complete parameter", dir)
		}
	}
	s.waitCommitted(total(counts), time.Minute)
	d1.stop()
	d2.stop()
	s.check(counts)
}

func hourOf(at time.Time) string {
	at = at.UTC()
	return "year=" + at.Format("2006") + "/month=" + at.Format("01") + "/day=" + at.Format("02") + "/hour=" + at.Format("15")
}

// marked reports whether dir (below the topic) has its _SUCCESS.
func (s *setup) marked(dir string) bool {
	s.t.Helper()
	_, err := s.fs.Stat(context.Background(), path.Join(s.topicsDir(), s.topic, dir, "_SUCCESS"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.t.Fatal(err)
	}
	return err == nil
}

// waitMarkedComplete waits until every directory of want is marked. Each
// time it sees a marker, the committed files of that directory must hold
// want[dir] records already.
func (s *setup) waitMarkedComplete(want map[string]int64, within time.Duration) {
	s.t.Helper()
	checked := map[string]bool{}
	for deadline := time.Now().Add(within); len(checked) < len(want); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatalf("after %v only %v of %v are marked complete", within, checked, want)
		}
		for dir, n := range want {
			if checked[dir] || !s.marked(dir) {
				continue
			}
			if got := s.committedIn(dir); got != n {
				s.t.Fatalf("%s is marked complete with %d records committed in it, want %d", dir, got, n)
			}
			checked[dir] = true
		}
	}
}

// committedIn counts the records of the committed files in dir by their
// names: each partition's records here are in time order, so a file of an
// hour holds every offset its name spans.
func (s *setup) committedIn(dir string) int64 {
	s.t.Helper()
	infos, err := s.fs.ReadDir(context.Background(), path.Join(s.topicsDir(), s.topic, dir))
	if err != nil {
		s.t.Fatal(err)
	}
	var n int64
	for _, fi := range infos {
		if r, ok := layout.ParseFinalName(fi.Name()); ok {
			n += r.End - r.Start + 1
		}
	}
	return n
}

// partitionParam is the completeness parameter of the hourly partition dir.
func partitionParam(t *testing.T, db, table, dir string) string {
	t.Helper()
	var values []string
	for _, kv := range strings.Split(dir, "/") {
		_, v, _ := strings.Cut(kv, "=")
		values = append(values, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := hive.Dial(ctx, itest.MetastoreURI())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	params, err := cl.PartitionParams(ctx, db, table, values)
	if err != nil {
		t.Fatalf("partition %s of %s.%s: %v", dir, db, table, err)
	}
	return params["hdfs.sink.complete"]
}
