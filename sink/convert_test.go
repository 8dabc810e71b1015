package sink

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// orderEnvelope is a JsonConverter value with an embedded schema: v2 adds
// an optional field, as a producer's schema evolves.
func orderEnvelope(seq int64, v2 bool) []byte {
	fields := `{"field":"seq","type":"int64"},` +
		`{"field":"amount","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},` +
		`{"field":"at","type":"int64","name":"org.apache.kafka.connect.data.Timestamp"}`
	payload := fmt.Sprintf(`{"seq":%d,"amount":%d.25,"at":%d`, seq, seq, 1_700_000_000_000+seq)
	if v2 {
		fields += `,{"field":"note","type":"string","optional":true}`
		payload += `,"note":"v2"`
	}
	return fmt.Appendf(nil, `{"schema":{"type":"struct","name":"shop.Order","fields":[%s]},"payload":%s}}`, fields, payload)
}

// TestJSONValuesEndToEnd: JsonConverter values with embedded schemas are
// committed exactly once as Avro with their logical types; a schema change
// follows schema.compatibility (NONE: a new file); a null payload is a
// tombstone; bytes that are not an envelope go to the dead-letter topic
// with Connect's headers.
func TestJSONValuesEndToEnd(t *testing.T) {
	const dlq = "orders-dlq"
	k := newKafkaFixture(t, 1, testTopic, dlq)
	k.produce(
		&kgo.Record{Value: orderEnvelope(0, false)},
		&kgo.Record{Value: orderEnvelope(1, false)},
		&kgo.Record{Value: orderEnvelope(2, true)},
		&kgo.Record{Value: []byte(`{"schema":{"type":"string","optional":true},"payload":null}`)},
		&kgo.Record{Value: []byte(`not json`), Key: []byte("bad")},
	)
	cfg := k.config("json")
	cfg.Registry, cfg.Value, cfg.ValueClass = nil, convert.NewJSON(convert.JSONOptions{SchemasEnable: true}), convert.JSONClass
	cfg.Tolerance, cfg.DLQTopic, cfg.DLQHeaders = ToleranceAll, dlq, true
	c := start(t, cfg)
	waitFor(t, "3 records committed", func() bool { return committedRecords(k.fs) == 3 })
	c.stop()
	c.wait(30 * time.Second)
	rep, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 3}, SeqField: "seq"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 2 {
		t.Fatalf("%d files; want 2 (the schema change rotates)", len(rep.Files))
	}
	var seqs []int64
	for _, f := range rep.Files {
		for _, row := range readRows(t, k.fs, f.Path) {
			seq := row["seq"].(int64)
			seqs = append(seqs, seq)
			if amount := row["amount"].(*big.Rat); amount.Cmp(big.NewRat(seq*100+25, 100)) != 0 {
				t.Fatalf("seq %d: amount %v", seq, amount)
			}
			if at := row["at"].(time.Time); !at.Equal(time.UnixMilli(1_700_000_000_000 + seq)) {
				t.Fatalf("seq %d: at %v", seq, at)
			}
		}
	}
	if !slices.Equal(seqs, []int64{0, 1, 2}) {
		t.Fatalf("committed seqs %v", seqs)
	}
	if c.Stats.NullsIgnored.Load() != 1 || c.Stats.DeadLettered.Load() != 1 {
		t.Fatalf("nulls %d, dead-lettered %d", c.Stats.NullsIgnored.Load(), c.Stats.DeadLettered.Load())
	}
	bad := consumeAll(t, k, dlq, 1)[0]
	h := headers(bad)
	if string(bad.Value) != "not json" || h["__connect.errors.offset"] != "4" || h["__connect.errors.exception.message"] == "" {
		t.Fatalf("DLQ record %q headers %v", bad.Value, h)
	}
	if h["__connect.errors.task.id"] != "0" || h["__connect.errors.class.name"] != convert.JSONClass ||
		!strings.HasPrefix(h["__connect.errors.exception.stacktrace"], "*convert.Error: ") {
		t.Fatalf("DLQ record's task, class and trace headers: %v", h)
	}
}

// TestDecodeKeyAndHeaders: the decoded record carries the key as
// key.converter reads it and the headers as Kafka delivered them; a key
// its converter refuses is a bad record (errors.tolerance applies), as in
// Connect.
func TestDecodeKeyAndHeaders(t *testing.T) {
	c := &Connector{cfg: withDefaults(Config{Value: convert.NewJSON(convert.JSONOptions{SchemasEnable: true}), Key: convert.NewNumber(convert.Long)})}
	hs := []kgo.RecordHeader{{Key: "trace", Value: []byte("t1")}}
	kr := &kgo.Record{Topic: "t", Key: []byte{0, 0, 0, 0, 0, 0, 1, 0}, Value: orderEnvelope(1, false), Headers: hs}
	r, err := c.decode(context.Background(), kr, &transform.Record{})
	if err != nil {
		t.Fatal(err)
	}
	key, err := r.Key.Schema.Native(r.Key.Datum)
	if err != nil || key != int64(256) || len(r.Headers) != 1 || r.Headers[0].Key != "trace" || r.Schema == nil {
		t.Fatalf("key %v (%v), headers %v, schema %v", key, err, r.Headers, r.Schema)
	}
	kr.Key = []byte("short")
	if _, err := c.decode(context.Background(), kr, &transform.Record{}); !isBadRecord(err) || !errors.Is(err, convert.ErrConversion) {
		t.Fatalf("a key of 5 bytes for LongConverter: %v; want a bad record", err)
	}
	kr.Key = nil
	if r, err := c.decode(context.Background(), kr, &transform.Record{}); err != nil || r.Key.Datum != nil {
		t.Fatalf("a null key: %+v, %v", r, err)
	}
}

// TestJSONSchemaRestoredWithinProcess: a partition recovered after a
// rebalance in the same process finds its committed files' schema again
// through the JSON converter (D23): the verdict on the next record does
// not depend on the rebalance.
func TestJSONSchemaRestoredWithinProcess(t *testing.T) {
	c := &Connector{cfg: withDefaults(Config{Value: convert.NewJSON(convert.JSONOptions{SchemasEnable: true})})}
	r, err := c.decode(context.Background(), &kgo.Record{Topic: "t", Value: orderEnvelope(1, false)}, &transform.Record{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.schemaSource(); !ok {
		t.Fatal("JSON values give partitions no schema lookup: recovery forgets the files' schema")
	}
	if s, err := c.schemaForFiles(context.Background(), "t", r.Schema.ID); err != nil || s != r.Schema {
		t.Fatalf("schemaForFiles(%d) = %v, %v", r.Schema.ID, s, err)
	}
}

// TestTransformsSeeConvertedKeysAndNulls: the transforms run after the
// converters, so a $Key transform works on the key converter's schema
// (HoistField$Key wraps the Long key in a struct), and a null value
// reaches the chain (Filter under RecordIsTombstone drops it instead of
// behavior.on.null.values deciding).
func TestTransformsSeeConvertedKeysAndNulls(t *testing.T) {
	chain, err := transform.New([]configs.TransformSpec{
		{Alias: "hoist", Class: "HoistField$Key", Props: map[string]string{"field": "id"}},
		{Alias: "drop", Class: "Filter", Predicate: "tomb"},
	}, []configs.PredicateSpec{{Alias: "tomb", Class: "RecordIsTombstone"}})
	if err != nil {
		t.Fatal(err)
	}
	c := &Connector{cfg: withDefaults(Config{Value: convert.NewJSON(convert.JSONOptions{SchemasEnable: true}),
		Key: convert.NewNumber(convert.Long), Transforms: chain, FailOnNull: true})}
	kr := &kgo.Record{Topic: "t", Key: []byte{0, 0, 0, 0, 0, 0, 1, 0}, Value: orderEnvelope(1, false)}
	r, err := c.decode(context.Background(), kr, &transform.Record{})
	if err != nil {
		t.Fatal(err)
	}
	key, err := r.Key.Schema.Native(r.Key.Datum)
	if m, ok := key.(map[string]any); err != nil || !ok || m["id"] != int64(256) {
		t.Fatalf("key after HoistField$Key = %#v (%v), want {id: 256}", key, err)
	}
	kr.Value = nil
	if r, err := c.decode(context.Background(), kr, &transform.Record{}); err != nil || r != nil {
		t.Fatalf("a tombstone under Filter/RecordIsTombstone: %+v, %v; want dropped (FailOnNull must not see it)", r, err)
	}
	if c.Stats.Filtered.Load() != 1 {
		t.Errorf("Filtered = %d, want 1", c.Stats.Filtered.Load())
	}
}
