package pqgo_experiment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// decoder reads one Avro value from b and appends its leaf values to the
// writer's batch. rep is the repetition level of its first value, def
// the definition level of its parent (optional and repeated ancestors
// that are present). The caller undoes a failed datum.
type decoder interface {
	put(w *Writer, b []byte, rep, def int) ([]byte, error)
	// null appends, to every leaf under the node, a null at rep and def:
	// the node is absent (an optional parent is null, a list is empty).
	null(w *Writer, rep, def int)
}

// span is the leaf columns [first, last) under a node.
type span struct{ first, last int }

func (s span) null(w *Writer, rep, def int) {
	for c := s.first; c < s.last; c++ {
		w.vals[c] = append(w.vals[c], parquet.NullValue().Level(rep, def, c))
	}
}

// reader reads one primitive value.
type reader func(w *Writer, b []byte) (parquet.Value, []byte, error)

var errShort = errors.New("datum ends early")

type leafDec struct {
	path string
	col  int
	read reader
}

func (d *leafDec) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	v, rest, err := d.read(w, b)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", d.path, err)
	}
	w.vals[d.col] = append(w.vals[d.col], v.Level(rep, def, d.col))
	return rest, nil
}

func (d *leafDec) null(w *Writer, rep, def int) {
	w.vals[d.col] = append(w.vals[d.col], parquet.NullValue().Level(rep, def, d.col))
}

// bytesLeaf and longLeaf are leafDec for the commonest columns without
// the call through a reader: strings (and uuids, bytes) and longs.
type bytesLeaf struct{ leafDec }

func (d *bytesLeaf) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	u, n := binary.Uvarint(b)
	size := int64(u>>1) ^ -int64(u&1)
	if n <= 0 || size < 0 || size > int64(len(b)-n) {
		return nil, fmt.Errorf("field %s: bad length: %w", d.path, errShort)
	}
	end := n + int(size)
	w.vals[d.col] = append(w.vals[d.col], parquet.ByteArrayValue(b[n:end]).Level(rep, def, d.col))
	return b[end:], nil
}

type longLeaf struct{ leafDec }

func (d *longLeaf) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	u, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, fmt.Errorf("field %s: bad varint: %w", d.path, errShort)
	}
	w.vals[d.col] = append(w.vals[d.col], parquet.Int64Value(int64(u>>1)^-int64(u&1)).Level(rep, def, d.col))
	return b[n:], nil
}

// int32Leaf (int, date), doubleLeaf and floatLeaf: the same for the
// other fixed-width columns of the workloads.
type int32Leaf struct{ leafDec }

func (d *int32Leaf) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	u, n := binary.Uvarint(b)
	v := int64(u>>1) ^ -int64(u&1)
	if n <= 0 || v != int64(int32(v)) {
		return nil, fmt.Errorf("field %s: bad int", d.path)
	}
	w.vals[d.col] = append(w.vals[d.col], parquet.Int32Value(int32(v)).Level(rep, def, d.col))
	return b[n:], nil
}

type doubleLeaf struct{ leafDec }

func (d *doubleLeaf) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("field %s: %w", d.path, errShort)
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(b))
	w.vals[d.col] = append(w.vals[d.col], parquet.DoubleValue(v).Level(rep, def, d.col))
	return b[8:], nil
}

type floatLeaf struct{ leafDec }

func (d *floatLeaf) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("field %s: %w", d.path, errShort)
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(b))
	w.vals[d.col] = append(w.vals[d.col], parquet.FloatValue(v).Level(rep, def, d.col))
	return b[4:], nil
}

type optionalDec struct {
	path        string
	nullIndex   int64
	inner       decoder
	first, last int
}

func (d *optionalDec) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	i, rest, err := readLong(b)
	if err != nil || (i != 0 && i != 1) {
		return nil, fmt.Errorf("field %s: bad union index %d (%v)", d.path, i, err)
	}
	if i == d.nullIndex {
		span{d.first, d.last}.null(w, rep, def)
		return rest, nil
	}
	return d.inner.put(w, rest, rep, def+1)
}

func (d *optionalDec) null(w *Writer, rep, def int) { span{d.first, d.last}.null(w, rep, def) }

type recordDec struct {
	fields      []decoder
	first, last int
}

func (d *recordDec) put(w *Writer, b []byte, rep, def int) (rest []byte, err error) {
	for _, f := range d.fields {
		if b, err = f.put(w, b, rep, def); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (d *recordDec) null(w *Writer, rep, def int) { span{d.first, d.last}.null(w, rep, def) }

// listDec: a required list. An empty one is a null at def; elements are
// at def+1, the first at rep and the others at the list's level.
type listDec struct {
	path        string
	elem        decoder
	level       int
	first, last int
}

func (d *listDec) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	n := 0
	for {
		count, rest, err := readBlockCount(b)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", d.path, err)
		}
		if b = rest; count == 0 {
			break
		}
		for range count {
			r := d.level
			if n == 0 {
				r = rep
			}
			if b, err = d.elem.put(w, b, r, def+1); err != nil {
				return nil, err
			}
			n++
		}
	}
	if n == 0 {
		d.null(w, rep, def)
	}
	return b, nil
}

func (d *listDec) null(w *Writer, rep, def int) { span{d.first, d.last}.null(w, rep, def) }

// mapDec writes a map's entries sorted by key, as format/parquet does.
// Entries are decoded in wire order; if their keys are out of order the
// map's columns are cut back and the entries decoded again, sorted.
type mapDec struct {
	path        string
	key         *bytesLeaf
	value       decoder
	level       int
	first, last int
}

type mapEntry struct{ key, val []byte }

func (d *mapDec) put(w *Writer, b []byte, rep, def int) ([]byte, error) {
	var marks [8]int
	cut := marks[:0]
	for c := d.first; c < d.last; c++ {
		cut = append(cut, len(w.vals[c]))
	}
	base := len(w.ents)
	defer func() { w.ents = w.ents[:base] }()
	sorted := true
	for {
		count, rest, err := readBlockCount(b)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", d.path, err)
		}
		if b = rest; count == 0 {
			break
		}
		for range count {
			e, rest, err := d.entry(w, b, rep, def, len(w.ents) > base)
			if err != nil {
				return nil, err
			}
			if n := len(w.ents); n > base {
				switch c := bytes.Compare(w.ents[n-1].key, e.key); {
				case c == 0:
					return nil, fmt.Errorf("field %s: duplicate map key %q", d.path, e.key)
				case c > 0:
					sorted = false
				}
			}
			w.ents = append(w.ents, e)
			b = rest
		}
	}
	ents := w.ents[base:]
	switch {
	case len(ents) == 0:
		d.null(w, rep, def)
	case !sorted:
		if err := d.resort(w, ents, cut, rep, def); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// entry decodes one key and value and returns where they are.
func (d *mapDec) entry(w *Writer, b []byte, rep, def int, later bool) (mapEntry, []byte, error) {
	if later {
		rep = d.level
	}
	vstart, err := d.key.put(w, b, rep, def+1)
	if err != nil {
		return mapEntry{}, nil, err
	}
	keys := w.vals[d.key.col]
	key := keys[len(keys)-1]
	rest, err := d.value.put(w, vstart, rep, def+1)
	if err != nil {
		return mapEntry{}, nil, err
	}
	return mapEntry{key: key.ByteArray(), val: vstart}, rest, nil
}

func (d *mapDec) resort(w *Writer, ents []mapEntry, cut []int, rep, def int) error {
	for i, c := 0, d.first; c < d.last; i, c = i+1, c+1 {
		w.vals[c] = w.vals[c][:cut[i]]
	}
	slices.SortFunc(ents, func(a, b mapEntry) int { return bytes.Compare(a.key, b.key) })
	for i, e := range ents {
		r := d.level
		if i == 0 {
			r = rep
		}
		kc := d.key.col
		w.vals[kc] = append(w.vals[kc], parquet.ByteArrayValue(e.key).Level(r, def+1, kc))
		if _, err := d.value.put(w, e.val, r, def+1); err != nil {
			return err
		}
	}
	return nil
}

func (d *mapDec) null(w *Writer, rep, def int) { span{d.first, d.last}.null(w, rep, def) }

// The primitive readers follow format/parquet's (and schema's scan).

func readLong(b []byte) (int64, []byte, error) {
	u, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("bad varint: %w", errShort)
	}
	return int64(u>>1) ^ -int64(u&1), b[n:], nil
}

func readBlockCount(b []byte) (int64, []byte, error) {
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
	if count > int64(len(b)) {
		return 0, nil, fmt.Errorf("block of %d items cannot fit in %d bytes", count, len(b))
	}
	return count, b, nil
}

func readInt32(_ *Writer, b []byte) (parquet.Value, []byte, error) {
	v, rest, err := readLong(b)
	if err != nil {
		return parquet.Value{}, nil, err
	}
	if v != int64(int32(v)) {
		return parquet.Value{}, nil, fmt.Errorf("int %d does not fit in 32 bits", v)
	}
	return parquet.Int32Value(int32(v)), rest, nil
}

func readInt64(_ *Writer, b []byte) (parquet.Value, []byte, error) {
	v, rest, err := readLong(b)
	return parquet.Int64Value(v), rest, err
}

func readBool(_ *Writer, b []byte) (parquet.Value, []byte, error) {
	if len(b) == 0 || b[0] > 1 {
		return parquet.Value{}, nil, errors.New("bad boolean")
	}
	return parquet.BooleanValue(b[0] == 1), b[1:], nil
}

func readFloat(_ *Writer, b []byte) (parquet.Value, []byte, error) {
	if len(b) < 4 {
		return parquet.Value{}, nil, errShort
	}
	return parquet.FloatValue(math.Float32frombits(binary.LittleEndian.Uint32(b))), b[4:], nil
}

func readDouble(_ *Writer, b []byte) (parquet.Value, []byte, error) {
	if len(b) < 8 {
		return parquet.Value{}, nil, errShort
	}
	return parquet.DoubleValue(math.Float64frombits(binary.LittleEndian.Uint64(b))), b[8:], nil
}

func rawBytes(b []byte) ([]byte, []byte, error) {
	size, b, err := readLong(b)
	if err != nil {
		return nil, nil, err
	}
	if size < 0 || size > int64(len(b)) {
		return nil, nil, fmt.Errorf("length %d with %d bytes left: %w", size, len(b), errShort)
	}
	return b[:size], b[size:], nil
}

// readBytes: the value points into the writer's arena (the datum's copy).
func readBytes(_ *Writer, b []byte) (parquet.Value, []byte, error) {
	v, rest, err := rawBytes(b)
	return parquet.ByteArrayValue(v), rest, err
}

func readFixed(size int) reader {
	return func(_ *Writer, b []byte) (parquet.Value, []byte, error) {
		if len(b) < size {
			return parquet.Value{}, nil, errShort
		}
		return parquet.FixedLenByteArrayValue(b[:size]), b[size:], nil
	}
}

func readEnum(symbols []string) reader {
	syms := make([][]byte, len(symbols))
	for i, s := range symbols {
		syms[i] = []byte(s)
	}
	return func(_ *Writer, b []byte) (parquet.Value, []byte, error) {
		i, rest, err := readLong(b)
		if err != nil {
			return parquet.Value{}, nil, err
		}
		if i < 0 || i >= int64(len(syms)) {
			return parquet.Value{}, nil, fmt.Errorf("enum index %d out of range (%d)", i, len(syms))
		}
		return parquet.ByteArrayValue(syms[i]), rest, nil
	}
}

const (
	nanosPerDay     = 86400 * 1e9
	julianUnixEpoch = 2440588
)

// readInt96 reads timestamp-millis (nanosPerUnit 1e6) or -micros (1e3)
// as pqarrow writes it: nanoseconds of the day and the Julian day. The
// instant must fit in int64 nanoseconds, as format/parquet requires.
func readInt96(nanosPerUnit int64) reader {
	return func(_ *Writer, b []byte) (parquet.Value, []byte, error) {
		v, rest, err := readLong(b)
		if err != nil {
			return parquet.Value{}, nil, err
		}
		if v > math.MaxInt64/nanosPerUnit || v < math.MinInt64/nanosPerUnit {
			return parquet.Value{}, nil, fmt.Errorf("timestamp %d outside the INT96 range", v)
		}
		nanos := v * nanosPerUnit
		days, rem := nanos/nanosPerDay, nanos%nanosPerDay
		if rem < 0 {
			days, rem = days-1, rem+nanosPerDay
		}
		i96 := deprecated.Int96{uint32(rem), uint32(uint64(rem) >> 32), uint32(days + julianUnixEpoch)}
		return parquet.Int96Value(i96), rest, nil
	}
}

// readDecimal reads a decimal on bytes or fixed and writes it as a
// big-endian two's-complement of width bytes; |unscaled| < 10^precision.
func readDecimal(n *avsc.Node, width int, limit uint64) reader {
	size := 0
	if n.Kind == avsc.Fixed {
		size = n.Size
	}
	return func(w *Writer, b []byte) (parquet.Value, []byte, error) {
		var raw, rest []byte
		var err error
		if size > 0 {
			if len(b) < size {
				return parquet.Value{}, nil, errShort
			}
			raw, rest = b[:size], b[size:]
		} else if raw, rest, err = rawBytes(b); err != nil {
			return parquet.Value{}, nil, err
		}
		v, ok := small(raw)
		if !ok || absU64(v) >= limit {
			return parquet.Value{}, nil, fmt.Errorf("decimal of %d bytes has more than %d digits", len(raw), n.Precision)
		}
		at := len(w.arena)
		w.arena = binary.BigEndian.AppendUint64(w.arena, uint64(v))
		return parquet.FixedLenByteArrayValue(w.arena[at+8-width : at+8]), rest, nil
	}
}

// small returns the unscaled value of raw when it fits in an int64.
func small(raw []byte) (int64, bool) {
	for len(raw) > 8 { // sign bytes in front of a value that fits
		if (raw[0] != 0 || raw[1]&0x80 != 0) && (raw[0] != 0xff || raw[1]&0x80 == 0) {
			return 0, false
		}
		raw = raw[1:]
	}
	var v int64
	for _, c := range raw {
		v = v<<8 | int64(c)
	}
	if n := len(raw); n > 0 && n < 8 && raw[0]&0x80 != 0 {
		v -= 1 << (8 * n)
	}
	return v, true
}

func absU64(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}
