package avro

import (
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/golang/snappy"
)

// compressor appends the codec's encoding of src to dst. A nil compressor
// is the null codec, which the writer handles without a copy.
type compressor interface {
	name() string
	compress(dst, src []byte) ([]byte, error)
}

func newCompressor(codec string) (compressor, error) {
	switch codec {
	case "", "null":
		return nil, nil
	case "deflate":
		return &deflateCodec{}, nil
	case "snappy":
		return snappyCodec{}, nil
	default:
		return nil, fmt.Errorf("%w %q (supported: null, deflate, snappy)", ErrUnsupportedCodec, codec)
	}
}

func codecName(c compressor) string {
	if c == nil {
		return "null"
	}
	return c.name()
}

// deflateCodec is raw DEFLATE (RFC 1951, no zlib header), as the spec
// requires. The flate.Writer is reused: allocating one costs ~1 MB.
type deflateCodec struct {
	fw  *flate.Writer
	out appendWriter
}

func (*deflateCodec) name() string { return "deflate" }

func (d *deflateCodec) compress(dst, src []byte) ([]byte, error) {
	d.out.b = dst
	if d.fw == nil {
		fw, err := flate.NewWriter(&d.out, flate.DefaultCompression)
		if err != nil {
			return dst, err
		}
		d.fw = fw
	} else {
		d.fw.Reset(&d.out)
	}
	if _, err := d.fw.Write(src); err != nil {
		return dst, err
	}
	err := d.fw.Close()
	out := d.out.b
	d.out.b = nil
	return out, err
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// snappyCodec is a snappy block followed by the big-endian CRC-32 (IEEE)
// of the uncompressed data, as the spec requires.
type snappyCodec struct{}

func (snappyCodec) name() string { return "snappy" }

func (snappyCodec) compress(dst, src []byte) ([]byte, error) {
	start := len(dst)
	need := snappy.MaxEncodedLen(len(src)) + 4
	if cap(dst)-start < need {
		grown := make([]byte, start, start+need)
		copy(grown, dst)
		dst = grown
	}
	enc := snappy.Encode(dst[start:start+need-4], src)
	dst = dst[:start+len(enc)]
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(src)), nil
}
