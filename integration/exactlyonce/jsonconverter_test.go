//go:build integration

package exactlyonce

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// jsonOrder is a JsonConverter value with an embedded Connect schema, as
// Kafka's JsonConverter serializes one (schemas.enable=true); v2 adds an
// optional field.
func jsonOrder(seq int64, v2 bool) []byte {
	fields := []string{
		`{"field":"seq","type":"int64"}`,
		`{"field":"small","type":"int8"}`,
		`{"field":"name","type":"string"}`,
		`{"field":"note","type":"string","optional":true}`,
		`{"field":"amount","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"9"}}`,
		`{"field":"day","type":"int32","name":"org.apache.kafka.connect.data.Date","version":1}`,
		`{"field":"at","type":"int64","name":"org.apache.kafka.connect.data.Timestamp","version":1}`,
		`{"field":"tod","type":"int32","name":"org.apache.kafka.connect.data.Time","version":1}`,
		`{"field":"tags","type":"array","items":{"type":"string"}}`,
		`{"field":"attrs","type":"map","keys":{"type":"string"},"values":{"type":"int64"}}`,
	}
	// 2024-02-29 is day 19782; 12:34:56.123 UTC that day; 13:14:15.016.
	payload := fmt.Sprintf(`"seq":%d,"small":-5,"name":"n%d","note":null,"amount":"MC4=","day":19782,"at":1709210096123,"tod":47655016,"tags":["x","y"],"attrs":{"k":%d}`, seq, seq, seq)
	if v2 {
		fields = append(fields, `{"field":"extra","type":"string","optional":true}`)
		payload += `,"extra":"v2"`
	}
	return fmt.Appendf(nil, `{"schema":{"type":"struct","name":"it.JsonOrder","fields":[%s],"optional":false},"payload":{%s}}`,
		strings.Join(fields, ","), payload)
}

// TestJSONConverterReadBySpark (issue 23): JsonConverter values with
// embedded schemas, produced to Kafka as Kafka's JsonConverter writes
// them, are committed exactly once as Parquet with Hive on; Spark reads
// the Connect types back (logical types included); the schema change
// (v2 adds an optional field) rotates the files and the table follows
// it; bytes that are not JSON go to the dead-letter topic with Connect's
// headers.
func TestJSONConverterReadBySpark(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	s.produceRaw(0, jsonOrder(0, false))
	s.produceRaw(0, jsonOrder(1, false))
	s.produceRaw(0, jsonOrder(2, true))
	s.produceRaw(0, []byte("not json {"))
	dlq := s.dlqTopic()
	db := itest.UniqueName(t, "jc_")
	d := s.start(s.connector("json", hiveOn(db, map[string]string{"format.class": "parquet",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true",
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.context.headers.enable": "true",
		"rotate.interval.ms": "1000"})))
	s.waitCommitted(3, time.Minute)
	bad := s.consume(dlq, 1)[0]
	h := map[string]string{}
	for _, kv := range bad.Headers {
		h[kv.Key] = string(kv.Value)
	}
	if string(bad.Value) != "not json {" || h["__connect.errors.offset"] != "3" || h["__connect.errors.topic"] != s.topic ||
		!strings.Contains(h["__connect.errors.exception.message"], "JsonConverter") {
		t.Fatalf("DLQ record %q headers %v", bad.Value, h)
	}
	// The headers Connect adds beside those: its task, the converter it was
	// running, and a trace (here the Go error chain).
	if h["__connect.errors.task.id"] != "0" || h["__connect.errors.stage"] != "VALUE_CONVERTER" ||
		h["__connect.errors.class.name"] != "org.apache.kafka.connect.json.JsonConverter" ||
		!strings.HasPrefix(h["__connect.errors.exception.stacktrace"], "*convert.Error: ") {
		t.Fatalf("DLQ record's task, stage, class and trace headers: %v", h)
	}
	table := hive.TableName("${topic}", s.topic)
	hivePartitions(t, db, table, 1, time.Minute)
	d.stop()
	rep := s.check(map[int32]int64{0: 3})
	if len(rep.Files) != 2 {
		t.Fatalf("%d files, want 2 (the schema change rotates under schema.compatibility NONE)", len(rep.Files))
	}
	res := itest.SparkSQL(t, fmt.Sprintf("DESCRIBE %s.%s", db, table),
		fmt.Sprintf(`SELECT concat_ws('|', CAST(seq AS STRING), CAST(small AS STRING), name, coalesce(note, 'null'),
			CAST(amount AS STRING), CAST(day AS STRING), CAST(at AS STRING), CAST(tod AS STRING), CAST(tags AS STRING),
			CAST(attrs AS STRING), coalesce(extra, 'null')) AS v FROM %s.%s ORDER BY seq`, db, table))
	checkColumnTypes(t, res[0], map[string]string{"seq": "bigint", "small": "int", "name": "string", "note": "string", "amount": "decimal(9,2)",
		"day": "date", "at": "timestamp", "tod": "int", "tags": "array<string>", "attrs": "map<string,bigint>", "extra": "string"})
	for seq := 0; seq < 3; seq++ {
		extra := "null"
		if seq == 2 {
			extra = "v2"
		}
		want := fmt.Sprintf("%d|-5|n%d|null|123.34|2024-02-29|2024-02-29 12:34:56.123|47655016|[x, y]|{k -> %d}|%s", seq, seq, seq, extra)
		if seq >= len(res[1]) || res[1][seq]["v"] != want {
			t.Errorf("row %d read by Spark\n got %v\nwant %s", seq, res[1], want)
		}
	}
}

// checkColumnTypes compares the SQL types Spark's DESCRIBE rows give each
// column with want (columns not in want are not checked).
func checkColumnTypes(t *testing.T, describe itest.Rows, want map[string]string) {
	t.Helper()
	types := map[string]any{}
	for _, row := range describe {
		types[fmt.Sprint(row["col_name"])] = row["data_type"]
	}
	for col, w := range want {
		if types[col] != w {
			t.Errorf("column %s is %v, want %s", col, types[col], w)
		}
	}
}
