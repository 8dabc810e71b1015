package avro

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/internal/sticky"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// headroom is reserved in front of each block buffer for the two varint
// longs (count, size) so that a block is framed in place and written with
// one Write, without copying the datums.
const headroom = 2 * binary.MaxVarintLen64

// Writer writes one Avro Object Container File. It is not safe for
// concurrent use. After an error from the underlying writer every method
// returns that error: the file is incomplete and must be discarded.
type Writer struct {
	w        io.Writer
	comp     compressor
	sync     [16]byte
	maxBytes int
	maxRecs  int

	header  []byte // pending until the first write to w
	block   []byte // headroom + concatenated datums
	scratch []byte // headroom + compressed block
	count   int
	status  sticky.State
}

var _ format.RecordWriter = (*Writer)(nil)

// NewWriter returns a Writer of datums encoded with s. Nothing is written
// to w until a block is emitted, Flush or Close.
func NewWriter(w io.Writer, s *schema.Schema, opts Options) (*Writer, error) {
	opts, err := opts.forWriter(s)
	if err != nil {
		return nil, err
	}
	comp, _ := newCompressor(opts.Codec) // checked by forWriter
	aw := &Writer{
		w:        w,
		comp:     comp,
		sync:     opts.SyncMarker,
		maxBytes: opts.BlockBytes,
		maxRecs:  opts.BlockRecords,
		block:    make([]byte, headroom, headroom+min(opts.BlockBytes, DefaultBlockBytes)+1024),
	}
	aw.header = appendHeader(nil, s.Text, codecName(comp), aw.sync)
	return aw, nil
}

// forWriter checks what a Writer is made with and fills in the defaults.
func (o Options) forWriter(s *schema.Schema) (Options, error) {
	if s == nil {
		return o, fmt.Errorf("avro: new writer: nil schema")
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	if o.BlockBytes == 0 {
		o.BlockBytes = DefaultBlockBytes
	}
	if o.BlockRecords == 0 || o.BlockRecords > maxBlockRecords {
		o.BlockRecords = maxBlockRecords
	}
	if o.SyncMarker == [16]byte{} {
		if _, err := rand.Read(o.SyncMarker[:]); err != nil {
			return o, fmt.Errorf("avro: sync marker: %w", err)
		}
	}
	return o, nil
}

// appendHeader appends the file header: magic, the metadata map (one block
// of two entries, then the zero-count end block), and the sync marker.
func appendHeader(dst []byte, schemaText, codec string, sync [16]byte) []byte {
	dst = append(dst, 'O', 'b', 'j', 1)
	dst = appendLong(dst, 2)
	dst = appendBytes(dst, "avro.schema", schemaText)
	dst = appendBytes(dst, "avro.codec", codec)
	dst = appendLong(dst, 0)
	return append(dst, sync[:]...)
}

func appendBytes(dst []byte, key, value string) []byte {
	dst = appendLong(dst, int64(len(key)))
	dst = append(dst, key...)
	dst = appendLong(dst, int64(len(value)))
	return append(dst, value...)
}

// appendLong appends v as an Avro long: zig-zag, then a base-128 varint
// (binary.AppendVarint does exactly this).
func appendLong(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

// WriteDatum appends one binary datum written with the file's schema. The
// datum is copied; the caller may reuse it.
func (w *Writer) WriteDatum(datum []byte) error {
	if err := w.status.Usable(errClosed); err != nil {
		return err
	}
	w.block = append(w.block, datum...)
	w.count++
	if len(w.block)-headroom >= w.maxBytes || w.count >= w.maxRecs {
		return w.emit()
	}
	return nil
}

// Flush writes the header, if not yet written, and the pending block to w.
func (w *Writer) Flush() error {
	if err := w.status.Usable(errClosed); err != nil {
		return err
	}
	return w.emit()
}

// BytesBuffered is the number of bytes accepted but not yet written to w.
// Each writer also keeps about 2×BlockBytes of reusable buffers.
func (w *Writer) BytesBuffered() int {
	return len(w.header) + len(w.block) - headroom
}

// Records is the number of records in the pending block.
func (w *Writer) Records() int { return w.count }

// Close flushes and releases the buffers. It does not close w. A second
// Close returns nil.
func (w *Writer) Close() error {
	return w.status.Close(func() error {
		err := w.Flush()
		w.block, w.scratch, w.comp = nil, nil, nil
		return err
	})
}

// emit writes the pending header and block, if any.
func (w *Writer) emit() error {
	if len(w.header) > 0 {
		if _, err := w.w.Write(w.header); err != nil {
			return w.status.Fail(fmt.Errorf("avro: write header: %w", err))
		}
		w.header = nil
	}
	if w.count == 0 {
		return nil
	}
	out, err := w.frame()
	if err != nil {
		return w.status.Fail(fmt.Errorf("avro: %s-compress block of %d records: %w", codecName(w.comp), w.count, err))
	}
	if _, err := w.w.Write(out); err != nil {
		return w.status.Fail(fmt.Errorf("avro: write block of %d records: %w", w.count, err))
	}
	w.block, w.count = w.block[:headroom], 0
	return nil
}

// frame returns the complete block: count and size in the headroom of the
// (possibly compressed) data, the sync marker after it. Buffers grown by
// the appends are kept for the next block.
func (w *Writer) frame() ([]byte, error) {
	buf := w.block
	if w.comp != nil {
		if cap(w.scratch) < headroom {
			w.scratch = make([]byte, headroom, headroom+len(w.block))
		}
		out, err := w.comp.compress(w.scratch[:headroom], w.block[headroom:])
		if err != nil {
			return nil, err
		}
		buf = out
	}
	var lens [headroom]byte
	n := binary.PutVarint(lens[:], int64(w.count))
	n += binary.PutVarint(lens[n:], int64(len(buf)-headroom))
	copy(buf[headroom-n:], lens[:n])
	buf = append(buf, w.sync[:]...)
	if w.comp == nil {
		w.block = buf
	} else {
		w.scratch = buf
	}
	return buf[headroom-n:], nil
}
