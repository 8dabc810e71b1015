package compact

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// avroMagic opens every Avro object container file.
var avroMagic = []byte{'O', 'b', 'j', 1}

// maxAvroHeader bounds what an input's header may claim (schema and
// metadata): a corrupt length must not allocate gigabytes.
const maxAvroHeader = 16 << 20

// maxAvroBlock bounds one block of an input. The sink's blocks are about
// 64 KB; a block is the unit the merge holds in memory.
const maxAvroBlock = 256 << 20

// avroHeader is what must agree between inputs for their blocks to be
// concatenated: the metadata (schema and codec) as written.
type avroHeader struct {
	meta []byte // the metadata map's encoding, bytes as read
	sync [16]byte
}

// avroMerger writes one Avro container file made of the blocks of its
// inputs, in order, each read once and never decoded: the output has the
// first input's metadata and a sync marker of its own.
type avroMerger struct {
	w       *bufio.Writer
	header  *avroHeader
	sync    [16]byte
	records int64
	buf     []byte
}

func newAvroMerger(w io.Writer) *avroMerger {
	m := &avroMerger{w: bufio.NewWriterSize(w, 256<<10)}
	_, _ = rand.Read(m.sync[:])
	return m
}

// flush writes what is buffered to the output file.
func (m *avroMerger) flush() error {
	if err := m.w.Flush(); err != nil {
		return fmt.Errorf("write merged Avro file: %w", err)
	}
	return nil
}

// sameHeader reports whether an input's schema and codec are the output's:
// only then may its blocks follow the output's.
func (m *avroMerger) sameHeader(h *avroHeader) bool {
	return m.header == nil || bytes.Equal(m.header.meta, h.meta)
}

// add copies every block of the input read from r, whose header was read
// already, to the output.
func (m *avroMerger) add(r *bufio.Reader, h *avroHeader, name string) error {
	if m.header == nil {
		m.header = h
		out := append(append([]byte{}, avroMagic...), h.meta...)
		if _, err := m.w.Write(append(out, m.sync[:]...)); err != nil {
			return fmt.Errorf("write Avro header: %w", err)
		}
	}
	for {
		count, err := binary.ReadVarint(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: block header: %w", name, err)
		}
		size, err := binary.ReadVarint(r)
		if err != nil || count < 0 || size < 0 || size > maxAvroBlock {
			return fmt.Errorf("%s: corrupt block (count %d, size %d): %v", name, count, size, err)
		}
		if err := m.copyBlock(r, h, name, count, size); err != nil {
			return err
		}
	}
}

func (m *avroMerger) copyBlock(r *bufio.Reader, h *avroHeader, name string, count, size int64) error {
	m.buf = binary.AppendVarint(m.buf[:0], count)
	m.buf = binary.AppendVarint(m.buf, size)
	head := len(m.buf)
	m.buf = slices.Grow(m.buf, int(size)+16)[:head+int(size)+16]
	if _, err := io.ReadFull(r, m.buf[head:]); err != nil {
		return fmt.Errorf("%s: block of %d records: %w", name, count, err)
	}
	if !bytes.Equal(m.buf[len(m.buf)-16:], h.sync[:]) {
		return fmt.Errorf("%s: block of %d records: sync marker does not match the header's", name, count)
	}
	copy(m.buf[len(m.buf)-16:], m.sync[:])
	if _, err := m.w.Write(m.buf); err != nil {
		return fmt.Errorf("write block of %d records from %s: %w", count, name, err)
	}
	m.records += count
	return nil
}

// readAvroHeader reads an input's magic, metadata map and sync marker.
func readAvroHeader(r *bufio.Reader, name string) (*avroHeader, error) {
	magic := make([]byte, 4)
	if _, err := io.ReadFull(r, magic); err != nil || !bytes.Equal(magic, avroMagic) {
		return nil, fmt.Errorf("%s: not an Avro container file", name)
	}
	var meta bytes.Buffer
	for {
		n, err := readLongInto(r, &meta)
		if err != nil {
			return nil, fmt.Errorf("%s: header: %w", name, err)
		}
		if n == 0 {
			break
		}
		if n < 0 { // a negative count is followed by the block's size
			if _, err := readLongInto(r, &meta); err != nil {
				return nil, fmt.Errorf("%s: header: %w", name, err)
			}
			n = -n
		}
		for range 2 * n { // key, value
			if err := readBytesInto(r, &meta); err != nil {
				return nil, fmt.Errorf("%s: header: %w", name, err)
			}
		}
	}
	h := &avroHeader{meta: meta.Bytes()}
	if _, err := io.ReadFull(r, h.sync[:]); err != nil {
		return nil, fmt.Errorf("%s: header sync marker: %w", name, err)
	}
	return h, nil
}

func readLongInto(r *bufio.Reader, out *bytes.Buffer) (int64, error) {
	v, err := binary.ReadVarint(r)
	if err != nil {
		return 0, err
	}
	out.Write(binary.AppendVarint(nil, v))
	return v, nil
}

func readBytesInto(r *bufio.Reader, out *bytes.Buffer) error {
	n, err := readLongInto(r, out)
	if err != nil {
		return err
	}
	if n < 0 || int64(out.Len())+n > maxAvroHeader {
		return fmt.Errorf("metadata entry of %d bytes", n)
	}
	_, err = io.CopyN(out, r, n)
	return err
}
