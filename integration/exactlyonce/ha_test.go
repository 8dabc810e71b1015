//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"path"
	"syscall"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

// newHASetup is newSetup on the HA profile's nameservice (testenv/ha.sh):
// the checks read through it, as the daemon writes.
func newHASetup(t *testing.T, parts int32) *setup {
	itest.RequireHAHDFS(t)
	itest.RequireRegistry(t)
	fs, err := hdfs.New(hdfs.Options{URL: itest.HAURI, ConfDir: itest.HAConfDir(), User: itest.DefaultHDFSUser})
	if err != nil {
		t.Fatalf("HDFS nameservice %s: %v", itest.HANameservice, err)
	}
	s := &setup{t: t, topic: itest.Topic(t, parts), parts: parts, base: path.Join("/itest", itest.UniqueName(t, "")), fs: fs}
	if err := fs.MkdirAll(t.Context(), s.base); err != nil {
		t.Fatalf("HDFS nameservice %s: mkdir %s: %v", itest.HANameservice, s.base, err)
	}
	t.Cleanup(func() {
		if err := fs.RemoveAll(context.Background(), s.base); err != nil { // t.Context() is done by now
			t.Logf("remove %s: %v", s.base, err)
		}
		fs.Close()
	})
	s.registerSchema()
	return s
}

// haConnector is the connector file of an HA test: the nameservice's URL
// and the hadoop.conf.dir that defines it.
func (s *setup) haConnector(name string, extra map[string]string) string {
	cfg := map[string]string{"hdfs.url": itest.HAURI + s.base, "hadoop.conf.dir": itest.HAConfDir()}
	for k, v := range extra {
		cfg[k] = v
	}
	return s.connector(name, cfg)
}

// TestHAFailoverGroupOfTwo: two daemons in one group write 8 partitions to
// the HA nameservice, with Hive on, while the active NameNode is failed
// over gracefully, then SIGKILLed (the standby made active after a few
// seconds without any active NameNode), and each daemon is SIGKILLed and
// started again: once while both NameNodes are up, once while none is
// active. Every offset is on HDFS exactly once, and Spark counts every
// record, once, through the Hive table.
func TestHAFailoverGroupOfTwo(t *testing.T) {
	s := newHASetup(t, 8)
	db := itest.UniqueName(t, "ha_")
	cfg := s.haConnector("ha-group", hiveOn(db, map[string]string{"flush.size": "300", "rotate.interval.ms": "1000"}))
	// Whatever happens below, the killed NameNode is started again for
	// the tests after this one.
	t.Cleanup(func() { testenv(t, "ha-up") })
	counts := map[int32]int64{}
	flow := func() { s.produce(counts, 1600); time.Sleep(2 * time.Second) }
	a, b := s.start(cfg), s.start(cfg)
	flow()
	testenv(t, "ha-failover") // graceful: the active steps down, the standby takes over
	flow()
	a.signal(syscall.SIGKILL)
	a.wait(30 * time.Second)
	a = s.start(cfg)
	flow()
	testenv(t, "ha-kill-active")
	flow()
	b.signal(syscall.SIGKILL) // and started again while no NameNode is active
	b.wait(30 * time.Second)
	b = s.start(cfg)
	flow()
	testenv(t, "ha-failover") // the standby made active, the dead one fenced
	flow()
	testenv(t, "ha-up") // the killed NameNode back, as standby
	flow()
	s.waitCommitted(total(counts), 4*time.Minute)
	a.stop()
	b.stop()
	s.check(counts)
	table := hive.TableName("${topic}", s.topic)
	hivePartitions(t, db, table, int(s.parts), 2*time.Minute)
	res := itest.HASparkSQL(t, fmt.Sprintf("SELECT partition, count(*) AS n, count(DISTINCT seq) AS d FROM %s.%s GROUP BY partition ORDER BY partition", db, table))
	if len(res[0]) != int(s.parts) {
		t.Fatalf("Spark sees %d partitions with rows: %v; want %d", len(res[0]), res[0], s.parts)
	}
	for _, row := range res[0] {
		var p int32
		fmt.Sscan(fmt.Sprint(row["partition"]), &p)
		if want := float64(counts[p]); row["n"] != want || row["d"] != want {
			t.Fatalf("partition %v read by Spark: %v; want %v rows, %v distinct seq", row["partition"], row, want, want)
		}
	}
	t.Logf("%d records over %d partitions, exactly once on HDFS and through Spark", total(counts), s.parts)
}
