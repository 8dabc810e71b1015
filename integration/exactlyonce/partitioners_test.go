//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/riferrei/srclient"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// dstStart is 2026-03-28 22:00 UTC: 23:00 in Berlin, an hour before the
// local day ends and three before clocks jump from 02:00 to 03:00.
var dstStart = time.Date(2026, 3, 28, 22, 0, 0, 0, time.UTC)

// berlinHours are the local hours dstStart + 0..359 minutes fall in.
var berlinHours = []string{
	"year=2026/month=03/day=28/hour=23", "year=2026/month=03/day=29/hour=00", "year=2026/month=03/day=29/hour=01",
	"year=2026/month=03/day=29/hour=03", "year=2026/month=03/day=29/hour=04", "year=2026/month=03/day=29/hour=05",
}

// produceTimed writes n records per partition, 10 minutes apart from start,
// with that time both as the Kafka timestamp and as created_at.
func (s *setup) produceTimed(counts map[int32]int64, n int, start time.Time) {
	s.t.Helper()
	s.produceAt(counts, func(_ int32, i int) time.Time { return start.Add(time.Duration(i) * 10 * time.Minute) }, 0, n)
}

// produceAt writes records from..to-1 of every partition, record i of
// partition p with the Kafka timestamp (and created_at) at(p, i).
func (s *setup) produceAt(counts map[int32]int64, at func(p int32, i int) time.Time, from, to int) {
	s.t.Helper()
	var recs []*kgo.Record
	for p := int32(0); p < s.parts; p++ {
		for i := from; i < to; i++ {
			v, err := demodata.ValueAt(s.schemaID, p, counts[p], at(p, i))
			if err != nil {
				s.t.Fatal(err)
			}
			recs = append(recs, &kgo.Record{Topic: s.topic, Partition: p, Value: v, Timestamp: at(p, i)})
			counts[p]++
		}
	}
	cl := itest.KafkaClient(s.t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		s.t.Fatalf("Kafka at %s: %v", itest.KafkaAddr(), err)
	}
}

func hiveOn(db string, extra map[string]string) map[string]string {
	m := map[string]string{"hive.integration": "true", "hive.metastore.uris": itest.MetastoreURI(),
		"hive.database": db, "schema.compatibility": "BACKWARD", "rotate.interval.ms": "1000"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// sparkCounts returns "<partition spec>" → row count as Spark SQL sees it.
func sparkCounts(t *testing.T, db, table, cols string) map[string]float64 {
	t.Helper()
	res := itest.SparkSQL(t, fmt.Sprintf("SELECT concat_ws('/', %s) AS p, count(*) AS n FROM %s.%s GROUP BY 1", cols, db, table))
	out := map[string]float64{}
	for _, row := range res[0] {
		out[fmt.Sprint(row["p"])] = row["n"].(float64)
	}
	return out
}

// TestHivePartitionersMatchDirectories: for each partitioner, the metastore's
// partitions equal the directories written, and Spark counts per partition
// equal what was produced there — across a DST change and a day boundary in
// Europe/Berlin for the time partitioners, with both extractors.
func TestHivePartitionersMatchDirectories(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		extra  map[string]string
		timed  bool
		cols   string
		expect func(perPart int64, parts int32) map[string]float64
	}{
		{"field", map[string]string{"partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner", "partition.field.name": "region"},
			false, "concat('region=', region)", func(n int64, parts int32) map[string]float64 {
				m := map[string]float64{}
				for seq := int64(0); seq < n; seq++ {
					m["region="+demodata.Regions[seq%3]] += float64(parts)
				}
				return m
			}},
		{"hourly-record", map[string]string{"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
			"timestamp.extractor": "Record", "timezone": "Europe/Berlin", "locale": "en-US"}, true,
			"concat('year=', year), concat('month=', month), concat('day=', day), concat('hour=', hour)", hourly},
		{"hourly-recordfield", map[string]string{"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
			"timestamp.extractor": "RecordField", "timestamp.field": "created_at", "timezone": "Europe/Berlin", "locale": "en-US"}, true,
			"concat('year=', year), concat('month=', month), concat('day=', day), concat('hour=', hour)", hourly},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 2)
			db := itest.UniqueName(t, "hp_")
			counts := map[int32]int64{}
			perPart := int64(300)
			if tc.timed {
				perPart = 36
				s.produceTimed(counts, int(perPart), dstStart)
			} else {
				s.produce(counts, int(perPart)*2)
			}
			d := s.start(s.connector("parts", hiveOn(db, tc.extra)))
			s.waitCommitted(total(counts), 2*time.Minute)
			want := tc.expect(perPart, s.parts)
			table := hive.TableName("${topic}", s.topic)
			got := hivePartitions(t, db, table, len(want), 2*time.Minute)
			if dirs := sortedKeys(want); fmt.Sprint(got) != fmt.Sprint(dirs) {
				t.Fatalf("metastore partitions %v, directories %v", got, dirs)
			}
			d.stop()
			s.check(counts)
			if counts := sparkCounts(t, db, table, tc.cols); fmt.Sprint(counts) != fmt.Sprint(want) {
				t.Fatalf("Spark counts per partition %v, want %v", counts, want)
			}
		})
	}
}

func hourly(perPart int64, parts int32) map[string]float64 {
	m := map[string]float64{}
	for _, h := range berlinHours {
		m[h] = float64(6 * int64(parts)) // six records 10 minutes apart per hour
	}
	return m
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// startOnCleanup starts the services again when t ends, whatever happened
// (`start` leaves a running one alone): a failed outage test must not leave
// one down for the tests after it. Not `up`: it would also restart what
// the Kerberos tests, running beside these, stop on purpose.
func startOnCleanup(t *testing.T, services ...string) {
	t.Cleanup(func() {
		for _, svc := range services {
			testenv(t, "start", svc)
		}
	})
}

// testenv runs testenv/testenv.sh with args.
func testenv(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(itest.RepoRoot(), "testenv", "testenv.sh"), args...)
	cmd.Dir = itest.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testenv.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestMetastoreOutage: the metastore stops while data flows and while the
// daemon restarts; HDFS writing goes on, the pending work is visible in the
// log, and once the metastore is back every partition appears, once.
func TestMetastoreOutage(t *testing.T) {
	s := newSetup(t, 1)
	db := itest.UniqueName(t, "ho_")
	counts := map[int32]int64{}
	cfg := s.connector("outage", hiveOn(db, map[string]string{
		"partitioner.class":   "io.confluent.connect.storage.partitioner.HourlyPartitioner",
		"timestamp.extractor": "Record", "timezone": "UTC", "locale": "en-US", "retry.backoff.ms": "500"}))
	table := hive.TableName("${topic}", s.topic)
	hour := func(h int) time.Time { return time.Date(2026, 6, 1, h, 0, 0, 0, time.UTC) }

	d := s.start(cfg)
	s.produceTimed(counts, 3, hour(1))
	hivePartitions(t, db, table, 1, 2*time.Minute)

	testenv(t, "stop", "hms")
	startOnCleanup(t, "hms")
	s.produceTimed(counts, 3, hour(2))
	s.waitCommitted(total(counts), time.Minute) // HDFS writing goes on
	waitLog(t, d, "hive metastore work pending", time.Minute)
	st := fmt.Sprint(d.status())
	if !regexp.MustCompile(`hive:map\[last_error:[^\]]+ pending:[1-9][0-9]* pending_seconds:[0-9.e+]+\]`).MatchString(st) {
		t.Fatalf("GET /status does not show the pending metastore work with its age: %s", st)
	}
	d.stop()

	d2 := s.start(cfg) // restarted while the metastore is still down
	s.produceTimed(counts, 3, hour(3))
	s.waitCommitted(total(counts), time.Minute)
	time.Sleep(time.Minute) // the metastore stays down for about a minute and a half
	testenv(t, "start", "hms")
	got := hivePartitions(t, db, table, 3, 3*time.Minute)
	want := []string{"year=2026/month=06/day=01/hour=01", "year=2026/month=06/day=01/hour=02", "year=2026/month=06/day=01/hour=03"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("partitions after the outage: %v, want %v", got, want)
	}
	d2.stop()
	s.check(counts)
}

func waitLog(t *testing.T, d *daemon, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !d.logContains(s) {
		if time.Now().After(deadline) {
			t.Fatalf("daemon log never said %q:\n%s", s, tail(d.log, 20))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestHiveSchemaEvolution: v1 records, then v2 (a field with a default),
// then v1 again, under schema.compatibility=BACKWARD. Files rotate at v2; the
// late v1 records are projected to v2; the table moves to v2 with CASCADE and
// never back; Spark reads v1 rows with the default and v2 rows with their value.
func TestHiveSchemaEvolution(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	db := itest.UniqueName(t, "he_")
	sr := srclient.NewSchemaRegistryClient(itest.RegistryURL())
	v2, err := sr.CreateSchema(s.topic+"-value", demodata.SchemaV2, srclient.Avro)
	if err != nil {
		t.Fatalf("register v2 (BACKWARD-compatible) in %s: %v", itest.RegistryURL(), err)
	}
	counts := map[int32]int64{}
	s.produce(counts, 100)
	var recs []*kgo.Record
	for i := 0; i < 50; i++ {
		val, err := demodata.ValueV2(int32(v2.ID()), 0, counts[0])
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: s.topic, Partition: 0, Value: val})
		counts[0]++
	}
	cl := itest.KafkaClient(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s.produce(counts, 30)
	d := s.start(s.connector("evolve", hiveOn(db, nil)))
	s.waitCommitted(total(counts), 2*time.Minute)
	table := hive.TableName("${topic}", s.topic)
	hivePartitions(t, db, table, 1, time.Minute)
	d.stop()
	rep := s.check(counts)
	// BACKWARD: v2 rotates; the late v1 records are projected into the v2 file.
	if len(rep.Files) != 2 {
		t.Fatalf("%d files, want 2: a v1 file, then a v2 file that also holds the late v1 records projected to v2", len(rep.Files))
	}
	res := itest.SparkSQL(t, fmt.Sprintf("SELECT channel, count(*) AS n FROM %s.%s GROUP BY channel ORDER BY channel", db, table))
	got := fmt.Sprint(res[0])
	if got != "[map[channel:mobile n:50] map[channel:web n:130]]" {
		t.Fatalf("Spark reads %s; want 130 v1 rows with the default \"web\" and 50 v2 rows \"mobile\"", got)
	}
}

// TestKillDuringMultiDirectoryRotation: SIGKILL right after the WAL commit of
// a rotation spanning several hour directories (files not yet renamed), then
// restart: every offset exactly once and the Hive partitions complete, on
// Hive Metastore 3.1 and 4.0.
func TestKillDuringMultiDirectoryRotation(t *testing.T) {
	t.Parallel()
	metastores := map[string]string{"hms3.1": itest.MetastoreURI(), "hms4.0": itest.Metastore4URI()}
	for _, ms := range []string{"hms3.1", "hms4.0"} {
		for _, state := range []string{"TEMP_FILE_CLOSED", "WAL_APPENDED"} {
			t.Run(ms+"/"+state, func(t *testing.T) { killDuringMultiDirectoryRotation(t, metastores[ms], state) })
		}
	}
}

func killDuringMultiDirectoryRotation(t *testing.T, metastore, state string) {
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "hk_")
	counts := map[int32]int64{}
	s.produceTimed(counts, 36, dstStart)
	cfg := s.connector("multidir", hiveOn(db, map[string]string{
		"partitioner.class":   "io.confluent.connect.storage.partitioner.HourlyPartitioner",
		"timestamp.extractor": "Record", "timezone": "Europe/Berlin", "locale": "en-US",
		"flush.size":          "20", // 20 records, 10 minutes apart: each rotation spans 4 hour directories
		"hive.metastore.uris": metastore,
	}))
	d := s.start(cfg, "HDFS_SINK_CRASH_AT="+state+":1")
	if err, exited := d.wait(2 * time.Minute); !exited || !killedBySIGKILL(err) {
		t.Fatalf("daemon did not die at %s (exited=%v err=%v)", state, exited, err)
	}
	d2 := s.start(cfg)
	s.waitCommitted(total(counts), 2*time.Minute)
	got := hivePartitionsAt(t, metastore, db, hive.TableName("${topic}", s.topic), len(berlinHours), 2*time.Minute)
	if fmt.Sprint(got) != fmt.Sprint(berlinHours) {
		t.Fatalf("partitions %v, want %v", got, berlinHours)
	}
	d2.stop()
	s.check(counts)
}
