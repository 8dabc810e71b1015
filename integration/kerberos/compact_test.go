//go:build integration

package kerberos

import (
	"context"
	"fmt"
	"net/url"
	"path"
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
// is in HDFS exactly once, and Spark, logged in through Kerberos, reads
// each partition's records once through the metastore.
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
	d.stop()
	s.check(counts)
	if n := d.count("directory compacted"); n != 2 {
		t.Fatalf("%d directories compacted in the log, want 2:\n%s", n, d.tail(20))
	}
	res := itest.KrbSparkSQL(t, fmt.Sprintf("SELECT partition, count(*) AS n, count(DISTINCT seq) AS d FROM %s.%s GROUP BY partition ORDER BY partition", db, table))
	if len(res[0]) != 2 {
		t.Fatalf("Spark through Kerberos sees %d partitions: %v", len(res[0]), res[0])
	}
	for _, row := range res[0] {
		if row["n"] != float64(500) || row["d"] != float64(500) {
			t.Fatalf("Spark through Kerberos after the compaction: %v; want 500 distinct rows per partition", row)
		}
	}
	t.Logf("both partitions compacted and switched on the Kerberized services; Spark per partition %v", res[0])
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
