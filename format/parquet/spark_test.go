package parquet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sparkScript prints each column's Spark SQL type, then the rows as JSON
// with timestamps in UTC to the microsecond and nulls kept. CORRECTED rebase modes: Spark refuses, by
// default, dates before 1582-10-15 and INT96 before 1900 in files not
// written by Spark (ambiguous calendar); our values are proleptic
// Gregorian, which CORRECTED reads as is.
const sparkScript = `
import sys
from pyspark.sql import SparkSession
from pyspark.sql.functions import to_json, struct
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
  .config("spark.sql.session.timeZone", "UTC")
  .config("spark.sql.parquet.int96RebaseModeInRead", "CORRECTED")
  .config("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED").getOrCreate())
df = spark.read.parquet(sys.argv[1])
for f in df.schema.fields:
    print("TYPE", f.name, f.dataType.simpleString())
opts = {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
        "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS", "ignoreNullFields": "false"}
for row in df.select(to_json(struct(*df.columns), opts)).collect():
    print("ROW", row[0])
`

// TestSparkReadsFiles is opt-in: HDFS_SINK_PYSPARK names a Python with
// pyspark 4 (e.g. /root/.cache/hdfs-sink-testenv/pyspark-4.2.0/bin/python).
func TestSparkReadsFiles(t *testing.T) {
	python := os.Getenv("HDFS_SINK_PYSPARK")
	if python == "" {
		t.Skip("HDFS_SINK_PYSPARK not set")
	}
	for _, mode := range []string{TimestampsInt96, TimestampsInt64} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "all.parquet")
			if err := os.WriteFile(path, writeGolden(t, Options{Timestamps: mode}), 0o644); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, "read.py")
			if err := os.WriteFile(script, []byte(sparkScript), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(python, script, path)
			var stderr strings.Builder
			cmd.Stderr = &stderr // Spark's logs; kept apart from the rows
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("spark: %v\n%s", err, stderr.String())
			}
			types, rows := parseSpark(string(out))
			golden(t, "spark_"+mode+".types", types)
			golden(t, "spark_"+mode+".rows.json", rows)
		})
	}
}

func parseSpark(out string) (types, rows string) {
	var tb, rb strings.Builder
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "TYPE "):
			tb.WriteString(strings.TrimPrefix(line, "TYPE ") + "\n")
		case strings.HasPrefix(line, "ROW "):
			rb.WriteString(strings.TrimPrefix(line, "ROW ") + "\n")
		}
	}
	return tb.String(), rb.String()
}
