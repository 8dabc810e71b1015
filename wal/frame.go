package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Segment format constants (see docs/wal.md).
const (
	magic           = "HSWAL"
	formatVersion   = 1
	headerSize      = 5 + 1     // magic, version
	frameHeaderSize = 4 + 4 + 1 // length, CRC32C, type
	endPayloadSize  = 4         // END holds the number of ENTRY frames

	// MaxFrameSize bounds a frame's payload. A larger length field can only
	// come from corruption, and must not size an allocation.
	MaxFrameSize = 16 << 20
)

type frameType uint8

// Frame types. Values are part of the on-disk format.
const (
	frameEntry frameType = 1
	frameEnd   frameType = 2
)

// castagnoli is built once: MakeTable is not free and the table is immutable.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sentinels matched with errors.Is on a *CorruptionError.
var (
	// ErrBadHeader: empty file, truncated header or wrong magic.
	ErrBadHeader = errors.New("bad segment header")
	// ErrUnknownVersion: a header with a format version this code cannot read.
	ErrUnknownVersion = errors.New("unknown segment format version")
	// ErrTornTail: the segment ends inside a frame or before its END frame,
	// as a write cut short by a crash leaves it.
	ErrTornTail = errors.New("torn tail")
	// ErrChecksum: a complete frame whose CRC32C does not match; the bytes
	// changed after they were written.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrBadFrame: a frame that is well-checksummed but not valid here
	// (unknown type, oversized, END count mismatch, wrong entry count).
	ErrBadFrame = errors.New("bad frame")
	// ErrTrailingData: bytes after the END frame.
	ErrTrailingData = errors.New("trailing data after END frame")
	// ErrBadEntry: the frame is intact but its entry does not decode.
	ErrBadEntry = errors.New("bad entry")
)

// CorruptionError reports a segment that cannot be read, where, and why.
type CorruptionError struct {
	Path   string // segment file
	Offset int64  // byte offset of the header or frame at fault
	Reason string // human-readable detail
	Err    error  // one of the Err* sentinels above, possibly wrapping more
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("wal: corrupt segment %s at offset %d: %s: %v", e.Path, e.Offset, e.Reason, e.Err)
}

func (e *CorruptionError) Unwrap() error { return e.Err }

// EncodeSegment frames payloads as a complete segment: header, one ENTRY
// frame per payload, then END. It panics on a payload over MaxFrameSize,
// which only a programming error produces.
func EncodeSegment(payloads ...[]byte) []byte {
	size := headerSize + (len(payloads)+1)*frameHeaderSize + endPayloadSize
	for _, p := range payloads {
		if len(p) > MaxFrameSize {
			panic(fmt.Sprintf("wal: payload of %d bytes exceeds MaxFrameSize", len(p)))
		}
		size += len(p)
	}
	b := make([]byte, 0, size)
	b = append(b, magic...)
	b = append(b, formatVersion)
	for _, p := range payloads {
		b = appendFrame(b, frameEntry, p)
	}
	return appendFrame(b, frameEnd, binary.BigEndian.AppendUint32(nil, uint32(len(payloads))))
}

func appendFrame(b []byte, typ frameType, payload []byte) []byte {
	crc := crc32.Update(0, castagnoli, []byte{byte(typ)})
	crc = crc32.Update(crc, castagnoli, payload)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.BigEndian.AppendUint32(b, crc)
	b = append(b, byte(typ))
	return append(b, payload...)
}

// DecodeSegment checks a whole segment and returns its ENTRY payloads
// (sub-slices of data). path only labels errors, which are *CorruptionError.
func DecodeSegment(path string, data []byte) ([][]byte, error) {
	corrupt := func(off int, reason string, err error) error {
		return &CorruptionError{Path: path, Offset: int64(off), Reason: reason, Err: err}
	}
	if err := checkHeader(data); err != nil {
		return nil, corrupt(0, err.reason, err.err)
	}
	var payloads [][]byte
	for off := headerSize; ; {
		f, err := nextFrame(data, off)
		if err != nil {
			return nil, corrupt(off, err.reason, err.err)
		}
		switch f.typ {
		case frameEntry:
			payloads = append(payloads, f.payload)
		case frameEnd:
			if err := checkEnd(f.payload, len(payloads)); err != nil {
				return nil, corrupt(off, err.reason, err.err)
			}
			if f.end != len(data) {
				return nil, corrupt(f.end, fmt.Sprintf("%d bytes", len(data)-f.end), ErrTrailingData)
			}
			return payloads, nil
		default:
			return nil, corrupt(off, fmt.Sprintf("unknown frame type %d", f.typ), ErrBadFrame)
		}
		off = f.end
	}
}

// problem is a reason plus sentinel, turned into a *CorruptionError by the
// caller that knows the path and offset.
type problem struct {
	reason string
	err    error
}

func checkHeader(data []byte) *problem {
	switch {
	case len(data) == 0:
		return &problem{"empty file", ErrBadHeader}
	case len(data) < headerSize:
		return &problem{fmt.Sprintf("truncated header: %d of %d bytes", len(data), headerSize), ErrBadHeader}
	case string(data[:len(magic)]) != magic:
		return &problem{fmt.Sprintf("magic %q, want %q", data[:len(magic)], magic), ErrBadHeader}
	case data[len(magic)] != formatVersion:
		return &problem{fmt.Sprintf("version %d, want %d", data[len(magic)], formatVersion), ErrUnknownVersion}
	}
	return nil
}

type frame struct {
	typ     frameType
	payload []byte
	end     int // offset just past the frame
}

// nextFrame reads and checksums the frame at off.
func nextFrame(data []byte, off int) (frame, *problem) {
	rest := len(data) - off
	switch {
	case rest == 0:
		return frame{}, &problem{"no END frame", ErrTornTail}
	case rest < frameHeaderSize:
		return frame{}, &problem{fmt.Sprintf("truncated frame header: %d of %d bytes", rest, frameHeaderSize), ErrTornTail}
	}
	n := binary.BigEndian.Uint32(data[off:])
	want := binary.BigEndian.Uint32(data[off+4:])
	if n > MaxFrameSize {
		return frame{}, &problem{fmt.Sprintf("frame length %d exceeds %d", n, MaxFrameSize), ErrBadFrame}
	}
	if int(n) > rest-frameHeaderSize {
		return frame{}, &problem{fmt.Sprintf("truncated frame: %d of %d payload bytes", rest-frameHeaderSize, n), ErrTornTail}
	}
	body := data[off+frameHeaderSize-1 : off+frameHeaderSize+int(n)] // type + payload
	if got := crc32.Checksum(body, castagnoli); got != want {
		return frame{}, &problem{fmt.Sprintf("crc32c %08x, want %08x", got, want), ErrChecksum}
	}
	return frame{typ: frameType(body[0]), payload: body[1:], end: off + frameHeaderSize + int(n)}, nil
}

func checkEnd(payload []byte, entries int) *problem {
	if len(payload) != endPayloadSize {
		return &problem{fmt.Sprintf("END payload of %d bytes, want %d", len(payload), endPayloadSize), ErrBadFrame}
	}
	if n := binary.BigEndian.Uint32(payload); int64(n) != int64(entries) {
		return &problem{fmt.Sprintf("END counts %d entries, segment has %d", n, entries), ErrBadFrame}
	}
	return nil
}
