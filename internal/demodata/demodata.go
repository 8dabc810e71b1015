// Package demodata owns the sample records of the demo and the tests: an
// "Order" Avro schema with logical types, and a producer that gives each
// record a "seq" field equal to the offset it will get on a fresh topic, so a
// reader can prove which offset every committed record came from.
package demodata

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/linkedin/goavro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// orderFields are the fields of Schema, which SchemaV2 extends.
const orderFields = `
 {"name":"seq","type":"long","doc":"offset of this record in its partition"},
 {"name":"partition","type":"int"},
 {"name":"customer","type":"string"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"created_at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"region","type":"string","default":"eu"}`

// Schema is the sample value schema.
const Schema = `{"type":"record","name":"Order","namespace":"demo","fields":[` + orderFields + `
]}`

// SchemaV2 is Schema plus a field with a default: a BACKWARD-compatible evolution.
const SchemaV2 = `{"type":"record","name":"Order","namespace":"demo","fields":[` + orderFields + `,
 {"name":"channel","type":"string","default":"web"}
]}`

// Regions are the values of the low-cardinality "region" field.
var Regions = []string{"eu", "us", "apac"}

var codec, codecV2 = mustCodec(Schema), mustCodec(SchemaV2)

func mustCodec(s string) *goavro.Codec {
	c, err := goavro.NewCodec(s)
	if err != nil {
		panic(err)
	}
	return c
}

// CreatedAt is the created_at of record seq unless a test sets its own.
func CreatedAt(seq int64) time.Time { return time.UnixMilli(1_700_000_000_000 + seq*1000).UTC() }

// Value returns the Confluent-framed value of record seq of partition p.
func Value(schemaID int32, p int32, seq int64) ([]byte, error) {
	return ValueAt(schemaID, p, seq, CreatedAt(seq))
}

// ValueAt is Value with a chosen created_at.
func ValueAt(schemaID int32, p int32, seq int64, created time.Time) ([]byte, error) {
	return encode(codec, schemaID, native(p, seq, created))
}

// ValueV2 is Value written with SchemaV2 (channel "mobile").
func ValueV2(schemaID int32, p int32, seq int64) ([]byte, error) {
	n := native(p, seq, CreatedAt(seq))
	n["channel"] = "mobile"
	return encode(codecV2, schemaID, n)
}

func native(p int32, seq int64, created time.Time) map[string]any {
	n := map[string]any{
		"seq":        seq,
		"partition":  p,
		"customer":   fmt.Sprintf("customer-%d", seq%97),
		"amount":     big.NewRat(seq%100000, 100),
		"created_at": created,
		"note":       nil,
		"region":     Regions[seq%int64(len(Regions))],
	}
	if seq%10 == 0 {
		n["note"] = goavro.Union("string", "every tenth order has a note")
	}
	return n
}

func encode(c *goavro.Codec, schemaID int32, native map[string]any) ([]byte, error) {
	datum, err := c.BinaryFromNative(nil, native)
	if err != nil {
		return nil, err
	}
	return schema.AppendWire(nil, schemaID, datum), nil
}

// Produce writes n records spread round-robin over partitions [0, parts) of
// a fresh topic and returns how many each partition got.
func Produce(ctx context.Context, brokers []string, schemaID int32, topic string, parts int32, n int) (map[int32]int64, error) {
	return ProduceFrom(ctx, brokers, schemaID, topic, parts, n, nil)
}

// ProduceFrom is Produce continuing after earlier batches: from[p] records
// are already in partition p. It returns the new totals.
func ProduceFrom(ctx context.Context, brokers []string, schemaID int32, topic string, parts int32, n int, from map[int32]int64) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	counts := map[int32]int64{}
	for p, c := range from {
		counts[p] = c
	}
	var mu sync.Mutex
	var firstErr error
	for i := 0; i < n; i++ {
		p := int32(i) % parts
		v, err := Value(schemaID, p, counts[p])
		if err != nil {
			return nil, err
		}
		counts[p]++
		cl.Produce(ctx, &kgo.Record{Partition: p, Value: v}, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return nil, fmt.Errorf("produce to %s: %w", topic, firstErr)
	}
	return counts, nil
}
