package sink

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// decodeBefore is decode's Avro path as it was before the converter seam
// (issue 23), kept as the same-run baseline of BenchmarkDecodeAvro.
func (c *Connector) decodeBefore(ctx context.Context, kr *kgo.Record) (*record, error) {
	id, datum, err := schema.ParseWire(kr.Value)
	if err != nil {
		return nil, err
	}
	s, err := c.schemaByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(datum); err != nil {
		return nil, err
	}
	return &record{Offset: kr.Offset, LeaderEpoch: kr.LeaderEpoch, Timestamp: kr.Timestamp, Schema: s, Datum: datum}, nil
}

// BenchmarkDecodeAvro compares, in one run, decoding an Avro record
// through the value converter (convert.Avro) with the inline path it
// replaced. `go test -run '^$' -bench DecodeAvro -benchmem ./sink`.
func BenchmarkDecodeAvro(b *testing.B) {
	c := lookupConnector(b)
	value, err := demodata.Value(1, 0, 7)
	if err != nil {
		b.Fatal(err)
	}
	kr := &kgo.Record{Topic: "orders", Key: []byte("k"), Value: value, Offset: 7}
	ctx := context.Background()
	for _, bc := range []struct {
		name   string
		decode func(context.Context, *kgo.Record) (*record, error)
	}{{"before-inline", c.decodeBefore}, {"converter", c.decode}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.decode(ctx, kr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodeAvroAllocatesOnlyTheRecord: through the converter seam, a
// cached Avro record costs the one allocation the inline path cost (the
// record itself): the seam adds none.
func TestDecodeAvroAllocatesOnlyTheRecord(t *testing.T) {
	c := lookupConnector(t)
	value, err := demodata.Value(1, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	kr := &kgo.Record{Topic: "orders", Key: []byte("k"), Value: value, Offset: 7}
	ctx := context.Background()
	count := func(decode func(context.Context, *kgo.Record) (*record, error)) float64 {
		return testing.AllocsPerRun(500, func() {
			if _, err := decode(ctx, kr); err != nil {
				t.Fatal(err)
			}
		})
	}
	before, after := count(c.decodeBefore), count(c.decode)
	if after > before {
		t.Fatalf("decode through the converter allocates %.1f times per record; the inline path %.1f", after, before)
	}
}
