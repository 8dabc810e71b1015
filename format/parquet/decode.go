package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// decoder reads one Avro type from binary and appends it to an Arrow
// builder. A datum takes two passes: check reads every value, rejects
// malformed bytes and notes values the column cannot take, appending
// nothing; put then appends values check accepted, and so never fails
// half-way through a row and leaves the builders of a record uneven.
// Both passes are far cheaper than building goavro's native values.
type decoder interface {
	// check reads one value from b and returns the rest of b. An error
	// means malformed bytes; a value the column cannot take is noted in
	// st (the first one wins) and reading goes on, because a malformed
	// datum is reported as such even when an earlier value was also bad.
	check(st *state, b []byte) ([]byte, error)
	// put appends the value at the start of b, which check accepted, to
	// bld and returns the rest of b.
	put(st *state, bld array.Builder, b []byte) []byte
}

// fieldError is malformed bytes at a field; WriteDatum wraps it in a
// *schema.DatumError, so the record counts as corrupt.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return "field " + e.path + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

func corrupt(path string, err error) error { return &fieldError{path: path, err: err} }

func corruptf(path, format string, args ...any) error {
	return corrupt(path, fmt.Errorf(format, args...))
}

// errShort: the datum ends inside a value.
var errShort = errors.New("datum ends early")

// state is what one datum's two passes share. A Writer keeps one and
// reuses its slices, so a datum allocates nothing for them.
type state struct {
	datum []byte
	verr  *format.ValueError // first value a column cannot take
	ents  []mapEntry         // map entries, each map's run sorted by key
	open  []mapEntry         // entries of the maps being read, innermost last
	maps  []mapSpan          // maps in the order check met them
	big   big.Int            // wide decimals: the unscaled value
	pow   big.Int            // and a scratch power of two
}

// mapEntry locates one map key and its value as offsets into the datum
// (not slices: the caller's buffer must not be kept alive).
type mapEntry struct{ key, keyEnd, val int }

// mapSpan is one map value: where it starts and ends in the datum and
// its entries, st.ents[lo:hi].
type mapSpan struct{ start, end, lo, hi int }

func (st *state) reset(datum []byte) {
	st.datum, st.verr = datum, nil
	st.ents, st.open, st.maps = st.ents[:0], st.open[:0], st.maps[:0]
}

func (st *state) valueErr(path, msg string) {
	if st.verr == nil {
		st.verr = &format.ValueError{Path: path, Msg: msg}
	}
}

func (st *state) offset(b []byte) int { return len(st.datum) - len(b) }

// findMap returns the map check met at offset start (st.maps is in
// offset order: check reads the datum front to back).
func (st *state) findMap(start int) mapSpan {
	lo, hi := 0, len(st.maps)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if st.maps[mid].start < start {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return st.maps[lo]
}

// The primitive readers follow schema's scan, which the sink validates
// datums with, and goavro: a varint longer than 64 bits, an int outside
// 32 bits, a boolean byte other than 0 or 1 are malformed.

func readLong(b []byte) (int64, []byte, error) {
	u, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("bad varint: %w", errShort)
	}
	return int64(u>>1) ^ -int64(u&1), b[n:], nil
}

func readInt(b []byte) (int32, []byte, error) {
	v, rest, err := readLong(b)
	if err != nil {
		return 0, nil, err
	}
	if len(b)-len(rest) > 5 || v != int64(int32(v)) {
		return 0, nil, fmt.Errorf("int %d does not fit in 32 bits", v)
	}
	return int32(v), rest, nil
}

func readBytes(b []byte) ([]byte, []byte, error) {
	size, b, err := readLong(b)
	if err != nil {
		return nil, nil, err
	}
	if size < 0 || size > int64(len(b)) {
		return nil, nil, fmt.Errorf("length %d with %d bytes left: %w", size, len(b), errShort)
	}
	return b[:size], b[size:], nil
}

func readFixed(b []byte, n int) ([]byte, []byte, error) {
	if n > len(b) {
		return nil, nil, errShort
	}
	return b[:n], b[n:], nil
}

// readIndex reads a union branch or enum symbol index below n.
func readIndex(b []byte, n int, what string) (int, []byte, error) {
	i, rest, err := readLong(b)
	if err != nil {
		return 0, nil, err
	}
	if i < 0 || i >= int64(n) {
		return 0, nil, fmt.Errorf("%s index %d out of range (%d)", what, i, n)
	}
	return int(i), rest, nil
}

type nullDec struct{}

func (nullDec) check(_ *state, b []byte) ([]byte, error)         { return b, nil }
func (nullDec) put(_ *state, bld array.Builder, b []byte) []byte { bld.AppendNull(); return b }

type boolDec struct{ path string }

func (d boolDec) check(_ *state, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, corrupt(d.path, errShort)
	}
	if b[0] > 1 {
		return nil, corruptf(d.path, "boolean byte %d is neither 0 nor 1", b[0])
	}
	return b[1:], nil
}

func (boolDec) put(_ *state, bld array.Builder, b []byte) []byte {
	bld.(*array.BooleanBuilder).Append(b[0] == 1)
	return b[1:]
}

// intDec also takes time-millis: goavro's time.Duration of v
// milliseconds converted back is v.
type intDec struct{ path string }

func (d intDec) check(_ *state, b []byte) ([]byte, error) {
	_, rest, err := readInt(b)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	return rest, nil
}

func (intDec) put(_ *state, bld array.Builder, b []byte) []byte {
	v, rest, _ := readInt(b)
	bld.(*array.Int32Builder).Append(v)
	return rest
}

// dateDec: goavro's epoch.AddDate(0, 0, v) floored back to days is v.
type dateDec struct{ intDec }

func (dateDec) put(_ *state, bld array.Builder, b []byte) []byte {
	v, rest, _ := readInt(b)
	bld.(*array.Date32Builder).Append(arrow.Date32(v))
	return rest
}

type longDec struct{ path string }

func (d longDec) check(_ *state, b []byte) ([]byte, error) {
	_, rest, err := readLong(b)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	return rest, nil
}

func (longDec) put(_ *state, bld array.Builder, b []byte) []byte {
	v, rest, _ := readLong(b)
	bld.(*array.Int64Builder).Append(v)
	return rest
}

// localTimestampDec: local-timestamp-* are plain longs to goavro.
type localTimestampDec struct{ longDec }

func (localTimestampDec) put(_ *state, bld array.Builder, b []byte) []byte {
	v, rest, _ := readLong(b)
	bld.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	return rest
}

// timeMicrosDec goes through time.Duration as goavro does, so a value
// past ±292 years wraps exactly as it did.
type timeMicrosDec struct{ longDec }

func (timeMicrosDec) put(_ *state, bld array.Builder, b []byte) []byte {
	v, rest, _ := readLong(b)
	bld.(*array.Int64Builder).Append((time.Duration(v) * time.Microsecond).Microseconds())
	return rest
}

// INT96 holds nanoseconds since the epoch in an int64 first.
var (
	minNanos = time.Unix(0, -1<<63).UTC()
	maxNanos = time.Unix(0, 1<<63-1).UTC()
)

// timestampDec reads timestamp-millis (micros false) or -micros and
// writes unit: the instant is built as goavro builds it, then converted.
type timestampDec struct {
	longDec
	micros bool
	unit   arrow.TimeUnit
}

func (d timestampDec) instant(v int64) time.Time {
	if d.micros {
		s := v / 1e6
		return time.Unix(s, (v-s*1e6)*1e3).UTC()
	}
	s := v / 1e3
	return time.Unix(s, (v-s*1e3)*1e6).UTC()
}

func (d timestampDec) check(st *state, b []byte) ([]byte, error) {
	v, rest, err := readLong(b)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	if d.unit != arrow.Nanosecond {
		return rest, nil
	}
	if t := d.instant(v); t.Before(minNanos) || t.After(maxNanos) {
		st.valueErr(d.path, fmt.Sprintf("timestamp %s outside the INT96 range %s..%s (use int64 timestamps)",
			t.Format(time.RFC3339Nano), minNanos.Format(time.RFC3339), maxNanos.Format(time.RFC3339)))
	}
	return rest, nil
}

func (d timestampDec) put(_ *state, bld array.Builder, b []byte) []byte {
	v, rest, _ := readLong(b)
	t := d.instant(v)
	var ts int64
	switch d.unit {
	case arrow.Millisecond:
		ts = t.UnixMilli()
	case arrow.Microsecond:
		ts = t.UnixMicro()
	default:
		ts = t.UnixNano()
	}
	bld.(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
	return rest
}

type floatDec struct{ path string }

func (d floatDec) check(_ *state, b []byte) ([]byte, error) {
	_, rest, err := readFixed(b, 4)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	return rest, nil
}

func (floatDec) put(_ *state, bld array.Builder, b []byte) []byte {
	bld.(*array.Float32Builder).Append(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	return b[4:]
}

type doubleDec struct{ path string }

func (d doubleDec) check(_ *state, b []byte) ([]byte, error) {
	_, rest, err := readFixed(b, 8)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	return rest, nil
}

func (doubleDec) put(_ *state, bld array.Builder, b []byte) []byte {
	bld.(*array.Float64Builder).Append(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	return b[8:]
}

// bytesDec reads bytes into a binary column, or (str) a string or uuid
// into a UTF8 one; like goavro it does not check UTF-8.
type bytesDec struct {
	path string
	str  bool
}

func (d bytesDec) check(_ *state, b []byte) ([]byte, error) {
	_, rest, err := readBytes(b)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	return rest, nil
}

func (d bytesDec) put(_ *state, bld array.Builder, b []byte) []byte {
	v, rest, _ := readBytes(b)
	if d.str {
		bld.(*array.StringBuilder).BinaryBuilder.Append(v)
	} else {
		bld.(*array.BinaryBuilder).Append(v)
	}
	return rest
}

type enumDec struct {
	path    string
	symbols [][]byte
}

func newEnumDec(path string, symbols []string) enumDec {
	d := enumDec{path: path, symbols: make([][]byte, len(symbols))}
	for i, s := range symbols {
		d.symbols[i] = []byte(s)
	}
	return d
}

func (d enumDec) check(_ *state, b []byte) ([]byte, error) {
	_, rest, err := readIndex(b, len(d.symbols), "enum")
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	return rest, nil
}

func (d enumDec) put(_ *state, bld array.Builder, b []byte) []byte {
	i, rest, _ := readIndex(b, len(d.symbols), "enum")
	bld.(*array.StringBuilder).BinaryBuilder.Append(d.symbols[i])
	return rest
}

type fixedDec struct {
	path string
	size int
}

func (d fixedDec) check(_ *state, b []byte) ([]byte, error) {
	_, rest, err := readFixed(b, d.size)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	return rest, nil
}

func (d fixedDec) put(_ *state, bld array.Builder, b []byte) []byte {
	bld.(*array.FixedSizeBinaryBuilder).Append(b[:d.size])
	return b[d.size:]
}

// decimalDec reads a decimal on bytes (size 0) or fixed: a big-endian
// two's-complement unscaled integer.
type decimalDec struct {
	path             string
	size             int
	precision, scale int
	wide             bool     // decimal256
	limit            *big.Int // 10^precision: |unscaled| must be below
	limit64          uint64   // the same when it fits, else 0 (any int64 fits)
}

func newDecimalDec(path string, n *avsc.Node, wide bool) decimalDec {
	d := decimalDec{path: path, precision: n.Precision, scale: n.Scale, wide: wide,
		limit: new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n.Precision)), nil)}
	if n.Kind == avsc.Fixed {
		d.size = n.Size
	}
	if d.limit.IsUint64() && n.Precision < 19 {
		d.limit64 = d.limit.Uint64()
	}
	return d
}

func (d decimalDec) raw(b []byte) ([]byte, []byte, error) {
	if d.size > 0 {
		return readFixed(b, d.size)
	}
	return readBytes(b)
}

// small returns the unscaled value of raw when it has at most 8 bytes.
func small(raw []byte) (int64, bool) {
	if len(raw) > 8 {
		return 0, false
	}
	var v int64
	for _, c := range raw {
		v = v<<8 | int64(c)
	}
	if n := len(raw); n > 0 && n < 8 && raw[0]&0x80 != 0 {
		v -= 1 << (8 * n) // sign-extend
	}
	return v, true
}

// unscaled sets z to the two's-complement integer raw.
func unscaled(z, scratch *big.Int, raw []byte) *big.Int {
	z.SetBytes(raw)
	if len(raw) > 0 && raw[0]&0x80 != 0 {
		z.Sub(z, scratch.Lsh(scratch.SetInt64(1), uint(len(raw))*8))
	}
	return z
}

func (d decimalDec) check(st *state, b []byte) ([]byte, error) {
	raw, rest, err := d.raw(b)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	if v, ok := small(raw); ok && (d.limit64 == 0 || absU64(v) < d.limit64) {
		return rest, nil
	}
	u := unscaled(&st.big, &st.pow, raw)
	if u.CmpAbs(d.limit) >= 0 {
		st.valueErr(d.path, fmt.Sprintf("decimal %s has more than %d digits",
			avsc.DecimalString(u, d.scale), d.precision))
	}
	return rest, nil
}

func absU64(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1 // also right for MinInt64
	}
	return uint64(v)
}

func (d decimalDec) put(st *state, bld array.Builder, b []byte) []byte {
	raw, rest, _ := d.raw(b)
	if v, ok := small(raw); ok {
		if d.wide {
			bld.(*array.Decimal256Builder).Append(decimal256.FromI64(v))
		} else {
			bld.(*array.Decimal128Builder).Append(decimal128.FromI64(v))
		}
		return rest
	}
	u := unscaled(&st.big, &st.pow, raw)
	if d.wide {
		bld.(*array.Decimal256Builder).Append(decimal256.FromBigInt(u))
	} else {
		bld.(*array.Decimal128Builder).Append(decimal128.FromBigInt(u))
	}
	return rest
}

// optionalDec reads ["null", T] or [T, "null"].
type optionalDec struct {
	path      string
	nullIndex int
	inner     decoder
}

func (d optionalDec) check(st *state, b []byte) ([]byte, error) {
	i, rest, err := readIndex(b, 2, "union")
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	if i == d.nullIndex {
		return rest, nil
	}
	return d.inner.check(st, rest)
}

func (d optionalDec) put(st *state, bld array.Builder, b []byte) []byte {
	i, rest, _ := readIndex(b, 2, "union")
	if i == d.nullIndex {
		bld.AppendNull()
		return rest
	}
	return d.inner.put(st, bld, rest)
}

// unwrapDec reads a union of one branch as that branch.
type unwrapDec struct {
	path  string
	inner decoder
}

func (d unwrapDec) check(st *state, b []byte) ([]byte, error) {
	_, rest, err := readIndex(b, 1, "union")
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	return d.inner.check(st, rest)
}

func (d unwrapDec) put(st *state, bld array.Builder, b []byte) []byte {
	_, rest, _ := readIndex(b, 1, "union")
	return d.inner.put(st, bld, rest)
}

type structDec struct{ fields []decoder }

func (d structDec) check(st *state, b []byte) ([]byte, error) {
	var err error
	for _, f := range d.fields {
		if b, err = f.check(st, b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (d structDec) put(st *state, bld array.Builder, b []byte) []byte {
	sb := bld.(*array.StructBuilder)
	sb.Append(true)
	for i, f := range d.fields {
		b = f.put(st, sb.FieldBuilder(i), b)
	}
	return b
}

// Block limits, as schema's scan applies them before goavro sizes an
// array from a block count: a block cannot hold more items than bytes
// remain, unless the items encode to zero bytes; those are capped.
const maxZeroWidthItems = 1 << 16

// readBlockCount reads an array or map block header: the item count
// (0 ends the value) and, when the count is negative, a byte size.
func readBlockCount(b []byte, zeroWidth bool) (int64, []byte, error) {
	count, b, err := readLong(b)
	if err != nil || count == 0 {
		return 0, b, err
	}
	if count < 0 {
		if count == math.MinInt64 {
			return 0, nil, fmt.Errorf("block count %d", count)
		}
		count = -count
		if _, b, err = readLong(b); err != nil {
			return 0, nil, err
		}
	}
	if limit := blockLimit(zeroWidth, len(b)); count > limit {
		return 0, nil, fmt.Errorf("block of %d items cannot fit (limit %d)", count, limit)
	}
	return count, b, nil
}

func blockLimit(zeroWidth bool, remaining int) int64 {
	if zeroWidth {
		return maxZeroWidthItems
	}
	return int64(remaining)
}

type listDec struct {
	path      string
	elem      decoder
	zeroWidth bool // items may encode to no bytes
}

func (d listDec) check(st *state, b []byte) ([]byte, error) {
	for {
		count, rest, err := readBlockCount(b, d.zeroWidth)
		if err != nil {
			return nil, corrupt(d.path, err)
		}
		if b = rest; count == 0 {
			return b, nil
		}
		for range count {
			if b, err = d.elem.check(st, b); err != nil {
				return nil, err
			}
		}
	}
}

func (d listDec) put(st *state, bld array.Builder, b []byte) []byte {
	lb := bld.(*array.ListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder()
	for {
		count, rest, _ := readBlockCount(b, d.zeroWidth)
		if b = rest; count == 0 {
			return b
		}
		for range count {
			b = d.elem.put(st, vb, b)
		}
	}
}

// mapDec writes a map's entries sorted by key, so files are
// deterministic. check records each map's entries and sorts them; put
// finds them again by the map's offset, as maps are met in offset order.
type mapDec struct {
	path  string
	value decoder
}

func (d mapDec) check(st *state, b []byte) ([]byte, error) {
	span := mapSpan{start: st.offset(b)}
	st.maps = append(st.maps, mapSpan{}) // reserve: inner maps follow it
	slot, first := len(st.maps)-1, len(st.open)
	for {
		count, rest, err := readBlockCount(b, false)
		if err != nil {
			return nil, corrupt(d.path, err)
		}
		if b = rest; count == 0 {
			break
		}
		for range count {
			if b, err = d.entry(st, b); err != nil {
				return nil, err
			}
		}
	}
	// Inner maps have moved their entries on: this map's are contiguous.
	span.end, span.lo = st.offset(b), len(st.ents)
	st.ents = append(st.ents, st.open[first:]...)
	st.open, span.hi = st.open[:first], len(st.ents)
	st.maps[slot] = span
	return b, d.sortKeys(st, st.ents[span.lo:span.hi])
}

func (d mapDec) entry(st *state, b []byte) ([]byte, error) {
	key, rest, err := readBytes(b)
	if err != nil {
		return nil, corrupt(d.path, err)
	}
	e := mapEntry{key: st.offset(rest) - len(key), keyEnd: st.offset(rest), val: st.offset(rest)}
	st.open = append(st.open, e)
	return d.value.check(st, rest)
}

// sortKeys orders ents by key; goavro rejects a key given twice.
func (d mapDec) sortKeys(st *state, ents []mapEntry) error {
	key := func(e mapEntry) []byte { return st.datum[e.key:e.keyEnd] }
	slices.SortFunc(ents, func(a, b mapEntry) int { return bytes.Compare(key(a), key(b)) })
	for i := 1; i < len(ents); i++ {
		if bytes.Equal(key(ents[i-1]), key(ents[i])) {
			return corruptf(d.path, "duplicate map key %q", key(ents[i]))
		}
	}
	return nil
}

func (d mapDec) put(st *state, bld array.Builder, b []byte) []byte {
	span := st.findMap(st.offset(b))
	mb := bld.(*array.MapBuilder)
	mb.Append(true)
	kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder()
	for _, e := range st.ents[span.lo:span.hi] {
		kb.BinaryBuilder.Append(st.datum[e.key:e.keyEnd])
		d.value.put(st, ib, st.datum[e.val:])
	}
	return st.datum[span.end:]
}
