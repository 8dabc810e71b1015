// Package benchdata owns the benchmark workloads' records: the ~100 B and
// ~1 KB Avro schemas, their datums, and the chain of three transforms of
// issue 23's cost target. tools/bench produces them to Kafka; the sink's
// in-process benchmarks (sink/transformcost_bench_test.go) decode the same
// records, so both measure one workload.
package benchdata

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// Schema1KB is the ~1 KB workload: 20 fields of mixed types including the
// logical types the sink must carry through (decimal, timestamp-millis,
// date, uuid), a union, an enum, an array and a map.
const Schema1KB = `{"type":"record","name":"Click","namespace":"bench","fields":[
 {"name":"id","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"request_id","type":{"type":"string","logicalType":"uuid"}},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
 {"name":"user","type":"string"},
 {"name":"session","type":"string"},
 {"name":"country","type":"string"},
 {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["VIEW","CLICK","BUY"]}},
 {"name":"score","type":"double"},
 {"name":"ratio","type":"float"},
 {"name":"count","type":"int"},
 {"name":"flag","type":"boolean"},
 {"name":"referrer","type":["null","string"],"default":null},
 {"name":"ua","type":"string"},
 {"name":"path","type":"string"},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"string"}},
 {"name":"latency_us","type":"long"},
 {"name":"payload","type":"string"}]}`

// Schema100B is the ~100 B workload.
const Schema100B = `{"type":"record","name":"Tick","namespace":"bench","fields":[
 {"name":"id","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"sym","type":"string"},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":4}},
 {"name":"qty","type":"int"},
 {"name":"venue","type":"string"},
 {"name":"order_ref","type":{"type":"string","logicalType":"uuid"}},
 {"name":"trader","type":"string"},
 {"name":"note","type":["null","string"],"default":null}]}`

// PoolSize distinct datums are produced in a cycle. Their "ts" advance one
// second each, so a cycle spans ~68 minutes and an Hourly run keeps about two
// hour directories open per partition, as a real backlog would.
const PoolSize = 4096

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Text is the schema of the named size class ("1KB" or "100B").
func Text(size string) string {
	if size == "100B" {
		return Schema100B
	}
	return Schema1KB
}

// Pool returns PoolSize binary Avro datums (no wire framing) of the named
// size class ("1KB" or "100B") and their schema's text.
func Pool(size string) ([][]byte, string, error) {
	text, gen := Text(size), native1KB
	if size == "100B" {
		gen = native100B
	}
	codec, err := goavro.NewCodec(text)
	if err != nil {
		return nil, "", fmt.Errorf("bench schema %s: %w", size, err)
	}
	pool := make([][]byte, PoolSize)
	for i := range pool {
		if pool[i], err = codec.BinaryFromNative(nil, gen(i)); err != nil {
			return nil, "", fmt.Errorf("bench datum %s #%d: %w", size, i, err)
		}
	}
	return pool, text, nil
}

var words = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa")

func native1KB(i int) map[string]any {
	ts := baseTime.Add(time.Duration(i) * time.Second)
	var ref any
	if i%3 == 0 {
		ref = goavro.Union("string", "https://example.com/"+words[i%len(words)])
	}
	return map[string]any{
		"id": int64(i), "ts": ts, "day": ts.Truncate(24 * time.Hour),
		"request_id": fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7919),
		"amount":     big.NewRat(int64(i%1_000_000), 100),
		"user":       fmt.Sprintf("user-%06d", i%50000), "session": fmt.Sprintf("s-%016x", i*2654435761),
		"country": []string{"DE", "FR", "US", "JP", "BR"}[i%5], "kind": []string{"VIEW", "CLICK", "BUY"}[i%3],
		"score": float64(i) / 7, "ratio": float32(i%100) / 100, "count": int32(i % 1000), "flag": i%2 == 0,
		"referrer":   ref,
		"ua":         "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
		"path":       "/catalog/" + words[i%len(words)] + "/" + words[(i/3)%len(words)] + fmt.Sprintf("/item-%d", i%9973),
		"tags":       []any{words[i%len(words)], words[(i+5)%len(words)], "bench"},
		"attrs":      map[string]any{"ab": "variant-" + words[i%4], "region": "eu-west-1", "build": "2026.01.1"},
		"latency_us": int64(i * 37 % 250000),
		"payload":    strings.Repeat(words[i%len(words)]+" ", 140)[:680],
	}
}

func native100B(i int) map[string]any {
	var note any
	if i%10 == 0 {
		note = goavro.Union("string", "odd lot")
	}
	return map[string]any{
		"id": int64(i), "ts": baseTime.Add(time.Duration(i) * time.Second),
		"sym":   []string{"ACME", "GLOBX", "INITECH", "UMBRL"}[i%4],
		"price": big.NewRat(int64(1_000_000+i%50_000), 10_000), "qty": int32(i%500 + 1),
		"venue": "XNAS-" + words[i%len(words)], "note": note,
		"order_ref": fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*104729),
		"trader":    fmt.Sprintf("trader-%05d-desk-%s", i%20000, words[i%len(words)]),
	}
}

// Transforms is the chain of three of issue 23's target: the topic and
// timestamp inserted, a field masked, a field renamed (both workloads have
// id and ts).
func Transforms() []configs.TransformSpec {
	return []configs.TransformSpec{
		{Alias: "ins", Class: "InsertField$Value", Props: map[string]string{"topic.field": "src_topic!", "timestamp.field": "kafka_ts"}},
		{Alias: "mask", Class: "MaskField$Value", Props: map[string]string{"fields": "id"}},
		{Alias: "ren", Class: "ReplaceField$Value", Props: map[string]string{"renames": "ts:event_ts"}},
	}
}
