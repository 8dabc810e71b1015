package transform

import (
	"io"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/format"
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
	s, datums, three := benchSetup(b)
	for _, bc := range []struct {
		name  string
		chain *Chain
	}{{"none", nil}, {"three", three}} {
		b.Run(bc.name, func(b *testing.B) {
			path := newRecordPath(b, s, bc.chain)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				path.write(b, datums[i%len(datums)], i)
			}
		})
	}
}

// BenchmarkChainShare runs the two paths of BenchmarkRecordPath
// interleaved, in blocks of 256 records, so that whatever else the
// machine does slows both alike, and reports the chain's cost as a share
// of the path without it (chain-%).
//
//	go test -run '^$' -bench ChainShare -count 5 ./transform/
func BenchmarkChainShare(b *testing.B) {
	s, datums, three := benchSetup(b)
	none, with := newRecordPath(b, s, nil), newRecordPath(b, s, three)
	var tNone, tWith time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		for j := range 256 {
			none.write(b, datums[(i+j)%len(datums)], i+j)
		}
		mid := time.Now()
		for j := range 256 {
			with.write(b, datums[(i+j)%len(datums)], i+j)
		}
		tNone, tWith, i = tNone+mid.Sub(start), tWith+time.Since(mid), i+256
	}
	b.ReportMetric(100*(float64(tWith)/float64(tNone)-1), "chain-%")
	b.ReportMetric(float64(tNone.Nanoseconds())/float64(i), "ns/record-none")
	b.ReportMetric(float64(tWith.Nanoseconds())/float64(i), "ns/record-three")
}

// recordPath is sink.decode's per-record work after the registry lookup,
// and the Avro file it writes to.
type recordPath struct {
	s       *schema.Schema
	chain   *Chain
	w       format.RecordWriter
	scratch []byte // as the sink's partition keeps one
}

func newRecordPath(b *testing.B, s *schema.Schema, chain *Chain) *recordPath {
	out, err := chain.ValueSchema("orders", s)
	if err != nil {
		b.Fatal(err)
	}
	f, _ := avro.New(avro.Options{Codec: "snappy"})
	w, err := f.NewWriter(io.Discard, out)
	if err != nil {
		b.Fatal(err)
	}
	return &recordPath{s: s, chain: chain, w: w, scratch: make([]byte, 0, 1024)}
}

func (p *recordPath) write(b *testing.B, d []byte, i int) {
	if !p.chain.Validates() { // as sink.decode does
		if err := p.s.Validate(d); err != nil {
			b.Fatal(err)
		}
	}
	r := Record{Topic: "orders", Offset: int64(i), Timestamp: benchTime, Value: Value{Schema: p.s, Bytes: d}, Scratch: p.scratch}
	if _, err := p.chain.Apply(&r); err != nil {
		b.Fatal(err)
	}
	p.scratch = r.Scratch
	if err := p.w.WriteDatum(r.Value.Bytes); err != nil {
		b.Fatal(err)
	}
}

var benchTime = time.UnixMilli(1_700_000_000_000)

func benchSetup(b *testing.B) (*schema.Schema, [][]byte, *Chain) {
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
	return s, datums, three
}
