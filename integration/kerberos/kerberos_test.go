//go:build integration

package kerberos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// TestKerberosExactlyOnce: from Kafka's GSSAPI listener into the
// Kerberized HDFS, registered on the Kerberized Metastore, all with one
// keytab login; every offset committed exactly once, and Spark, itself
// logged in through Kerberos, counts the rows of each partition.
func TestKerberosExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "krb_")
	counts := map[int32]int64{}
	s.produce(counts, 2000)
	d := s.start(s.connector("krb-eo", hiveExtra(db)))
	s.waitCommitted(d, 2000, 2*time.Minute)
	table := hive.TableName("${topic}", s.topic)
	parts := hivePartitions(t, db, table, 2, 2*time.Minute)
	d.stop()
	rep := s.check(counts)
	if fmt.Sprint(parts) != "[partition=0 partition=1]" {
		t.Fatalf("partitions on the Kerberized Metastore: %v", parts)
	}
	// One login shared by HDFS, the Metastore and Kafka: the same principal
	// and keytab log in once.
	if n := d.count("kerberos login from keytab"); n != 1 {
		t.Errorf("%d keytab logins in the log, want 1 shared by HDFS, Metastore and Kafka", n)
	}
	res := itest.KrbSparkSQL(t, fmt.Sprintf("SELECT partition, count(*) AS n, count(DISTINCT seq) AS d FROM %s.%s GROUP BY partition ORDER BY partition", db, table))
	if len(res[0]) != 2 {
		t.Fatalf("Spark through Kerberos sees %d partitions: %v", len(res[0]), res[0])
	}
	for _, row := range res[0] {
		if row["n"] != float64(1000) || row["d"] != float64(1000) {
			t.Fatalf("Spark through Kerberos: %v; want 1000 distinct rows per partition", row)
		}
	}
	t.Logf("%d records in %d files, exactly once; Spark per partition %v", rep.Records, len(rep.Files), res[0])
}

// hivePartitions polls the Kerberized metastore until table has n partitions.
func hivePartitions(t *testing.T, db, table string, n int, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	var names []string
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var cl *hive.Client
		if cl, err = hive.Dial(ctx, itest.KrbMetastoreURI, itest.KrbMetastoreSASL()); err == nil {
			names, err = cl.ListPartitionNames(ctx, db, table)
			cl.Close()
		}
		cancel()
		if err == nil && len(names) >= n {
			sort.Strings(names)
			return names
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%s.%s has partitions %v after %v (last error %v), want %d", db, table, names, within, err, n)
	return nil
}

// TestKerberosCheck: `check` loads hadoop.conf.dir and says what each
// connection will authenticate with; a conf dir that asks for Kerberos
// without the connector's keys is an error there, not a retried outage.
func TestKerberosCheck(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	krbCheck := s.connector("krb-check", hiveExtra("default"))
	out, err := exec.Command(binary(t), "check", "--config", krbCheck).CombinedOutput()
	if err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	// --connect reaches each service as the daemon would: GSSAPI to the
	// broker, the Kerberized NameNode, SASL to the Metastore.
	conn, err := exec.Command(binary(t), "check", "--connect", "--config", krbCheck).CombinedOutput()
	if err != nil || strings.Count(string(conn), ": OK") != 4 || !strings.Contains(string(conn), "Hive Metastore thrift://") {
		t.Fatalf("check --connect: %v (want 4 services OK, the metastore among them)\n%s", err, conn)
	}
	for _, want := range []string{
		"kerberos login: sink@EXAMPLE.COM from keytab " + itest.Keytab("sink"),
		"hdfs: Kerberos to NameNode principal nn/_HOST", "data transfer protection privacy",
		"; authentication kerberos;", "; user from the Kerberos principal", "; SASL GSSAPI to hive/_HOST@EXAMPLE.COM",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	cfg := s.connector("krb-missing", map[string]string{"hdfs.authentication.kerberos": "", "connect.hdfs.principal": "",
		"connect.hdfs.keytab": "", "hdfs.namenode.principal": "", "hdfs.sink.krb5.conf": ""})
	out, err = exec.Command(binary(t), "check", "--config", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "sets hadoop.security.authentication=kerberos: set hdfs.authentication.kerberos=true") {
		t.Fatalf("check of a Kerberos conf dir without Kerberos keys: err %v\n%s", err, out)
	}
}

// TestKerberosTwoLogins: HDFS as sink/_HOST (the host's own principal, from
// its keytab) and Kafka as sink: two principals, two logins, each from the
// connector's krb5.conf; _HOST becomes this host's name.
func TestKerberosTwoLogins(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	s.produce(counts, 500)
	d := s.start(s.connector("krb-two", map[string]string{
		"connect.hdfs.principal": "sink/_HOST@" + itest.KrbRealm, "connect.hdfs.keytab": itest.Keytab("sink-host"),
	}))
	s.waitCommitted(d, 500, 2*time.Minute)
	d.stop()
	s.check(counts)
	if n := d.count("kerberos login from keytab"); n != 2 {
		t.Fatalf("%d logins, want 2 (sink/<host> for HDFS, sink for Kafka):\n%s", n, d.tail(20))
	}
	host, _ := os.Hostname()
	if !d.contains("principal=sink/" + strings.ToLower(host) + "@EXAMPLE.COM") {
		t.Fatalf("no login as sink/%s (_HOST):\n%s", strings.ToLower(host), d.tail(20))
	}
}

// TestKerberosConcurrentBlockStarts: eight partitions rotating together
// start blocks on the same HDFS connections at once, through data transfer
// protection. The race-built daemon must see no data race (the HDFS client
// caches the data encryption key without a lock: storage/hdfs settles the
// cache first) and every offset lands exactly once.
func TestKerberosConcurrentBlockStarts(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 8)
	counts := map[int32]int64{}
	s.produce(counts, 8000)
	d := s.start(s.connector("krb-blocks", map[string]string{"flush.size": "50"}))
	s.waitCommitted(d, 8000, 2*time.Minute)
	d.stop()
	rep := s.check(counts)
	t.Logf("%d records exactly once in %d files written by 8 partitions at once", rep.Records, len(rep.Files))
}
