//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/riferrei/srclient"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// pbAddress is registered under a subject of its own: the order schema
// imports it through a registry reference.
const pbAddress = `syntax = "proto3";
package it.common;
message Address { string city = 1; }
`

// pbOrder is the value schema; v2 adds an optional field (a BACKWARD
// compatible change).
func pbOrder(v2 bool) string {
	extra := ""
	if v2 {
		extra = "\n  optional string extra = 12;"
	}
	return `syntax = "proto3";
package it.shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "it/common/address.proto";

enum Color { COLOR_UNSPECIFIED = 0; RED = 1; GREEN = 2; }

message Order {
  int64 seq = 1;
  uint32 u32 = 2;
  string name = 3;
  Color color = 4;
  repeated string tags = 5;
  map<string, int64> counts = 6;
  it.common.Address ship = 7;
  oneof payment { string card = 8; int64 voucher = 9; }
  google.protobuf.Timestamp at = 10;
  google.protobuf.StringValue note = 11;` + extra + `
}
`
}

// pbMessage builds an Order with the producer's own compiled descriptor.
func pbMessage(t *testing.T, v2 bool, seq int64) []byte {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"order.proto": pbOrder(v2), "it/common/address.proto": pbAddress}),
	})}
	files, err := c.Compile(context.Background(), "order.proto")
	if err != nil {
		t.Fatal(err)
	}
	md := files[0].Messages().ByName("Order")
	m := dynamicpb.NewMessage(md)
	f := func(name string) protoreflect.FieldDescriptor { return md.Fields().ByName(protoreflect.Name(name)) }
	m.Set(f("seq"), protoreflect.ValueOfInt64(seq))
	m.Set(f("u32"), protoreflect.ValueOfUint32(4_000_000_000))
	m.Set(f("name"), protoreflect.ValueOfString(fmt.Sprintf("n%d", seq)))
	m.Set(f("color"), protoreflect.ValueOfEnum(2))
	tags := m.Mutable(f("tags")).List()
	tags.Append(protoreflect.ValueOfString("x"))
	tags.Append(protoreflect.ValueOfString("y"))
	m.Mutable(f("counts")).Map().Set(protoreflect.ValueOfString("k").MapKey(), protoreflect.ValueOfInt64(seq))
	ship := m.Mutable(f("ship")).Message()
	ship.Set(ship.Descriptor().Fields().ByName("city"), protoreflect.ValueOfString("Oslo"))
	m.Set(f("voucher"), protoreflect.ValueOfInt64(42))
	at := m.Mutable(f("at")).Message()
	at.Set(at.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(1709210096)) // 2024-02-29 12:34:56.123 UTC
	at.Set(at.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(123_000_000))
	if v2 {
		m.Set(f("extra"), protoreflect.ValueOfString("v2"))
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pbWire frames a message as KafkaProtobufSerializer does: magic byte,
// schema id, the message indexes (the single byte 0: the first message).
func pbWire(id int32, msg []byte) []byte {
	return schema.AppendWire(nil, id, append([]byte{0}, msg...))
}

// TestProtobufConverterReadBySpark (issue 23): ProtobufConverter values,
// their .proto schema registered with a reference to another subject and
// produced in Confluent's wire format, are committed exactly once as
// Parquet with Hive on; Spark reads ProtobufData's types back; the
// schema change (v2 adds a field) rotates the files and the table follows
// it; bytes that are not the registered message go to the dead-letter
// topic with Connect's headers.
func TestProtobufConverterReadBySpark(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	sr := srclient.NewSchemaRegistryClient(itest.RegistryURL())
	common := s.topic + "-address"
	if _, err := sr.CreateSchema(common, pbAddress, srclient.Protobuf); err != nil {
		t.Fatalf("registry at %s: register the referenced schema: %v", itest.RegistryURL(), err)
	}
	ref := srclient.Reference{Name: "it/common/address.proto", Subject: common, Version: 1}
	ids := map[bool]int32{}
	for _, v2 := range []bool{false, true} {
		// newSetup registered an Avro schema under <topic>-value: a subject
		// of its own (the sink reads by id, never by subject).
		sch, err := sr.CreateSchema(s.topic+"-pb-value", pbOrder(v2), srclient.Protobuf, ref)
		if err != nil {
			t.Fatalf("registry at %s: register the Protobuf schema (v2 %v): %v", itest.RegistryURL(), v2, err)
		}
		ids[v2] = int32(sch.ID())
	}
	s.produceRaw(0, pbWire(ids[false], pbMessage(t, false, 0)))
	s.produceRaw(0, pbWire(ids[false], pbMessage(t, false, 1)))
	s.produceRaw(0, pbWire(ids[true], pbMessage(t, true, 2)))
	s.produceRaw(0, pbWire(ids[false], []byte{0x0a, 0x05, 'x'})) // a string field cut short
	dlq := s.dlqTopic()
	db := itest.UniqueName(t, "pb_")
	d := s.start(s.connector("protobuf", hiveOn(db, map[string]string{"format.class": "parquet",
		"value.converter":  "io.confluent.connect.protobuf.ProtobufConverter",
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.context.headers.enable": "true"})))
	s.waitCommitted(3, time.Minute)
	bad := s.consume(dlq, 1)[0]
	h := map[string]string{}
	for _, kv := range bad.Headers {
		h[kv.Key] = string(kv.Value)
	}
	if h["__connect.errors.offset"] != "3" || h["__connect.errors.topic"] != s.topic ||
		!strings.Contains(h["__connect.errors.exception.message"], "ProtobufConverter") {
		t.Fatalf("DLQ record %q headers %v", bad.Value, h)
	}
	table := hive.TableName("${topic}", s.topic)
	hivePartitions(t, db, table, 1, time.Minute)
	d.stop()
	rep := s.check(map[int32]int64{0: 3})
	if len(rep.Files) != 2 {
		t.Fatalf("%d files, want 2 (the schema change rotates them)", len(rep.Files))
	}
	res := itest.SparkSQL(t, fmt.Sprintf("DESCRIBE %s.%s", db, table),
		fmt.Sprintf(`SELECT concat_ws('|', CAST(payment_0.voucher AS STRING), coalesce(payment_0.card, 'null'), CAST(seq AS STRING),
			CAST(u32 AS STRING), name, color, CAST(tags AS STRING), CAST(counts[0].key AS STRING), CAST(counts[0].value AS STRING),
			ship.city, CAST(at AS STRING), coalesce(note.value, 'null'), coalesce(extra, 'null')) AS v FROM %s.%s ORDER BY seq`, db, table))
	checkColumnTypes(t, res[0], map[string]string{"payment_0": "struct<card:string,voucher:bigint>", "seq": "bigint", "u32": "bigint", "name": "string",
		"color": "string", "tags": "array<string>", "counts": "array<struct<key:string,value:bigint>>", "ship": "struct<city:string>",
		"at": "timestamp", "note": "struct<value:string>", "extra": "string"})
	for seq := 0; seq < 3; seq++ {
		extra := "null"
		if seq == 2 {
			extra = "v2"
		}
		want := fmt.Sprintf("42|null|%d|4000000000|n%d|GREEN|[x, y]|k|%d|Oslo|2024-02-29 12:34:56.123|null|%s", seq, seq, seq, extra)
		if seq >= len(res[1]) || res[1][seq]["v"] != want {
			t.Errorf("row %d read by Spark\n got %v\nwant %s", seq, res[1], want)
		}
	}
}
