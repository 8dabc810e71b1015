package partitioner

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"
)

// orderSchema covers every Avro shape a partitioner meets: primitives, an
// enum, unions with null, nested records (one behind a union), logical
// timestamps, a date and a decimal.
const orderSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"id","type":"long"},
 {"name":"qty","type":"int"},
 {"name":"country","type":"string"},
 {"name":"paid","type":"boolean"},
 {"name":"color","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
 {"name":"region","type":["null","string"],"default":null},
 {"name":"price","type":"double"},
 {"name":"customer","type":{"type":"record","name":"Customer","fields":[
   {"name":"tier","type":"int"},
   {"name":"address","type":["null",{"type":"record","name":"Address","fields":[
     {"name":"city","type":"string"}]}],"default":null}]}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"ts_us","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"opt_ts","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},
 {"name":"ts_str","type":"string"},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}}
]}`

// baseOrder is a valid order; tests change single fields.
func baseOrder() map[string]any {
	return map[string]any{
		"id": int64(42), "qty": int32(-7), "country": "FR", "paid": true, "color": "RED",
		"region": nil, "price": 9.5,
		"customer": map[string]any{"tier": int32(3), "address": nil},
		"ts":       time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC),
		"ts_us":    time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC),
		"day":      time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC),
		"opt_ts":   nil, "ts_str": "2026-03-29T01:00:00Z",
		"tags": []any{"a"}, "amount": big.NewRat(1999, 100),
	}
}

// avroRecord round-trips native through the Avro binary encoding, so
// partitioners see exactly what goavro decodes, and fails the test if the
// partitioner decodes more than once.
func avroRecord(t *testing.T, schema string, native any) Record {
	t.Helper()
	codec, err := goavro.NewCodec(schema)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := codec.BinaryFromNative(nil, native)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	calls := 0
	return Record{Topic: "orders", Partition: 1, Timestamp: -1, Value: func() (any, error) {
		if calls++; calls > 1 {
			t.Errorf("value decoded %d times", calls)
		}
		v, _, err := codec.NativeFromBinary(bin)
		return v, err
	}}
}

func order(t *testing.T, change func(map[string]any)) Record {
	t.Helper()
	o := baseOrder()
	if change != nil {
		change(o)
	}
	return avroRecord(t, orderSchema, o)
}

func set(k string, v any) func(map[string]any) {
	return func(o map[string]any) { o[k] = v }
}

func failingValue(err error) Record {
	return Record{Value: func() (any, error) { return nil, err }}
}

var errBoom = errors.New("boom")
