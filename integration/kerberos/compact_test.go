//go:build integration

package kerberos

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"sort"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/layout"
)

// TestKerberosCompaction: the daemon's compaction policy on the Kerberized
// HDFS and Metastore, with the keytab login the sink uses: each
// partition's ten files are merged into its generation (read and written
// through Kerberos, with data transfer protection), the fence claims the
// WALs, the Hive partition's location is switched over SASL, every offset
// is in HDFS exactly once (read back through Kerberos), and at the
// location the metastore gives each partition the names tile its offsets.
// Not Spark (TestKerberosExactlyOnce reads through it): it would double
// the test's time.
func TestKerberosCompaction(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "krbc_")
	counts := map[int32]int64{}
	s.produce(counts, 1000) // ten files of 50 records per partition
	extra := hiveExtra(db)
	for k, v := range map[string]string{"flush.size": "50",
		"hdfs.sink.compaction.enabled": "true", "hdfs.sink.compaction.min.age.ms": "0", "hdfs.sink.compaction.min.files": "5",
		"hdfs.sink.compaction.interval.ms": "1000", "hdfs.sink.compaction.grace.ms": "0", "hdfs.sink.compaction.pace.ms": "0"} {
		extra[k] = v
	}
	d := s.start(s.connector("krb-compact", extra))
	table := hive.TableName("${topic}", s.topic)
	for p := range s.parts {
		gen := path.Join(s.topicsDir(), s.topic, layout.CompactedDirName, fmt.Sprintf("partition=%d", p))
		waitKrbPartitionLocation(t, db, table, fmt.Sprint(p), gen, 45*time.Second)
	}
	s.waitCommitted(d, 1000, time.Minute)
	// The location switch comes before the compaction's last steps (the
	// delta, the marker); "directory compacted" is logged after them.
	for deadline := time.Now().Add(30 * time.Second); d.count("directory compacted") < 2 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	d.stop()
	s.check(counts)
	if n := d.count("directory compacted"); n != 2 {
		t.Fatalf("%d directories compacted in the log, want 2:\n%s", n, d.tail(20))
	}
	for p := range s.parts {
		gen := path.Join(s.topicsDir(), s.topic, layout.CompactedDirName, fmt.Sprintf("partition=%d", p))
		if files, next := s.tiling(gen); next != counts[p] || files >= 10 {
			t.Fatalf("partition=%d at its generation: names tile offsets [0, %d) in %d files; want [0, %d) in fewer than the 10 written",
				p, next, files, counts[p])
		}
	}
	t.Logf("both partitions compacted and switched on the Kerberized services, every offset once")
}

// tiling lists dir through Kerberos and returns its committed files and
// the end of the offsets their names tile from 0 (-1: a gap or an
// overlap, a record missing or twice).
func (s *setup) tiling(dir string) (files int, next int64) {
	s.t.Helper()
	infos, err := s.fs.ReadDir(context.Background(), dir)
	if err != nil {
		s.t.Fatalf("list %s: %v", dir, err)
	}
	var ranges []layout.FileRange
	for _, fi := range infos {
		if r, ok := layout.ParseFinalName(fi.Name()); ok && !fi.IsDir() {
			ranges = append(ranges, r)
		}
	}
	sort.Slice(ranges, func(i, j int) bool { return ranges[i].Start < ranges[j].Start })
	for _, r := range ranges {
		if r.Start != next {
			return len(ranges), -1
		}
		next = r.End + 1
	}
	return len(ranges), next
}

// waitKrbPartitionLocation polls the Kerberized metastore until the
// partition with value is at path want.
func waitKrbPartitionLocation(t *testing.T, db, table, value, want string, within time.Duration) {
	t.Helper()
	var got string
	var err error
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var cl *hive.Client
		if cl, err = hive.Dial(ctx, itest.KrbMetastoreURI, itest.KrbMetastoreSASL()); err == nil {
			got, err = cl.PartitionLocation(ctx, db, table, []string{value})
			cl.Close()
		}
		cancel()
		if u, perr := url.Parse(got); err == nil && perr == nil && u.Path == want {
			return
		}
	}
	t.Fatalf("after %v the partition %s of %s.%s is at %q (last error %v), want %s", within, value, db, table, got, err, want)
}
