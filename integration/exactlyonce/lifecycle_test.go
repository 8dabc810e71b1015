//go:build integration

package exactlyonce

import (
	"context"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/layout"
)

// TestCompletenessThenCompaction (issue 24): completeness markers and the
// daemon's compaction policy on one connector. Two past hours of two
// partitions are written in small files; each past hour is marked complete
// first and only then compacted (the policy compacts complete directories
// only); its Hive partition moves to the compacted generation and keeps
// its completeness parameter; its _SUCCESS stays in the hour's directory,
// where downstream jobs look for it; the current hour is neither marked
// nor compacted; every offset is in HDFS exactly once. Parquet: the merge
// that decodes and encodes again, reading each input ahead of the merge.
func TestCompletenessThenCompaction(t *testing.T) {
	t.Parallel()
	itest.RequireMetastore(t)
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "lc_")
	now := time.Now().UTC()
	base := now.Truncate(time.Hour).Add(-3 * time.Hour)
	counts := map[int32]int64{}
	s.produceTimed(counts, 12, base) // per partition, 12 records 10 minutes apart: two hours
	s.parts = 1
	s.produceAt(counts, func(int32, int) time.Time { return now }, 0, 3)
	s.parts = 2
	past := []string{hourOf(base), hourOf(base.Add(time.Hour))}
	cfg := s.connector("lifecycle", hiveOn(db, map[string]string{
		"partitioner.class":   "io.confluent.connect.storage.partitioner.HourlyPartitioner",
		"timestamp.extractor": "Record", "timezone": "UTC", "locale": "en", "flush.size": "2", "format.class": "parquet",
		"hdfs.sink.completeness.enabled": "true", "hdfs.sink.completeness.interval.ms": "500",
		"hdfs.sink.compaction.enabled": "true", "hdfs.sink.compaction.min.files": "4",
		"hdfs.sink.compaction.interval.ms": "2000", "hdfs.sink.compaction.grace.ms": "0",
		"hdfs.sink.compaction.pace.ms": "3000", // the second hour is held 3 s after the first one's fence
	}))
	d := s.start(cfg)
	s.waitMarkedComplete(map[string]int64{past[0]: 12, past[1]: 12}, 2*time.Minute)
	table := hive.TableName("${topic}", s.topic)
	for _, dir := range past {
		gen := path.Join(s.topicsDir(), s.topic, layout.CompactedDirName, dir)
		s.waitPartitionLocation(db, table, dir, gen, 2*time.Minute)
		if v := partitionParam(t, db, table, dir); v == "" {
			t.Errorf("%s: compacted, and its Hive partition lost the hdfs.sink.complete parameter", dir)
		}
		if !s.marked(dir) {
			t.Errorf("%s: compacted, and its _SUCCESS is gone from the hour's directory", dir)
		}
		if n := countFinal(t, s, gen); n >= 6 {
			t.Errorf("%s: the generation holds %d files, want fewer than the 6 the sink wrote", dir, n)
		}
	}
	if s.marked(hourOf(now)) {
		t.Fatalf("the current hour %s is marked complete", hourOf(now))
	}
	s.waitCommitted(total(counts), time.Minute)
	d.stop()
	rep := s.check(counts)
	t.Logf("%d records exactly once in %d files; both past hours marked, then compacted", rep.Records, len(rep.Files))
}

// waitPartitionLocation waits until the Hive partition of the hourly
// directory dir is at location want (a path in the test's HDFS).
func (s *setup) waitPartitionLocation(db, table, dir, want string, within time.Duration) {
	s.t.Helper()
	s.waitPartitionLocationAt(itest.MetastoreURI(), db, table, dir, want, within)
}

// waitPartitionLocationAt is waitPartitionLocation on the metastore at uri.
func (s *setup) waitPartitionLocationAt(uri, db, table, dir, want string, within time.Duration) {
	s.t.Helper()
	var values []string
	for _, kv := range strings.Split(dir, "/") {
		_, v, _ := strings.Cut(kv, "=")
		values = append(values, v)
	}
	var got string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cl, err := hive.Dial(ctx, uri)
		if err == nil {
			got, err = cl.PartitionLocation(ctx, db, table, values)
			cl.Close()
		}
		cancel()
		if u, perr := url.Parse(got); err == nil && perr == nil && u.Path == want {
			return
		}
	}
	s.t.Fatalf("after %v the Hive partition of %s is at %q, want %s", within, dir, got, want)
}

// countFinal counts the committed file names in dir.
func countFinal(t *testing.T, s *setup, dir string) int {
	t.Helper()
	infos, err := s.fs.ReadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fi := range infos {
		if _, ok := layout.ParseFinalName(fi.Name()); ok && !fi.IsDir() {
			n++
		}
	}
	return n
}
