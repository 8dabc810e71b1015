package transform

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// BenchmarkSchemalessChain is a chain of three transforms (InsertField of
// the topic and timestamp, ReplaceField dropping and renaming, MaskField
// of a string) on a schemaless JSON value of about 1 KB: one parse of the
// top-level object and one compact write per record.
//
//	go test -run '^$' -bench SchemalessChain -benchmem ./transform/
func BenchmarkSchemalessChain(b *testing.B) {
	chain, err := New([]configs.TransformSpec{
		{Alias: "ins", Class: "InsertField$Value", Props: map[string]string{"topic.field": "src", "timestamp.field": "ts"}},
		{Alias: "rep", Class: "ReplaceField$Value", Props: map[string]string{"exclude": "note", "renames": "customer:client"}},
		{Alias: "mask", Class: "MaskField$Value", Props: map[string]string{"fields": "card"}},
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	value := benchJSONValue()
	r := &Record{Topic: "orders", Offset: 1, Timestamp: time.UnixMilli(1_700_000_000_000), Scratch: make([]byte, 0, 2048)}
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		r.Value, r.scratchTaken = Value{Bytes: value}, false
		if _, err := chain.Apply(r); err != nil {
			b.Fatal(err)
		}
	}
}

// benchJSONValue is an order of about 1 KB: strings, numbers, a nested
// object and an array, as a producer writes them (compact).
func benchJSONValue() []byte {
	var sb strings.Builder
	sb.WriteString(`{"id":123456789,"customer":"Jane Q. Public","card":"4111-1111-1111-1111","note":"leave at the door",`)
	sb.WriteString(`"address":{"street":"1 Main Street","city":"Springfield","zip":"12345","country":"US"},"items":[`)
	for i := 0; i < 9; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"sku":"SKU-%06d","qty":%d,"price":%d.99,"title":"item number %d of the order"}`, i, i+1, 10+i, i)
	}
	sb.WriteString(`],"total":1234.56,"currency":"EUR","paid":true,"created":"2024-02-29T12:00:00Z"}`)
	return []byte(sb.String())
}
