package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"testing"
)

// twoEntrySegment is a segment with two ENTRY frames; the framing layer is
// content-agnostic, so payloads need not be encoded entries.
func twoEntrySegment() ([]byte, [][]byte) {
	payloads := [][]byte{[]byte("first payload"), []byte("second")}
	return EncodeSegment(payloads...), payloads
}

func TestSegmentRoundTrip(t *testing.T) {
	for _, payloads := range [][][]byte{nil, {{}}, {[]byte("a")}, {[]byte("a"), {}, bytes.Repeat([]byte("x"), 70000)}} {
		data := EncodeSegment(payloads...)
		got, err := DecodeSegment("seg", data)
		if err != nil {
			t.Fatalf("DecodeSegment(%d payloads) = %v", len(payloads), err)
		}
		if !slices.EqualFunc(got, payloads, bytes.Equal) {
			t.Fatalf("payloads = %q, want %q", got, payloads)
		}
	}
}

// TestSegmentGolden pins the framing bytes.
func TestSegmentGolden(t *testing.T) {
	got := EncodeSegment([]byte("hi"))
	want := []byte("HSWAL\x01" +
		"\x00\x00\x00\x02" + "\x00\x00\x00\x00" + "\x01" + "hi" +
		"\x00\x00\x00\x04" + "\x00\x00\x00\x00" + "\x02" + "\x00\x00\x00\x01")
	binary.BigEndian.PutUint32(want[10:], crc32.Checksum([]byte("\x01hi"), castagnoli))
	binary.BigEndian.PutUint32(want[21:], crc32.Checksum([]byte("\x02\x00\x00\x00\x01"), castagnoli))
	if !bytes.Equal(got, want) {
		t.Fatalf("segment = %x, want %x", got, want)
	}
	if len(magic)+1 != headerSize {
		t.Fatalf("headerSize %d disagrees with magic %q", headerSize, magic)
	}
}

// assertCorruption checks err is a *CorruptionError for path at offset
// matching want.
func assertCorruption(t *testing.T, err error, want error, offset int64) {
	t.Helper()
	var ce *CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *CorruptionError", err)
	}
	if !errors.Is(err, want) || ce.Path != "seg" || ce.Offset != offset {
		t.Fatalf("error = %v (offset %d), want %v at offset %d", err, ce.Offset, want, offset)
	}
}

// TestTornAtEveryByte cuts a two-entry segment at every length: cuts inside
// the header are bad headers, every later cut is a torn tail reported at the
// start of the incomplete frame.
func TestTornAtEveryByte(t *testing.T) {
	data, payloads := twoEntrySegment()
	second := headerSize + frameHeaderSize + len(payloads[0])
	end := second + frameHeaderSize + len(payloads[1])
	for cut := range len(data) {
		_, err := DecodeSegment("seg", data[:cut])
		switch {
		case cut < headerSize:
			assertCorruption(t, err, ErrBadHeader, 0)
		case cut < second:
			assertCorruption(t, err, ErrTornTail, headerSize)
		case cut < end:
			assertCorruption(t, err, ErrTornTail, int64(second))
		default:
			assertCorruption(t, err, ErrTornTail, int64(end))
		}
	}
}

func TestCorruptionTable(t *testing.T) {
	valid, payloads := twoEntrySegment()
	second := headerSize + frameHeaderSize + len(payloads[0])
	end := second + frameHeaderSize + len(payloads[1])
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(valid)) }
	flip := func(i int) []byte { return edit(func(b []byte) []byte { b[i] ^= 0x01; return b }) }
	badType := frameWithType(7, []byte("x"))
	tests := []struct {
		name   string
		data   []byte
		want   error
		offset int
	}{
		{"empty file", nil, ErrBadHeader, 0},
		{"truncated header", []byte("HSW"), ErrBadHeader, 0},
		{"wrong magic", edit(func(b []byte) []byte { copy(b, "XSWAL"); return b }), ErrBadHeader, 0},
		{"unknown version", flip(5), ErrUnknownVersion, 0},
		{"payload bit flip", flip(headerSize + frameHeaderSize), ErrChecksum, headerSize},
		{"crc bit flip", flip(headerSize + 4), ErrChecksum, headerSize},
		{"type byte flip", flip(headerSize + 8), ErrChecksum, headerSize},
		{"second frame payload flip", flip(second + frameHeaderSize + 1), ErrChecksum, second},
		{"END count flip", flip(len(valid) - 1), ErrChecksum, end},
		{"trailing garbage after END", append(bytes.Clone(valid), 0), ErrTrailingData, len(valid)},
		{"trailing frame after END", append(bytes.Clone(valid), frameWithType(frameEntry, nil)...), ErrTrailingData, len(valid)},
		{"unknown frame type", append(bytes.Clone(valid[:headerSize]), badType...), ErrBadFrame, headerSize},
		{"END count mismatch", append(bytes.Clone(valid[:end]), frameWithType(frameEnd, []byte{0, 0, 0, 9})...), ErrBadFrame, end},
		{"END payload size", append(bytes.Clone(valid[:end]), frameWithType(frameEnd, nil)...), ErrBadFrame, end},
		{"oversized length", edit(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[headerSize:], MaxFrameSize+1)
			return b
		}), ErrBadFrame, headerSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSegment("seg", tc.data)
			assertCorruption(t, err, tc.want, int64(tc.offset))
		})
	}
}

// frameWithType builds a well-checksummed frame of any type.
func frameWithType(typ frameType, payload []byte) []byte {
	return appendFrame(nil, typ, payload)
}

func BenchmarkEncodeSegment(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 512)
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		EncodeSegment(payload)
	}
}

func BenchmarkDecodeSegment(b *testing.B) {
	data := EncodeSegment(bytes.Repeat([]byte("x"), 512))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeSegment("seg", data); err != nil {
			b.Fatal(err)
		}
	}
}
