package transfer

// This file is hdfs-sink's (see FORK.md): the reads and writes of the
// DIGEST-MD5 integrity and privacy connections, which upstream v2.4.0 got
// wrong.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// A wrapped frame is its length (4 bytes), then the message and 16 bytes
// of trailer (the HMAC's first 10 bytes, the message type, the sequence
// number). maxWrappedFrame bounds the length read from the wire: the SASL
// buffer a DataNode negotiates is 64 KiB, so anything near this is a
// corrupt stream, not a frame to allocate for.
const (
	wrappedTrailerLen = macHMACLen + macMsgTypeLen + macSeqNumLen
	maxWrappedFrame   = 16 << 20
)

// readWrapped is Read for a wrapped connection. Upstream returned only
// the count of the bytes copied after reading a new frame, losing those it
// had copied from the previous one (every block read across two frames
// came back corrupt), and it read a new frame even when the previous one
// still had bytes to hand out. This hands out what is buffered first and
// reads the network only when nothing is.
func readWrapped(b []byte, buf *bytes.Buffer, conn net.Conn, deadline time.Time, decode func([]byte) ([]byte, error)) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for buf.Len() == 0 {
		if !deadline.IsZero() && deadline.Before(time.Now()) {
			return 0, syscall.ETIMEDOUT
		}
		if err := readFrame(buf, conn, decode); err != nil {
			return 0, err
		}
	}
	return buf.Read(b)
}

// readFrame replaces buf's content with the next frame's message, checked
// (and decrypted) by decode.
func readFrame(buf *bytes.Buffer, conn net.Conn, decode func([]byte) ([]byte, error)) error {
	var size int32
	if err := binary.Read(conn, binary.BigEndian, &size); err != nil {
		return err
	}
	if size < wrappedTrailerLen || size > maxWrappedFrame {
		return fmt.Errorf("invalid response from datanode: wrapped frame of %d bytes", size)
	}
	buf.Reset()
	buf.Grow(int(size))
	if _, err := io.CopyN(buf, conn, int64(size)); err != nil {
		buf.Reset() // what came of the frame is unchecked: never hand it out
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	decoded, err := decode(buf.Bytes())
	if err != nil {
		buf.Reset()
		return err
	}
	buf.Truncate(len(decoded)) // decode returns a prefix of buf
	return nil
}

// writeWrapped sends frame, the whole wrapped message, and reports b's
// length on success: upstream reported the frame's, more than the caller
// gave, which io.Copy and others take for a broken writer.
func writeWrapped(b []byte, frame *bytes.Buffer, conn net.Conn) (int, error) {
	if _, err := frame.WriteTo(conn); err != nil {
		return 0, err
	}
	return len(b), nil
}
