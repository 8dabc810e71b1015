package sink

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// checkedOnly is the Avro converter without ConvertUnchecked: the sink
// checks every datum before the transforms (the path with two scans).
type checkedOnly struct{ a *convert.Avro }

func (c checkedOnly) Convert(ctx context.Context, topic string, data []byte) (convert.Value, error) {
	return c.a.Convert(ctx, topic, data)
}

// countingAvro is the Avro converter counting the datums it left unchecked.
type countingAvro struct {
	*convert.Avro
	unchecked int
}

func (c *countingAvro) ConvertUnchecked(ctx context.Context, topic string, data []byte) (convert.Value, error) {
	c.unchecked++
	return c.Avro.ConvertUnchecked(ctx, topic, data)
}

// TestSingleScanEqualsCheckedPath: with a chain whose first transform
// rewrites every value, decode leaves the datum's check to the chain's
// scan. On the bench workloads' records, intact and corrupted at random
// (truncated, extended, a byte changed), that path must give what
// checking first gives: the same output datum and schema, or the same
// error (a corrupt datum is the converter's error, not a transform's, so
// the log line and the dead-letter headers do not change).
func TestSingleScanEqualsCheckedPath(t *testing.T) {
	ctx := context.Background()
	for _, size := range []string{"100B", "1KB"} {
		t.Run(size, func(t *testing.T) {
			counting := &countingAvro{}
			fast := benchConnector(t, benchChain(t), func(a *convert.Avro) convert.Converter { counting.Avro = a; return counting }, nil)
			slow := benchConnector(t, benchChain(t), func(a *convert.Avro) convert.Converter { return checkedOnly{a} }, nil)
			var trFast, trSlow transform.Record
			rng := rand.New(rand.NewPCG(23, uint64(len(size))))
			records := benchRecords(t, size)
			var corrupt, valid int
			const n = 3000
			for i := range n {
				kr := *records[rng.IntN(len(records))]
				kr.Value = mutate(rng, kr.Value, i)
				got, errFast := fast.decode(ctx, &kr, &trFast)
				want, errSlow := slow.decode(ctx, &kr, &trSlow)
				switch {
				case errSlow != nil:
					if errFast == nil || errFast.Error() != errSlow.Error() {
						t.Fatalf("record %d: single scan: err = %v; checked first: %v", i, errFast, errSlow)
					}
					if errors.Is(errSlow, schema.ErrCorruptDatum) {
						corrupt++
					}
				case errFast != nil:
					t.Fatalf("record %d: single scan: err = %v; checked first: written", i, errFast)
				case got.Schema.ID != want.Schema.ID || got.Schema.Text != want.Schema.Text || !bytes.Equal(got.Datum, want.Datum):
					t.Fatalf("record %d: single scan wrote %x (schema %d %s); checked first %x (schema %d %s)",
						i, got.Datum, got.Schema.ID, got.Schema.Text, want.Datum, want.Schema.ID, want.Schema.Text)
				default:
					valid++
				}
			}
			if counting.unchecked != n {
				t.Errorf("the single-scan path left %d of %d datums to the chain; want all", counting.unchecked, n)
			}
			if corrupt < n/10 || valid < n/10 {
				t.Errorf("%d corrupt and %d valid records: the mutations no longer test both", corrupt, valid)
			}
		})
	}
}

// mutate returns wire (a framed record) intact, truncated, extended or
// with one byte of its datum changed, by turns. The framing is kept:
// only the datum is under test.
func mutate(rng *rand.Rand, wire []byte, i int) []byte {
	const frame = 5
	b := append([]byte(nil), wire...)
	switch i % 4 {
	case 1:
		return b[:frame+rng.IntN(len(b)-frame)]
	case 2:
		return append(b, byte(rng.IntN(256)))
	case 3:
		b[frame+rng.IntN(len(b)-frame)] = byte(rng.IntN(256))
	}
	return b
}

// TestDatumCheckedBeforeExtraColumnsAndPredicates: the chain checks the
// datum only when it scans the converter's datum first. With extra
// columns (they extend the datum before the chain sees it: a truncated
// datum could read as whole once extended) or a first transform behind a
// predicate (it may skip the record), the converter checks it.
func TestDatumCheckedBeforeExtraColumnsAndPredicates(t *testing.T) {
	predicated, err := transform.New(
		[]configs.TransformSpec{{Alias: "ins", Class: "InsertField$Value", Props: map[string]string{"topic.field": "t"}, Predicate: "p"}},
		[]configs.PredicateSpec{{Alias: "p", Class: "TopicNameMatches", Props: map[string]string{"pattern": ".*"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		chain         *transform.Chain
		extra         []string
		wantUnchecked bool
	}{
		{"chain of three", benchChain(t), nil, true},
		{"extra columns", benchChain(t), []string{"offset"}, false},
		{"first transform behind a predicate", predicated, nil, false},
		{"no transforms", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counting := &countingAvro{}
			c := benchConnector(t, tc.chain, func(a *convert.Avro) convert.Converter { counting.Avro = a; return counting }, tc.extra)
			kr := benchRecords(t, "100B")[0]
			var tr transform.Record
			if _, err := c.decode(context.Background(), kr, &tr); err != nil {
				t.Fatal(err)
			}
			truncated := *kr
			truncated.Value = kr.Value[:len(kr.Value)-1]
			if _, err := c.decode(context.Background(), &truncated, &tr); !errors.Is(err, schema.ErrCorruptDatum) {
				t.Errorf("truncated datum: err = %v, want a corrupt datum", err)
			}
			if got := counting.unchecked > 0; got != tc.wantUnchecked {
				t.Errorf("datums left to the chain's scan: %d; want any: %v", counting.unchecked, tc.wantUnchecked)
			}
		})
	}
}
