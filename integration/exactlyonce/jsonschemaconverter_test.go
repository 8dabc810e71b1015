//go:build integration

package exactlyonce

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riferrei/srclient"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// jsonSchemaOrder is the JSON Schema JsonSchemaData derives from the
// Connect schema of jsonOrder (connect.type, connect.index, titles for the
// logical types, oneOf null for optional fields); v2 adds an optional
// field.
func jsonSchemaOrder(v2 bool) string {
	props := []string{
		`"seq":{"type":"integer","connect.index":0}`,
		`"small":{"type":"integer","connect.type":"int8","connect.index":1}`,
		`"name":{"type":"string","connect.index":2}`,
		`"note":{"oneOf":[{"type":"null"},{"type":"string"}],"connect.index":3}`,
		`"amount":{"type":"number","title":"org.apache.kafka.connect.data.Decimal","connect.version":1,"connect.type":"bytes","connect.parameters":{"scale":"2","connect.decimal.precision":"9"},"connect.index":4}`,
		`"day":{"type":"integer","title":"org.apache.kafka.connect.data.Date","connect.version":1,"connect.type":"int32","connect.index":5}`,
		`"at":{"type":"integer","title":"org.apache.kafka.connect.data.Timestamp","connect.version":1,"connect.type":"int64","connect.index":6}`,
		`"tod":{"type":"integer","title":"org.apache.kafka.connect.data.Time","connect.version":1,"connect.type":"int32","connect.index":7}`,
		`"tags":{"type":"array","items":{"type":"string"},"connect.index":8}`,
		`"attrs":{"type":"object","connect.type":"map","additionalProperties":{"type":"integer"},"connect.index":9}`,
	}
	if v2 {
		props = append(props, `"extra":{"oneOf":[{"type":"null"},{"type":"string"}],"connect.index":10}`)
	}
	return `{"type":"object","title":"it.JsonSchemaOrder","properties":{` + strings.Join(props, ",") + `}}`
}

// jsonSchemaValue is a value in Confluent's wire format: magic byte,
// schema id, the JSON text (decimal as a number, as JsonSchemaData writes
// it with decimal.format NUMERIC).
func jsonSchemaValue(id int32, seq int64, v2 bool) []byte {
	j := fmt.Sprintf(`{"seq":%d,"small":-5,"name":"n%d","note":null,"amount":123.34,"day":19782,"at":1709210096123,"tod":47655016,"tags":["x","y"],"attrs":{"k":%d}`, seq, seq, seq)
	if v2 {
		j += `,"extra":"v2"`
	}
	return schema.AppendWire(nil, id, []byte(j+"}"))
}

// TestJSONSchemaConverterReadBySpark (issue 23): JsonSchemaConverter
// values, registered as schemaType JSON and produced in Confluent's wire
// format, are committed exactly once as Parquet with Hive on; Spark reads
// the Connect types back; the schema change (v2, a new registry id, adds
// an optional field) rotates the files and a later v1 record is projected
// to v2 under schema.compatibility BACKWARD; a value not in the wire
// format and one that does not fit its schema go to the dead-letter topic
// with Connect's headers.
func TestJSONSchemaConverterReadBySpark(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	sr := srclient.NewSchemaRegistryClient(itest.RegistryURL())
	subject := s.topic + "-json-value" // not -value: newSetup registered an Avro schema there
	var ids [2]int32
	for i, v2 := range []bool{false, true} {
		if v2 {
			// The registry's JSON Schema rules call an added property of an
			// open object a narrowing; what hdfs-sink does with the change
			// is schema.compatibility's, not the registry's.
			if _, err := sr.ChangeSubjectCompatibilityLevel(subject, srclient.None); err != nil {
				t.Fatalf("registry at %s: compatibility NONE for %s: %v", itest.RegistryURL(), subject, err)
			}
		}
		sch, err := sr.CreateSchema(subject, jsonSchemaOrder(v2), srclient.Json)
		if err != nil {
			t.Fatalf("registry at %s: register JSON schema v%d: %v", itest.RegistryURL(), i+1, err)
		}
		ids[i] = int32(sch.ID())
	}
	s.produceRaw(0, jsonSchemaValue(ids[0], 0, false))
	s.produceRaw(0, jsonSchemaValue(ids[0], 1, false))
	s.produceRaw(0, jsonSchemaValue(ids[1], 2, true))
	s.produceRaw(0, jsonSchemaValue(ids[0], 3, false))
	s.produceRaw(0, []byte(`{"seq":4}`))                                      // not in the wire format
	s.produceRaw(0, schema.AppendWire(nil, ids[0], []byte(`{"seq":"five"}`))) // does not fit its schema
	dlq := s.dlqTopic()
	db := itest.UniqueName(t, "jsc_")
	d := s.start(s.connector("jsonschema", hiveOn(db, map[string]string{"format.class": "parquet",
		"value.converter":  "io.confluent.connect.json.JsonSchemaConverter",
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.context.headers.enable": "true"})))
	start := time.Now()
	s.waitCommitted(4, time.Minute)
	t.Logf("committed after %v", time.Since(start).Round(time.Second))
	for i, bad := range s.consume(dlq, 2) {
		h := map[string]string{}
		for _, kv := range bad.Headers {
			h[kv.Key] = string(kv.Value)
		}
		wantMsg := []string{"wire format", "JsonSchemaConverter"}[i]
		if h["__connect.errors.offset"] != fmt.Sprint(4+i) || h["__connect.errors.topic"] != s.topic ||
			!strings.Contains(h["__connect.errors.exception.message"], wantMsg) {
			t.Fatalf("DLQ record %d %q headers %v, want offset %d and a message naming %q", i, bad.Value, h, 4+i, wantMsg)
		}
	}
	table := hive.TableName("${topic}", s.topic)
	hivePartitions(t, db, table, 1, time.Minute)
	d.stop()
	rep := s.check(map[int32]int64{0: 4})
	t.Logf("checked after %v", time.Since(start).Round(time.Second))
	if len(rep.Files) != 2 {
		t.Fatalf("%d files, want 2 (v2 rotates; the later v1 record is projected into the v2 file)", len(rep.Files))
	}
	res := itest.SparkSQL(t, fmt.Sprintf("DESCRIBE %s.%s", db, table),
		fmt.Sprintf(`SELECT concat_ws('|', CAST(seq AS STRING), CAST(small AS STRING), name, coalesce(note, 'null'),
			CAST(amount AS STRING), CAST(day AS STRING), CAST(at AS STRING), CAST(tod AS STRING), CAST(tags AS STRING),
			CAST(attrs AS STRING), coalesce(extra, 'null')) AS v FROM %s.%s ORDER BY seq`, db, table))
	t.Logf("read by Spark after %v", time.Since(start).Round(time.Second))
	checkColumnTypes(t, res[0], map[string]string{"seq": "bigint", "small": "int", "name": "string", "note": "string", "amount": "decimal(9,2)",
		"day": "date", "at": "timestamp", "tod": "int", "tags": "array<string>", "attrs": "map<string,bigint>", "extra": "string"})
	for seq := 0; seq < 4; seq++ {
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
