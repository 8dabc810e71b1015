//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// hivePartitions polls the metastore until table has n partitions.
func hivePartitions(t *testing.T, db, table string, n int, within time.Duration) []string {
	t.Helper()
	itest.RequireMetastore(t)
	deadline := time.Now().Add(within)
	var names []string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cl, err := hive.Dial(ctx, itest.MetastoreURI())
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
