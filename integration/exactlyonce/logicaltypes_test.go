//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"
	"github.com/riferrei/srclient"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

const allTypes = `{"type":"record","name":"AllTypes","namespace":"it","fields":[
 {"name":"id","type":"long"},
 {"name":"d","type":{"type":"int","logicalType":"date"}},
 {"name":"ts_ms","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"ts_us","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"t_ms","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"dec_b","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"dec_f","type":{"type":"fixed","name":"D20","size":9,"logicalType":"decimal","precision":20,"scale":4}},
 {"name":"u","type":{"type":"string","logicalType":"uuid"}},
 {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
 {"name":"n","type":["null","string"],"default":null},
 {"name":"arr","type":{"type":"array","items":"int"}},
 {"name":"m","type":{"type":"map","values":"long"}},
 {"name":"rec","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}}
]}`

// allTypesRows are the produced values and how Spark must print them.
var allTypesRows = []struct {
	native map[string]any
	want   string
}{
	{map[string]any{"id": int64(0), "d": time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), "ts_ms": time.UnixMilli(-1).UTC(),
		"ts_us": time.Date(2024, 2, 29, 12, 34, 56, 123456000, time.UTC), "t_ms": 13*time.Hour + 14*time.Minute + 15*time.Second + 16*time.Millisecond,
		"dec_b": big.NewRat(-1230, 100), "dec_f": new(big.Rat).SetFrac(big.NewInt(12345678901234567), big.NewInt(10000)),
		"u": "123e4567-e89b-12d3-a456-426614174000", "e": "B", "n": nil, "arr": []any{int32(1), int32(2)},
		"m": map[string]any{"a": int64(1)}, "rec": map[string]any{"x": int32(7)}},
		"0|2024-02-29|1969-12-31 23:59:59.999|2024-02-29 12:34:56.123456|47655016|-12.30|1234567890123.4567|123e4567-e89b-12d3-a456-426614174000|B|null|[1, 2]|{a -> 1}|7"},
	{map[string]any{"id": int64(1), "d": time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), "ts_ms": time.Date(1950, 6, 15, 8, 30, 0, 0, time.UTC),
		"ts_us": time.Date(2100, 12, 31, 23, 59, 59, 999999000, time.UTC), "t_ms": time.Duration(0),
		"dec_b": big.NewRat(9999999, 100), "dec_f": big.NewRat(-1, 10000),
		"u": "00000000-0000-0000-0000-000000000000", "e": "A", "n": goavro.Union("string", "ünï©ødé"), "arr": []any{},
		"m": map[string]any{}, "rec": map[string]any{"x": int32(-2147483648)}},
		"1|1900-01-01|1950-06-15 08:30:00|2100-12-31 23:59:59.999999|0|99999.99|-0.0001|00000000-0000-0000-0000-000000000000|A|ünï©ødé|[]|{}|-2147483648"},
}

// TestLogicalTypesReadBySpark writes every logical type as Avro and as
// Parquet through the daemon with Hive on, and checks Spark's column types
// and the exact values.
func TestLogicalTypesReadBySpark(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"avro", "parquet"} {
		t.Run(format, func(t *testing.T) {
			s := newSetup(t, 1)
			sch, err := srclient.NewSchemaRegistryClient(itest.RegistryURL()).CreateSchema(s.topic+"-alltypes-value", allTypes, srclient.Avro)
			if err != nil {
				t.Fatal(err)
			}
			codec, _ := goavro.NewCodec(allTypes)
			cl := itest.KafkaClient(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			for _, row := range allTypesRows {
				datum, err := codec.BinaryFromNative(nil, row.native)
				if err != nil {
					t.Fatal(err)
				}
				v := schema.AppendWire(nil, int32(sch.ID()), datum)
				if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: s.topic, Partition: 0, Value: v}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			db := itest.UniqueName(t, "lt_")
			d := s.start(s.connector("types", hiveOn(db, map[string]string{"format.class": format})))
			s.waitCommitted(int64(len(allTypesRows)), time.Minute)
			table := hive.TableName("${topic}", s.topic)
			hivePartitions(t, db, table, 1, time.Minute)
			d.stop()
			// Hive's AvroSerDe (2.3 inside Spark, and 3.1) takes column types from
			// the schema literal and knows neither timestamp-micros nor decimals
			// on fixed: there they read as bigint (the micros) and binary. Parquet
			// has neither limit. See docs/design.md §8.
			tsUs, decF := "CAST(ts_us AS STRING)", "CAST(dec_f AS STRING)"
			wantTypes := map[string]string{"d": "date", "ts_ms": "timestamp", "ts_us": "timestamp", "t_ms": "int",
				"dec_b": "decimal(9,2)", "dec_f": "decimal(20,4)", "u": "string", "e": "string",
				"arr": "array<int>", "m": "map<string,bigint>", "rec": "struct<x:int>"}
			if format == "avro" {
				tsUs, decF = "CAST(timestamp_micros(ts_us) AS STRING)", "CAST(length(dec_f) AS STRING)"
				wantTypes["ts_us"], wantTypes["dec_f"] = "bigint", "binary"
			}
			q := fmt.Sprintf(`SELECT concat_ws('|', CAST(id AS STRING), CAST(d AS STRING), CAST(ts_ms AS STRING), %s,
				CAST(t_ms AS STRING), CAST(dec_b AS STRING), %s, u, e, coalesce(n, 'null'), CAST(arr AS STRING),
				CAST(m AS STRING), CAST(rec.x AS STRING)) AS v FROM %s.%s ORDER BY id`, tsUs, decF, db, table)
			queries := []string{fmt.Sprintf("DESCRIBE %s.%s", db, table), q}
			if format == "parquet" {
				// Read the Parquet table again through Hive's own ParquetHiveSerDe
				// (Hive 2.3 inside Spark) instead of Spark's native reader.
				queries = append(queries, "SET spark.sql.hive.convertMetastoreParquet=false", q)
			}
			res := itest.SparkSQL(t, queries...)
			types := map[string]any{}
			for _, row := range res[0] {
				types[fmt.Sprint(row["col_name"])] = row["data_type"]
			}
			for col, want := range wantTypes {
				if types[col] != want {
					t.Errorf("%s: column %s is %v, want %s", format, col, types[col], want)
				}
			}
			if format == "parquet" && fmt.Sprint(res[3]) != fmt.Sprint(res[1]) {
				t.Errorf("Hive's ParquetHiveSerDe reads\n%v\nSpark's reader\n%v", res[3], res[1])
			}
			for i, row := range allTypesRows {
				want := row.want
				if format == "avro" { // the 9-byte fixed shows as its length
					parts := strings.Split(want, "|")
					parts[6] = "9"
					want = strings.Join(parts, "|")
				}
				if i >= len(res[1]) || res[1][i]["v"] != want {
					t.Errorf("%s: row %d read by Spark\n got %v\nwant %s", format, i, res[1], want)
				}
			}
		})
	}
}

// TestIncompatibleSchemaGoesToDLQ: v1, v2, then v3 adding a required field
// (registered with the subject's compatibility set to NONE), then v1 again.
// Under BACKWARD the newer schemas rotate files; the late v1 records cannot
// be read as v3 and go to the dead-letter topic with the reason; nothing is
// lost or written twice.
func TestIncompatibleSchemaGoesToDLQ(t *testing.T) {
	t.Parallel()
	const v3 = `{"type":"record","name":"Order","namespace":"demo","fields":[{"name":"seq","type":"long"},{"name":"must","type":"string"}]}`
	s := newSetup(t, 1)
	sr := srclient.NewSchemaRegistryClient(itest.RegistryURL())
	subject := s.topic + "-value"
	v2, err := sr.CreateSchema(subject, demodata.SchemaV2, srclient.Avro)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sr.ChangeSubjectCompatibilityLevel(subject, srclient.None); err != nil {
		t.Fatalf("set %s compatibility NONE: %v", subject, err)
	}
	v3s, err := sr.CreateSchema(subject, v3, srclient.Avro)
	if err != nil {
		t.Fatal(err)
	}
	codec3, _ := goavro.NewCodec(v3)
	counts := map[int32]int64{}
	s.produce(counts, 10)
	var recs []*kgo.Record
	add := func(v []byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: s.topic, Partition: 0, Value: v})
		counts[0]++
	}
	for i := 0; i < 10; i++ {
		add(demodata.ValueV2(int32(v2.ID()), 0, counts[0]))
	}
	for i := 0; i < 10; i++ {
		d, err := codec3.BinaryFromNative(nil, map[string]any{"seq": counts[0], "must": "x"})
		add(schema.AppendWire(nil, int32(v3s.ID()), d), err)
	}
	for i := 0; i < 5; i++ {
		add(demodata.Value(s.schemaID, 0, counts[0]))
	}
	cl := itest.KafkaClient(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dlq := s.dlqTopic()
	d := s.start(s.connector("evolve3", map[string]string{"schema.compatibility": "BACKWARD",
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq, "rotate.interval.ms": "1000",
		"errors.deadletterqueue.context.headers.enable": "true"}))
	s.waitCommitted(30, time.Minute) // the names span offsets 0-29; 30-34 are dead-lettered
	bad := s.consume(dlq, 5)
	for i, r := range bad {
		h := map[string]string{}
		for _, kv := range r.Headers {
			h[kv.Key] = string(kv.Value)
		}
		if h["__connect.errors.offset"] != fmt.Sprint(30+i) || !strings.Contains(h["__connect.errors.exception.message"], "no default") {
			t.Fatalf("DLQ record %d: headers %v", i, h)
		}
	}
	d.stop()
	rep, err := verify.Check(t.Context(), s.fs, verify.Options{TopicsDir: s.topicsDir(), Topic: s.topic, Want: map[int32]int64{0: 30}, SeqField: "seq"})
	if err != nil {
		t.Fatalf("offsets 0-29 exactly once: %v", err)
	}
	if len(rep.Files) != 3 {
		t.Fatalf("%d files, want 3 (v1, v2, v3)", len(rep.Files))
	}
}

// TestSchemalessStringsOnHDFS: StringConverter values, string format.
func TestSchemalessStringsOnHDFS(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	for _, v := range []string{"first line", "zweite Zeile ✓", "third"} {
		s.produceRaw(0, []byte(v))
	}
	d := s.start(s.connector("text", map[string]string{"format.class": "io.confluent.connect.hdfs.string.StringFormat",
		"value.converter": "org.apache.kafka.connect.storage.StringConverter", "rotate.interval.ms": "1000"}))
	s.waitCommitted(3, time.Minute)
	d.stop()
	name := path.Join(s.topicsDir(), s.topic, "partition=0", s.topic+"+0+0000000000+0000000002.txt")
	rc, err := s.fs.Open(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if string(b) != "first line\nzweite Zeile ✓\nthird\n" {
		t.Fatalf("%s holds %q", name, b)
	}
}
