//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/layout"
)

// hivePartitions polls the metastore until table has n partitions.
func hivePartitions(t *testing.T, db, table string, n int, within time.Duration) []string {
	t.Helper()
	itest.RequireMetastore(t)
	return hivePartitionsAt(t, itest.MetastoreURI(), db, table, n, within)
}

// hivePartitionsAt is hivePartitions against the metastore at uri.
func hivePartitionsAt(t *testing.T, uri, db, table string, n int, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	var names []string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cl, err := hive.Dial(ctx, uri)
		if err == nil {
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
	t.Fatalf("%s.%s has partitions %v after %v, want %d", db, table, names, within, n)
	return nil
}

// TestHiveTablesReadBySpark: with hive.integration the daemon creates the
// database and an external table, registers each partition once its files
// are committed, and Spark SQL reads exactly what was produced, with real
// decimal and timestamp columns.
func TestHiveTablesReadBySpark(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"avro", "parquet"} {
		t.Run(format, func(t *testing.T) {
			s := newSetup(t, 2)
			db := itest.UniqueName(t, "hs_")
			counts := map[int32]int64{}
			s.produce(counts, 1000)
			d := s.start(s.connector("hive", map[string]string{
				"format.class": format, "hive.integration": "true", "hive.metastore.uris": itest.MetastoreURI(),
				"hive.database": db, "schema.compatibility": "BACKWARD", "rotate.interval.ms": "1000",
			}))
			s.waitCommitted(1000, 2*time.Minute)
			table := hive.TableName("${topic}", s.topic)
			parts := hivePartitions(t, db, table, 2, 2*time.Minute)
			if fmt.Sprint(parts) != "[partition=0 partition=1]" {
				t.Fatalf("SHOW PARTITIONS via metastore = %v", parts)
			}
			d.stop()
			if format == "avro" {
				s.check(counts)
			}
			res := itest.SparkSQL(t,
				fmt.Sprintf("SELECT partition, count(*) AS n, count(DISTINCT seq) AS d, min(seq) AS lo, max(seq) AS hi FROM %s.%s GROUP BY partition ORDER BY partition", db, table),
				fmt.Sprintf("SHOW PARTITIONS %s.%s", db, table),
				fmt.Sprintf("DESCRIBE %s.%s", db, table),
				fmt.Sprintf("SELECT CAST(amount AS STRING) AS amount, CAST(created_at AS STRING) AS ts FROM %s.%s WHERE partition = '0' AND seq = 12345 %% 500", db, table),
			)
			for i, row := range res[0] {
				if row["n"] != float64(500) || row["d"] != float64(500) || row["lo"] != float64(0) || row["hi"] != float64(499) {
					t.Fatalf("partition %d read by Spark: %v; want 500 distinct seq 0..499", i, row)
				}
			}
			if len(res[0]) != 2 || len(res[1]) != 2 {
				t.Fatalf("Spark sees %d partitions with rows, SHOW PARTITIONS %v", len(res[0]), res[1])
			}
			types := map[string]any{}
			for _, row := range res[2] {
				types[fmt.Sprint(row["col_name"])] = row["data_type"]
			}
			if types["amount"] != "decimal(10,2)" || types["created_at"] != "timestamp" {
				t.Fatalf("DESCRIBE types: %v; want amount decimal(10,2), created_at timestamp", types)
			}
			// seq 345 in partition 0: amount 345/100, created_at 1700000000000+345000 ms UTC.
			if len(res[3]) != 1 || res[3][0]["amount"] != "3.45" || res[3][0]["ts"] != "2023-11-14 22:19:05" {
				t.Fatalf("values read by Spark: %v", res[3])
			}
			t.Logf("%s: types %v, sample %v", format, types, res[3])
		})
	}
}

// TestHive4TablesAndFiles: the same daemon against Hive Metastore 4.0,
// which removed get_table. Spark's built-in Hive 2.3 client calls it, so
// Spark cannot query the table through this metastore; what is checked
// instead: the table the daemon created, read back from HMS 4 (external,
// AvroSerDe, at <topics.dir>/<topic>, its columns), one registered
// partition per Kafka partition, and Spark reading the Avro files of each
// partition directory HMS 4 names: every seq once.
func TestHive4TablesAndFiles(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "h4_")
	counts := map[int32]int64{}
	s.produce(counts, 1000)
	d := s.start(s.connector("hive4", map[string]string{
		"hive.integration": "true", "hive.metastore.uris": itest.Metastore4URI(), "hive.database": db,
		"schema.compatibility": "BACKWARD", "rotate.interval.ms": "1000",
	}))
	s.waitCommitted(1000, 2*time.Minute)
	table := hive.TableName("${topic}", s.topic)
	parts := hivePartitionsAt(t, itest.Metastore4URI(), db, table, 2, 2*time.Minute)
	d.stop()
	s.check(counts)
	tbl := hive4Table(t, db, table)
	if tbl.Format != hive.FormatAvro || !strings.HasSuffix(tbl.Location, s.topicsDir()+"/"+s.topic) || len(tbl.Columns) == 0 {
		t.Fatalf("table read back from HMS 4: format %v, location %q, %d columns", tbl.Format, tbl.Location, len(tbl.Columns))
	}
	var queries []string
	for _, p := range parts {
		queries = append(queries, fmt.Sprintf("SELECT count(*) AS n, count(DISTINCT seq) AS d, min(seq) AS lo, max(seq) AS hi FROM avro.`%s/%s`", tbl.Location, p))
	}
	for i, rows := range itest.SparkSQL(t, queries...) {
		if len(rows) != 1 || rows[0]["n"] != float64(500) || rows[0]["d"] != float64(500) || rows[0]["lo"] != float64(0) || rows[0]["hi"] != float64(499) {
			t.Fatalf("Spark reading the files of %s: %v; want 500 distinct seq 0..499", parts[i], rows)
		}
	}
	t.Logf("HMS 4: table %s.%s at %s, partitions %v, files read by Spark", db, table, tbl.Location, parts)
	// And why Spark reads the files, not the table: through HMS 4 its
	// Hive 2.3 client fails on the removed get_table.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := itest.RunSparkSQLThrough(ctx, itest.Metastore4URI(), fmt.Sprintf("SELECT count(*) FROM %s.%s", db, table))
	if err == nil || !strings.Contains(err.Error(), "get_table") {
		t.Fatalf("Spark's Hive 2.3 client through HMS 4: err = %v; want the missing get_table", err)
	}
	t.Logf("Spark SQL through HMS 4, as expected: %.300s", err)
}

func hive4Table(t *testing.T, db, table string) *hive.Table {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := hive.Dial(ctx, itest.Metastore4URI())
	if err != nil {
		t.Fatalf("Hive Metastore 4 at %s: %v", itest.Metastore4URI(), err)
	}
	defer cl.Close()
	tbl, err := cl.GetTable(ctx, db, table)
	if err != nil {
		t.Fatalf("HMS 4: get %s.%s: %v", db, table, err)
	}
	return tbl
}

// TestHiveRolledForwardCommitsWithoutRestart (issue 20, N3): with an
// hourly partitioner and every fifth rename of a committed file refused
// (HDFS_SINK_FAIL_RENAME_EVERY), the partitions' own recoveries roll those
// commits forward in the running daemon; the metastore's partitions must
// equal the hour directories holding committed files, without a restart.
func TestHiveRolledForwardCommitsWithoutRestart(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "hr_")
	table := hive.TableName("${topic}", s.topic)
	// Partition p holds hours 12p .. 12p+11 of one day, 6 records an hour:
	// 24 hour directories, none shared, so no commit of one partition can
	// register what a failed commit of the other left out. The day is
	// yesterday: on a broker with Kafka's default retention (7 days by
	// record time; testenv turns it off) older timestamps are deleted at
	// its next check, before the daemon reads them.
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour)
	counts := map[int32]int64{}
	s.produceAt(counts, func(p int32, i int) time.Time {
		return day.Add(time.Duration(12*p)*time.Hour + time.Duration(i)*10*time.Minute)
	}, 0, 1)
	d := s.start(s.connector("hourly", hiveOn(db, map[string]string{
		"partitioner.class":   "io.confluent.connect.storage.partitioner.HourlyPartitioner",
		"timestamp.extractor": "Record", "timezone": "UTC", "locale": "en-US",
	})), "HDFS_SINK_FAIL_RENAME_EVERY=5")
	// The table exists and the syncer's one listing of the topic is done
	// before the commits that fail: only the fix can register those.
	hivePartitions(t, db, table, 2, 2*time.Minute)
	s.produceAt(counts, func(p int32, i int) time.Time {
		return day.Add(time.Duration(12*p)*time.Hour + time.Duration(i)*10*time.Minute)
	}, 1, 72)
	s.waitCommitted(total(counts), 3*time.Minute)
	var want []string
	topic := layout.Topic{TopicsDir: s.topicsDir(), Name: s.topic}
	for _, f := range s.check(counts).Files {
		if dir, ok := topic.EncodedDir(f.Path); ok && !slices.Contains(want, dir) {
			want = append(want, dir)
		}
	}
	sort.Strings(want)
	if len(want) != 24 {
		t.Fatalf("committed files lie in %d hour directories, want 24: %v", len(want), want)
	}
	log, _ := os.ReadFile(d.log)
	refused := strings.Count(string(log), "fault injection: refusing rename")
	if refused < 2 {
		t.Fatalf("%d renames refused: the test did not exercise recovery's roll-forward", refused)
	}
	if starts := strings.Count(string(log), "connector starting"); starts != 1 {
		t.Fatalf("connector started %d times: a restart lists every directory and hides the finding", starts)
	}
	got := hivePartitions(t, db, table, len(want), 2*time.Minute)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("metastore partitions %v\nhour directories with committed files %v", got, want)
	}
	t.Logf("%d renames refused; %d partitions registered without a restart", refused, len(got))
	d.stop()
}
