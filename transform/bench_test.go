package transform

import (
	"io"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// BenchmarkRecordPath is the per-record work of the sink's Avro path
// (the datum validated as decode does, then appended to an Avro container
// file) without transforms and with a chain of three (InsertField of the
// topic and timestamp, MaskField of a string, ReplaceField dropping and
// renaming), in the same run: the chain's share is three/none - 1
// (issue 23's target: at most 15 %).
//
//	go test -run '^$' -bench RecordPath -count 5 ./transform/
func BenchmarkRecordPath(b *testing.B) {
	s, err := schema.New(1, demodata.Schema)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1024
	datums := make([][]byte, n)
	for i := range datums {
		v, err := demodata.Value(1, 0, int64(i))
		if err != nil {
			b.Fatal(err)
		}
		_, datums[i], _ = schema.ParseWire(v)
	}
	three, err := New([]configs.TransformSpec{
		{Alias: "ins", Class: "InsertField$Value", Props: propsOf("topic.field", "src!", "timestamp.field", "ts")},
		{Alias: "mask", Class: "MaskField$Value", Props: propsOf("fields", "customer", "replacement", "***")},
		{Alias: "ren", Class: "ReplaceField$Value", Props: propsOf("exclude", "note", "renames", "region:area")},
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		chain *Chain
	}{{"none", nil}, {"three", three}} {
		b.Run(bc.name, func(b *testing.B) {
			out, err := bc.chain.ValueSchema("orders", s)
			if err != nil {
				b.Fatal(err)
			}
			f, _ := avro.New(avro.Options{Codec: "snappy"})
			w, err := f.NewWriter(io.Discard, out)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				d := datums[i%n]
				if err := s.Validate(d); err != nil {
					b.Fatal(err)
				}
				r := Record{Topic: "orders", Offset: int64(i), Value: Value{Schema: s, Bytes: d}}
				if _, err := bc.chain.Apply(&r); err != nil {
					b.Fatal(err)
				}
				if err := w.WriteDatum(r.Value.Bytes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
