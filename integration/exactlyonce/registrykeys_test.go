//go:build integration

package exactlyonce

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riferrei/srclient"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// The key schemas, registered under <topic>-key as Confluent's
// serializers register them.
const (
	keyProto      = `syntax = "proto3"; package it.keys; message OrderKey { string region = 1; int64 id = 2; }`
	keyJSONSchema = `{"type":"object","title":"OrderKey","properties":{"region":{"type":"string"},"id":{"type":"integer"}},"required":["region","id"]}`
)

// protoOrderKey is an OrderKey in KafkaProtobufSerializer's wire format,
// framed by hand: magic byte, schema id, message indexes (0: the file's
// first message), the message.
func protoOrderKey(id int32, region string, n int64) []byte {
	b := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), region)
	b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.VarintType), uint64(n))
	return schema.AppendWire(nil, id, append([]byte{0}, b...))
}

// produceKeyed appends records with the given keys (nil: no key) and
// Avro values seq 0, 1, … to partition 0, in order.
func (s *setup) produceKeyed(keys [][]byte) {
	s.t.Helper()
	cl := itest.KafkaClient(s.t, kgo.DefaultProduceTopic(s.topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for seq, key := range keys {
		v, err := demodata.Value(s.schemaID, 0, int64(seq))
		if err != nil {
			s.t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Key: key, Value: v}).FirstErr(); err != nil {
			s.t.Fatalf("Kafka at %s: %v", itest.KafkaAddr(), err)
		}
	}
}

// TestRegistryKeyConverters (issue 23): ProtobufConverter and
// JsonSchemaConverter as key.converter, two connectors of one daemon, keys
// produced in Confluent's wire format with the registry's ids. The keys
// are read (a $Key transform, ExtractField$Key, works on their fields);
// the records are committed exactly once; the consumed key's bytes are
// the kafka_key column Spark reads as binary; a key its converter
// refuses goes to the dead-letter topic unchanged, at Connect's stage
// KEY_CONVERTER, the message naming the key.
func TestRegistryKeyConverters(t *testing.T) {
	t.Parallel()
	pb, js := newSetup(t, 1), newSetup(t, 1)
	sr := srclient.NewSchemaRegistryClient(itest.RegistryURL())
	register := func(s *setup, text string, typ srclient.SchemaType) int32 {
		sch, err := sr.CreateSchema(s.topic+"-key", text, typ)
		if err != nil {
			t.Fatalf("registry at %s: register the %s key schema: %v", itest.RegistryURL(), typ, err)
		}
		return int32(sch.ID())
	}
	pbID, jsID := register(pb, keyProto, srclient.Protobuf), register(js, keyJSONSchema, srclient.Json)
	jsKey := func(region string, n int) []byte {
		return schema.AppendWire(nil, jsID, []byte(fmt.Sprintf(`{"region":%q,"id":%d}`, region, n)))
	}
	// Four keys, a record without a key, then a key the converter refuses.
	keys := map[*setup][][]byte{
		pb: {protoOrderKey(pbID, "eu", 0), protoOrderKey(pbID, "us", 1), protoOrderKey(pbID, "eu", 2), protoOrderKey(pbID, "apac", 3), nil,
			schema.AppendWire(nil, pbID, []byte{0, 0x0a, 0x05, 'x'})}, // region cut short
		js: {jsKey("eu", 0), jsKey("us", 1), jsKey("eu", 2), jsKey("apac", 3), nil,
			schema.AppendWire(nil, jsID, []byte(`{"region":5,"id":5}`))}, // region not a string
	}
	db := itest.UniqueName(t, "keys_")
	dir := t.TempDir()
	dlqs := map[*setup]string{}
	for s, conv := range map[*setup][2]string{
		pb: {"pbkeys", "io.confluent.connect.protobuf.ProtobufConverter"},
		js: {"jskeys", "io.confluent.connect.json.JsonSchemaConverter"},
	} {
		s.produceKeyed(keys[s])
		dlqs[s] = s.dlqTopic()
		s.connectorIn(dir, conv[0], hiveOn(db, map[string]string{
			"key.converter": conv[1], "hdfs.sink.extra.columns": "key",
			"transforms": "id", "transforms.id.type": "org.apache.kafka.connect.transforms.ExtractField$Key", "transforms.id.field": "id",
			"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlqs[s], "errors.deadletterqueue.context.headers.enable": "true"}))
	}
	start := time.Now()
	d := pb.start(dir)
	for s, conv := range map[*setup]string{pb: "ProtobufConverter", js: "JsonSchemaConverter"} {
		s.waitCommitted(5, time.Minute)
		bad := s.consume(dlqs[s], 1)[0]
		h := map[string]string{}
		for _, kv := range bad.Headers {
			h[kv.Key] = string(kv.Value)
		}
		msg := h["__connect.errors.exception.message"]
		if h["__connect.errors.offset"] != "5" || h["__connect.errors.stage"] != "KEY_CONVERTER" || string(bad.Key) != string(keys[s][5]) ||
			!strings.HasPrefix(msg, "key: "+conv) {
			t.Errorf("%s: DLQ record key %q headers %v; want offset 5, stage KEY_CONVERTER, the key as produced, a message naming the key's converter", conv, bad.Key, h)
		}
		hivePartitions(t, db, hive.TableName("${topic}", s.topic), 1, time.Minute)
	}
	t.Logf("committed after %v", time.Since(start).Round(time.Second))
	d.stop()
	var queries []string
	for _, s := range []*setup{pb, js} {
		s.check(map[int32]int64{0: 5})
		table := hive.TableName("${topic}", s.topic)
		queries = append(queries, fmt.Sprintf("DESCRIBE %s.%s", db, table),
			fmt.Sprintf(`SELECT concat_ws('|', CAST(seq AS STRING), coalesce(hex(kafka_key), 'null')) AS v FROM %s.%s ORDER BY seq`, db, table))
	}
	res := itest.SparkSQL(t, queries...)
	t.Logf("read by Spark after %v", time.Since(start).Round(time.Second))
	for i, s := range []*setup{pb, js} {
		checkColumnTypes(t, res[2*i], map[string]string{"seq": "bigint", "kafka_key": "binary"})
		rows := res[2*i+1]
		for seq := 0; seq < 5; seq++ {
			want := fmt.Sprintf("%d|%s", seq, strings.ToUpper(hex.EncodeToString(keys[s][seq])))
			if keys[s][seq] == nil {
				want = fmt.Sprintf("%d|null", seq)
			}
			if seq >= len(rows) || rows[seq]["v"] != want {
				t.Errorf("%s row %d read by Spark\n got %v\nwant %s", s.topic, seq, rows, want)
			}
		}
	}
}
