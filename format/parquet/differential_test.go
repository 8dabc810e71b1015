package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// richSchema has every mapped type, both nullable-union orders,
// single-branch unions, nesting through records, arrays and maps,
// zero-width array items and decimals on every path (int64 and big,
// bytes and fixed, 128 and 256 bits).
const richSchema = `{"type":"record","name":"Rich","namespace":"d","fields":[
 {"name":"n","type":"null"},
 {"name":"b","type":"boolean"},
 {"name":"i","type":"int"},
 {"name":"l","type":"long"},
 {"name":"f","type":"float"},
 {"name":"d","type":"double"},
 {"name":"s","type":"string"},
 {"name":"by","type":"bytes"},
 {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},
 {"name":"fx","type":{"type":"fixed","name":"F3","size":3}},
 {"name":"dt","type":{"type":"int","logicalType":"date"}},
 {"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
 {"name":"tsm","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"tsu","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"ltm","type":{"type":"long","logicalType":"local-timestamp-millis"}},
 {"name":"ltu","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"dec18","type":{"type":"bytes","logicalType":"decimal","precision":18,"scale":4}},
 {"name":"dec19","type":{"type":"bytes","logicalType":"decimal","precision":19,"scale":0}},
 {"name":"dec38","type":{"type":"bytes","logicalType":"decimal","precision":38,"scale":10}},
 {"name":"dec60","type":{"type":"bytes","logicalType":"decimal","precision":60,"scale":5}},
 {"name":"decf","type":{"type":"fixed","name":"D5","size":5,"logicalType":"decimal","precision":12,"scale":3}},
 {"name":"decf16","type":{"type":"fixed","name":"D16","size":16,"logicalType":"decimal","precision":38,"scale":0}},
 {"name":"decf32","type":{"type":"fixed","name":"D32","size":32,"logicalType":"decimal","precision":76,"scale":2}},
 {"name":"id","type":{"type":"string","logicalType":"uuid"}},
 {"name":"os","type":["null","string"]},
 {"name":"oi","type":["int","null"]},
 {"name":"one","type":["long"]},
 {"name":"onenull","type":["null"]},
 {"name":"otsm","type":["null",{"type":"long","logicalType":"timestamp-millis"}]},
 {"name":"odec","type":[{"type":"bytes","logicalType":"decimal","precision":4,"scale":1},"null"]},
 {"name":"oe","type":["null","E"]},
 {"name":"rec","type":{"type":"record","name":"Inner","fields":[
   {"name":"a","type":"int"},
   {"name":"tags","type":{"type":"array","items":"string"}},
   {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},
   {"name":"m","type":{"type":"map","values":["null","double"]}}]}},
 {"name":"orec","type":["null","Inner"]},
 {"name":"arr","type":{"type":"array","items":["null","long"]}},
 {"name":"anull","type":{"type":"array","items":"null"}},
 {"name":"arecnull","type":{"type":"array","items":{"type":"record","name":"Nulls","fields":[{"name":"z","type":"null"}]}}},
 {"name":"arec","type":{"type":"array","items":"Inner"}},
 {"name":"aarr","type":{"type":"array","items":{"type":"array","items":"int"}}},
 {"name":"m","type":{"type":"map","values":"int"}},
 {"name":"mrec","type":{"type":"map","values":"Inner"}},
 {"name":"mm","type":{"type":"map","values":{"type":"map","values":"E"}}},
 {"name":"omap","type":["null",{"type":"map","values":"F3"}]},
 {"name":"aopt","type":{"type":"array","items":["null","Inner"]}}
]}`

// oracle is the writer's old path: goavro native values, then column.
type oracle struct {
	s    *schema.Schema
	cols []column
	rb   *array.RecordBuilder
}

func newOracle(t testing.TB, s *schema.Schema, timestamps string) *oracle {
	t.Helper()
	root, err := avsc.ParseStrict(s.Text)
	if err != nil {
		t.Fatal(err)
	}
	as, cols, err := nativeArrowSchema(root, timestamps)
	if err != nil {
		t.Fatal(err)
	}
	return &oracle{s: s, cols: cols, rb: array.NewRecordBuilder(memory.NewGoAllocator(), as)}
}

// write is the old WriteDatum.
func (o *oracle) write(datum []byte) error {
	native, err := o.s.Native(datum)
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	rec, ok := native.(map[string]any)
	if !ok {
		return fmt.Errorf("parquet: datum decoded to %T, not a record", native)
	}
	for i, c := range o.cols {
		name := o.rb.Schema().Field(i).Name
		if err := c.check(rec[name], name); err != nil {
			return fmt.Errorf("parquet: schema %d: %w", o.s.ID, err)
		}
	}
	for i, c := range o.cols {
		c.put(o.rb.Field(i), rec[o.rb.Schema().Field(i).Name])
	}
	return nil
}

// outcome classifies a WriteDatum result: "ok", "corrupt", or the
// ValueError (its message only outside maps, whose entries the old
// path checked in random order).
func outcome(err error) string {
	var ve *format.ValueError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, schema.ErrCorruptDatum):
		return "corrupt"
	case errors.As(err, &ve) && strings.Contains(ve.Path, "{}"):
		return "value " + ve.Path
	case errors.As(err, &ve):
		return "value " + ve.Path + ": " + ve.Msg
	}
	return "other " + err.Error()
}

// pair writes the same datums through the Writer and the oracle.
type pair struct {
	w *Writer
	o *oracle
}

func newPair(t testing.TB, text, timestamps string) pair {
	t.Helper()
	s := mustSchema(t, text)
	w, err := NewWriter(io.Discard, s, Options{Timestamps: timestamps, RowGroupBytes: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	w.batchBytes = math.MaxInt // keep every row staged for compare
	p := pair{w: w, o: newOracle(t, s, timestamps)}
	if !p.w.rb.Schema().Equal(p.o.rb.Schema()) {
		t.Fatalf("arrow schema\n%s\nwant (old mapping)\n%s", p.w.rb.Schema(), p.o.rb.Schema())
	}
	return p
}

// write compares the outcomes of one datum; it reports whether it was
// accepted.
func (p pair) write(t testing.TB, datum []byte) bool {
	t.Helper()
	got, want := outcome(p.w.WriteDatum(datum)), outcome(p.o.write(datum))
	if got != want {
		t.Fatalf("datum %x: got %s, old path %s", datum, got, want)
	}
	return got == "ok"
}

// compare checks that both builders hold equal records (NaNs equal,
// floats otherwise exact) and releases them.
func (p pair) compare(t testing.TB) {
	t.Helper()
	got, want := p.w.rb.NewRecordBatch(), p.o.rb.NewRecordBatch()
	defer got.Release()
	defer want.Release()
	if got.NumRows() != want.NumRows() {
		t.Fatalf("%d rows, old path %d", got.NumRows(), want.NumRows())
	}
	if !array.RecordApproxEqual(got, want, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
		for i := range got.Columns() {
			if !array.ApproxEqual(got.Column(i), want.Column(i), array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
				t.Errorf("column %s differs:\n%v\nold path:\n%v", got.ColumnName(i), got.Column(i), want.Column(i))
			}
		}
		t.FailNow()
	}
}

func (p pair) close() { _ = p.w.Close(); p.o.rb.Release() }

// TestDifferential: random datums of richSchema with edge values, and
// corrupted copies of them, give the same outcome and the same Arrow
// record through WriteDatum as through the old goavro-native path.
func TestDifferential(t *testing.T) {
	root, err := avsc.ParseStrict(richSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range []string{TimestampsInt96, TimestampsInt64} {
		t.Run(ts, func(t *testing.T) {
			p := newPair(t, richSchema, ts)
			defer p.close()
			g := &gen{r: rand.New(rand.NewPCG(1, uint64(len(ts))))}
			accepted, rejected := 0, 0
			for range 3000 {
				datum := g.datum(root)
				if p.write(t, datum) {
					accepted++
				} else {
					rejected++
				}
				for range 3 {
					if p.write(t, g.mutate(datum)) {
						accepted++
					} else {
						rejected++
					}
				}
			}
			p.compare(t)
			t.Logf("%d datums accepted, %d rejected", accepted, rejected)
			// Both kinds must be exercised for the test to mean anything.
			if accepted < 1000 || rejected < 1000 {
				t.Fatalf("%d accepted, %d rejected", accepted, rejected)
			}
		})
	}
}

// TestBatchesWriteTheSameFile: rows encoded a few at a time into one row
// group (encodeBatch) read back the same as rows encoded all at once,
// in the same row groups, for richSchema's random datums.
func TestBatchesWriteTheSameFile(t *testing.T) {
	root, err := avsc.ParseStrict(richSchema)
	if err != nil {
		t.Fatal(err)
	}
	s := mustSchema(t, richSchema)
	write := func(batchBytes int) (data []byte, batches int) {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, s, Options{Timestamps: TimestampsInt64})
		if err != nil {
			t.Fatal(err)
		}
		w.batchBytes = batchBytes
		g := &gen{r: rand.New(rand.NewPCG(7, 7))}
		for range 3000 {
			// A rejected datum leaves nothing; an accepted one that
			// fills the batch leaves it encoded and none staged.
			if err := w.WriteDatum(g.datum(root)); err == nil && w.rows == 0 {
				batches++
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), batches
	}
	whole, _ := write(math.MaxInt)
	wantSchema, want := dump(t, whole)
	rw := readMeta(t, whole)
	defer rw.Close()
	// 16 KiB: about a row a batch (a row's builders start near 10 KiB);
	// 64 KiB: tens of rows a batch.
	for _, batchBytes := range []int{16 << 10, 64 << 10} {
		batched, n := write(batchBytes)
		if n < 3 || rw.NumRows() < 1000 {
			t.Fatalf("%d batches, %d rows: the test would not mean anything", n, rw.NumRows())
		}
		gotSchema, got := dump(t, batched)
		if gotSchema != wantSchema || got != want {
			t.Fatalf("a file written in %d batches of %d bytes differs from one written at once", n, batchBytes)
		}
		r := readMeta(t, batched)
		if r.NumRowGroups() != 1 || rw.NumRowGroups() != 1 || r.NumRows() != rw.NumRows() {
			t.Fatalf("row groups %d and %d, rows %d and %d", r.NumRowGroups(), rw.NumRowGroups(), r.NumRows(), rw.NumRows())
		}
		r.Close()
		t.Logf("%d rows in %d batches of %d bytes: same rows", rw.NumRows(), n, batchBytes)
	}
}

// FuzzDifferential: any bytes give the same outcome and record through
// WriteDatum as through the old path.
func FuzzDifferential(f *testing.F) {
	root, err := avsc.ParseStrict(richSchema)
	if err != nil {
		f.Fatal(err)
	}
	g := &gen{r: rand.New(rand.NewPCG(3, 4))}
	for range 20 {
		f.Add(g.datum(root))
	}
	p := newPair(f, richSchema, TimestampsInt96)
	f.Fuzz(func(t *testing.T, datum []byte) {
		if p.write(t, datum) {
			p.compare(t)
		}
	})
}

// gen writes random valid Avro binary for a schema node, favouring
// edge values. Wild datums also hold values a column cannot take.
type gen struct {
	r    *rand.Rand
	wild bool
}

// datum writes a record of root; one in four is wild.
func (g *gen) datum(root *avsc.Node) []byte {
	g.wild = g.pick(4)
	return g.value(root, nil)
}

// timestamp is an instant in ticks per second, within INT96's range
// unless the datum is wild.
func (g *gen) timestamp(perSecond int64) int64 {
	if g.wild {
		return g.int64()
	}
	limit := math.MaxInt64 / (1e9 / perSecond) // INT96 holds nanoseconds
	edges := []int64{0, -1, limit, -limit, 1_700_000_000 * perSecond}
	if g.pick(2) {
		return edges[g.r.IntN(len(edges))]
	}
	return g.r.Int64N(2*limit) - limit
}

func putLong(b []byte, v int64) []byte { return binary.AppendUvarint(b, uint64(v<<1^v>>63)) }

func putBytes(b, v []byte) []byte { return append(putLong(b, int64(len(v))), v...) }

func (g *gen) pick(n int) bool { return g.r.IntN(n) == 0 }

func (g *gen) int32() int32 {
	edges := []int32{0, -1, 1, math.MinInt32, math.MaxInt32, -719162, 2932896}
	if g.pick(2) {
		return edges[g.r.IntN(len(edges))]
	}
	if g.pick(2) {
		return int32(g.r.Uint32())
	}
	return int32(g.r.IntN(200_000) - 100_000)
}

// int64 favours the edges of 64 bits and of the INT96 range in
// milliseconds and microseconds.
func (g *gen) int64() int64 {
	edges := []int64{0, -1, 1, math.MinInt64, math.MaxInt64,
		9223372036854, 9223372036855, -9223372036854, -9223372036855,
		9223372036854775, 9223372036854776, -9223372036854775, -9223372036854776,
		1_700_000_000_000, 1_700_000_000_000_123, -62135596800000}
	if g.pick(2) {
		return edges[g.r.IntN(len(edges))]
	}
	if g.pick(2) {
		return int64(g.r.Uint64())
	}
	return g.r.Int64N(1<<41) - 1<<40
}

func (g *gen) bytes(max int) []byte {
	b := make([]byte, g.r.IntN(max+1))
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	if g.pick(3) {
		return []byte(string([]rune("héllo, 世界 🚀")[:g.r.IntN(12)]))
	}
	return b
}

func (g *gen) float(bits int) []byte {
	specials := []float64{0, math.Copysign(0, -1), 1.5, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64}
	v := specials[g.r.IntN(len(specials))]
	if bits == 32 {
		u := math.Float32bits(float32(v))
		if g.pick(2) {
			u = g.r.Uint32()
		}
		return binary.LittleEndian.AppendUint32(nil, u)
	}
	u := math.Float64bits(v)
	if g.pick(2) {
		u = g.r.Uint64()
	}
	return binary.LittleEndian.AppendUint64(nil, u)
}

// decimal is an unscaled value near 10^precision (just inside or just
// outside), small, or random bytes, as two's complement of size bytes
// (0: minimal, perhaps with a redundant sign byte).
func (g *gen) decimal(n *avsc.Node) []byte {
	var v *big.Int
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n.Precision)), nil)
	kinds := 3
	if g.wild {
		kinds = 4
	}
	switch g.r.IntN(kinds) {
	case 0:
		v = new(big.Int).Sub(limit, big.NewInt(1))
		if g.wild {
			v.Add(v, big.NewInt(g.r.Int64N(2)))
		}
	case 1:
		v = big.NewInt(g.r.Int64N(2_000_000) - 1_000_000)
	case 2:
		raw := make([]byte, len(limit.Bytes()))
		for i := range raw {
			raw[i] = byte(g.r.IntN(256))
		}
		v = new(big.Int).Mod(new(big.Int).SetBytes(raw), limit)
	default:
		return g.rawDecimal(n)
	}
	if g.pick(2) {
		v.Neg(v)
	}
	return twos(v, n.Size, g.pick(4))
}

func (g *gen) rawDecimal(n *avsc.Node) []byte {
	if n.Kind == avsc.Fixed {
		b := make([]byte, n.Size)
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return b
	}
	return g.bytes(n.Precision/2 + 3)
}

// twos encodes v big-endian in two's complement: in size bytes (if it
// fits, else the low bytes), or minimally, with pad an extra sign byte.
func twos(v *big.Int, size int, pad bool) []byte {
	width := v.BitLen()/8 + 1
	if size > 0 {
		width = size
	}
	if pad {
		width++
	}
	m := new(big.Int).Lsh(big.NewInt(1), uint(width)*8)
	u := new(big.Int).Mod(v, m) // v mod 2^(8·width), non-negative
	out := make([]byte, width)
	u.FillBytes(out)
	if size > 0 {
		return out[len(out)-size:]
	}
	return out
}

// blocks writes n items in one to three blocks, some with a negative
// count and a byte size.
func (g *gen) blocks(b []byte, n int, item func([]byte) []byte) []byte {
	for n > 0 {
		k := 1 + g.r.IntN(n)
		var body []byte
		for range k {
			body = item(body)
		}
		if g.pick(3) {
			b = putLong(putLong(b, -int64(k)), int64(len(body)))
		} else {
			b = putLong(b, int64(k))
		}
		b = append(b, body...)
		n -= k
	}
	return putLong(b, 0)
}

var mapKeys = []string{"", "a", "b", "ab", "ü", "Z", "key-long-enough", "\x00"}

func (g *gen) value(n *avsc.Node, b []byte) []byte {
	switch n.Logical {
	case avsc.TimestampMillis:
		return putLong(b, g.timestamp(1e3))
	case avsc.TimestampMicros:
		return putLong(b, g.timestamp(1e6))
	case avsc.Decimal:
		raw := g.decimal(n)
		if n.Kind == avsc.Fixed {
			return append(b, raw...)
		}
		return putBytes(b, raw)
	case avsc.UUID:
		return putBytes(b, []byte("123e4567-e89b-12d3-a456-426614174000"))
	}
	switch n.Kind {
	case avsc.Null:
		return b
	case avsc.Boolean:
		return append(b, byte(g.r.IntN(2)))
	case avsc.Int:
		return putLong(b, int64(g.int32()))
	case avsc.Long:
		return putLong(b, g.int64())
	case avsc.Float:
		return append(b, g.float(32)...)
	case avsc.Double:
		return append(b, g.float(64)...)
	case avsc.Bytes, avsc.String:
		return putBytes(b, g.bytes(12))
	case avsc.Enum:
		return putLong(b, int64(g.r.IntN(len(n.Symbols))))
	case avsc.Fixed:
		return append(b, g.rawDecimal(n)...) // n.Size random bytes
	case avsc.Record:
		for _, f := range n.Fields {
			b = g.value(f.Type, b)
		}
		return b
	case avsc.Array:
		return g.blocks(b, g.r.IntN(5), func(b []byte) []byte { return g.value(n.Items, b) })
	case avsc.Map:
		return g.mapValue(n, b)
	case avsc.Union:
		i := g.r.IntN(len(n.Branches))
		return g.value(n.Branches[i], putLong(b, int64(i)))
	}
	panic(n.Kind)
}

// mapValue writes distinct keys in random order, and now and then a
// key twice (goavro rejects that).
func (g *gen) mapValue(n *avsc.Node, b []byte) []byte {
	keys := append([]string(nil), mapKeys...)
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	keys = keys[:g.r.IntN(5)]
	if len(keys) > 1 && g.pick(20) {
		keys[len(keys)-1] = keys[0]
	}
	i := 0
	return g.blocks(b, len(keys), func(b []byte) []byte {
		b = putBytes(b, []byte(keys[i]))
		i++
		return g.value(n.Values, b)
	})
}

// mutate returns a corrupted copy: truncated, a byte changed, inserted
// or appended.
func (g *gen) mutate(datum []byte) []byte {
	d := append([]byte(nil), datum...)
	if len(d) == 0 {
		return []byte{byte(g.r.IntN(256))}
	}
	i := g.r.IntN(len(d))
	switch g.r.IntN(4) {
	case 0:
		return d[:i]
	case 1:
		d[i] = byte(g.r.IntN(256))
	case 2:
		d = append(d[:i], append([]byte{byte(g.r.IntN(256))}, d[i:]...)...)
	default:
		d = append(d, byte(g.r.IntN(256)))
	}
	return d
}
