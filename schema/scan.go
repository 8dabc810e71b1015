package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// goavro sizes an array from the block count before reading any item, so a
// 5-byte datum claiming 2^31-1 items makes it allocate 32 GiB and the
// process dies (not a panic: Schema.Native's recover cannot help). scan
// walks a datum without building values first and rejects such counts: a
// block cannot hold more items than bytes remain, unless the items encode
// to zero bytes (null, records of nulls), which are capped. A depth cap
// keeps a recursive schema from exhausting the stack.
const (
	maxZeroWidthItems = 1 << 16
	maxScanDepth      = 1000
)

var errScanEnd = errors.New("datum ends early")

// scan checks that b starts with a datum of n and returns the rest.
func scan(n *avsc.Node, b []byte, depth int) ([]byte, error) {
	if depth > maxScanDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxScanDepth)
	}
	switch n.Kind {
	case avsc.Null:
		return b, nil
	case avsc.Boolean:
		return scanBoolean(b)
	case avsc.Int:
		return scanInt(b)
	case avsc.Long:
		_, rest, err := varint(b)
		return rest, err
	case avsc.Enum:
		return scanEnum(n, b)
	case avsc.Float:
		return skipN(b, 4)
	case avsc.Double:
		return skipN(b, 8)
	case avsc.Fixed:
		return skipN(b, n.Size)
	case avsc.Bytes, avsc.String:
		return skipBytes(b)
	case avsc.Record:
		return scanFields(n, b, depth)
	case avsc.Array:
		return scanBlocks(n, n.Items, b, depth)
	case avsc.Map:
		return scanBlocks(n, n.Values, b, depth)
	}
	return scanUnion(n, b, depth)
}

// scanFields scans a record's fields. The commonest, a long or a string
// or bytes whose length fits what is left, are skipped as skipCommon
// does, written out here: on 100 B records the calls were most of the
// scan, and the scan a fifth of the sink's CPU (issue 25); skipCommon is
// too big to inline. Anything else, and any doubt (an error to report),
// goes to scan.
func scanFields(n *avsc.Node, b []byte, depth int) ([]byte, error) {
	for i := range n.Fields {
		t := n.Fields[i].Type
		if k := t.Kind; k == avsc.Long || k == avsc.String || k == avsc.Bytes {
			u, w := shortUvarint(b)
			if w > 0 && k == avsc.Long {
				b = b[w:]
				continue
			}
			if w > 0 && u&1 == 0 && u>>1 <= uint64(len(b)-w) { // a length ≥ 0 that fits
				b = b[w+int(u>>1):]
				continue
			}
		}
		var err error
		if b, err = scan(t, b, depth+1); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// skipCommon skips a datum of kind if it is a long, or a string or bytes
// whose length fits what is left, and reports whether it did. What it
// skips scan would accept. Array items and map values use it; scanFields
// has its own copy.
func skipCommon(kind avsc.Kind, b []byte) ([]byte, bool) {
	if kind != avsc.Long && kind != avsc.String && kind != avsc.Bytes {
		return b, false
	}
	u, n := shortUvarint(b)
	switch {
	case n == 0:
		return b, false
	case kind == avsc.Long:
		return b[n:], true
	case u&1 == 0 && u>>1 <= uint64(len(b)-n): // an even varint is a length ≥ 0 (zig-zag)
		return b[n+int(u>>1):], true
	}
	return b, false
}

// shortUvarint reads an unsigned varint of at most 9 bytes (63 bits: it
// cannot overflow) and returns its length n, or n = 0 for anything else
// (longer or cut short), which varint then reads or rejects.
func shortUvarint(b []byte) (u uint64, n int) {
	for i := 0; i < len(b) && i < 9; i++ {
		u |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return u, i + 1
		}
	}
	return 0, 0
}

// scanBoolean, scanInt and scanEnum reject what an Avro reader would: the
// datum is written to files as it came, so whatever passes here must be
// readable by Spark and Hive (Java Avro), not only by goavro.
func scanBoolean(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, errScanEnd
	}
	if b[0] > 1 {
		return nil, fmt.Errorf("boolean byte %d is neither 0 nor 1", b[0])
	}
	return b[1:], nil
}

func scanInt(b []byte) ([]byte, error) {
	v, rest, err := varint(b)
	if err != nil {
		return nil, err
	}
	if len(b)-len(rest) > 5 || v != int64(int32(v)) {
		return nil, fmt.Errorf("int %d does not fit in 32 bits", v)
	}
	return rest, nil
}

func scanEnum(n *avsc.Node, b []byte) ([]byte, error) {
	i, rest, err := varint(b)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= int64(len(n.Symbols)) {
		return nil, fmt.Errorf("enum %s index %d out of range (%d symbols)", n.Name, i, len(n.Symbols))
	}
	return rest, nil
}

func scanUnion(n *avsc.Node, b []byte, depth int) ([]byte, error) {
	i, b, err := varint(b)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= int64(len(n.Branches)) {
		return nil, fmt.Errorf("union index %d out of range", i)
	}
	return scan(n.Branches[i], b, depth+1)
}

// scanBlocks scans the blocks of array or map n, whose items (or values)
// are of type items.
func scanBlocks(n, items *avsc.Node, b []byte, depth int) ([]byte, error) {
	zeroWidth := n.Kind == avsc.Array && items.MinWidth() == 0
	for {
		count, rest, err := varint(b)
		if err != nil {
			return nil, err
		}
		b = rest
		if count == 0 {
			return b, nil
		}
		if count < 0 { // negative count: a byte size follows
			if count == math.MinInt64 {
				return nil, fmt.Errorf("block count %d", count)
			}
			count = -count
			if _, b, err = varint(b); err != nil {
				return nil, err
			}
		}
		if limit := blockLimit(zeroWidth, len(b)); count > limit {
			return nil, fmt.Errorf("block of %d items cannot fit (limit %d)", count, limit)
		}
		for range count {
			if n.Kind == avsc.Map {
				if b, err = skipBytes(b); err != nil {
					return nil, err
				}
			}
			if rest, ok := skipCommon(items.Kind, b); ok {
				b = rest
				continue
			}
			if b, err = scan(items, b, depth+1); err != nil {
				return nil, err
			}
		}
	}
}

func blockLimit(zeroWidth bool, remaining int) int64 {
	if zeroWidth {
		return maxZeroWidthItems
	}
	return int64(remaining)
}

func varint(b []byte) (int64, []byte, error) {
	u, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("bad varint: %w", errScanEnd)
	}
	return int64(u>>1) ^ -int64(u&1), b[n:], nil
}

func skipN(b []byte, n int) ([]byte, error) {
	if n > len(b) {
		return nil, errScanEnd
	}
	return b[n:], nil
}

func skipBytes(b []byte) ([]byte, error) {
	size, b, err := varint(b)
	if err != nil {
		return nil, err
	}
	if size < 0 || size > int64(len(b)) {
		return nil, fmt.Errorf("length %d with %d bytes left: %w", size, len(b), errScanEnd)
	}
	return b[size:], nil
}

// precheck runs scan for s, so goavro never sees a datum that would make
// it allocate without bound. A schema our model cannot read (goavro is
// more lenient in places) is left to goavro alone.
func precheck(s *Schema, datum []byte) error {
	_, err := scanDatum(s, datum)
	return err
}

// scanDatum scans datum as a whole value of s. checked is false when our
// model cannot read s, so nothing was checked.
func scanDatum(s *Schema, datum []byte) (checked bool, err error) {
	p, err := parse(s)
	if err != nil {
		return false, nil
	}
	rest, err := scan(p.tree, datum, 0)
	if err != nil {
		return true, &DatumError{SchemaID: s.ID, Len: len(datum), Err: err}
	}
	if len(rest) != 0 {
		return true, &DatumError{SchemaID: s.ID, Len: len(datum), Trailing: len(rest)}
	}
	return true, nil
}
