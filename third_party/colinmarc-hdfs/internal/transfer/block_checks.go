package transfer

// This file is hdfs-sink's (see FORK.md): checks on what a DataNode sends in
// the block read and write paths. Upstream used these values as they came:
// a bytesPerChecksum of 0 was an integer division by zero, a negative
// packet dataLen a negative bytes.Buffer.Grow (panics, and a panic in a
// DataNode connection ends the whole process); a message's length prefix
// was allocated whatever it claimed; a short message was waited on until
// the deadline; a packet header that did not parse, a chunkOffset past the
// read's offset, or a block that ended early were read as if nothing was
// wrong. Each is an error here naming the DataNode and what it sent, which
// BlockReader's failover records as that DataNode's failure.

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"

	"google.golang.org/protobuf/proto"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
)

// maxBlockOpMessage bounds a length-prefixed message from a DataNode (a
// block operation's response, a write pipeline's ack) as read from the
// wire: they are a few dozen bytes, an error's message not much more.
const maxBlockOpMessage = 1 << 20

// maxPacketSize bounds a packet (its lengths' 4-byte part, checksums and
// data, and its header), as Hadoop's own reader does (PacketReceiver's
// MAX_PACKET_SIZE, 16 MiB); a DataNode sends 64 KiB packets.
const maxPacketSize = 16 << 20

// datanodeAddr is r's remote address when r is a connection, "?" if not
// (a write pipeline's acks are read through a bufio.Reader).
func datanodeAddr(r io.Reader) string {
	if c, ok := r.(interface{ RemoteAddr() net.Addr }); ok {
		if a := c.RemoteAddr(); a != nil {
			return a.String()
		}
	}
	return "?"
}

func datanodeErrorf(addr, format string, a ...interface{}) error {
	return fmt.Errorf("datanode %s: %s", addr, fmt.Sprintf(format, a...))
}

// readBlockOpMessage is readPrefixedMessage's body. Upstream read 5 bytes
// for the varint length, so a message shorter than 4 bytes was waited on
// until the deadline, or, when more followed, taken with bytes of the next
// message and refused; and it allocated the length as claimed (up to 32
// GiB). This reads the varint a byte at a time (nothing after the message
// is consumed: the packets after a read's response, the next ack) and
// bounds the length.
func readBlockOpMessage(r io.Reader, msg proto.Message) error {
	br, ok := r.(io.ByteReader)
	if !ok {
		br = byteAtATime{r}
	}
	size, err := binary.ReadUvarint(br)
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	} else if err != nil {
		return err
	}
	if size > maxBlockOpMessage {
		return datanodeErrorf(datanodeAddr(r), "%s of %d bytes, more than %d", messageName(msg), size, maxBlockOpMessage)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if err := proto.Unmarshal(b, msg); err != nil {
		return fmt.Errorf("datanode %s: %s: %w", datanodeAddr(r), messageName(msg), err)
	}
	return nil
}

// messageName names msg's type in an error (only there: every ack of a
// write pipeline is read here).
func messageName(msg proto.Message) string {
	return string(msg.ProtoReflect().Descriptor().Name())
}

// checkReadResponse refuses a read response whose checksum info the
// stream cannot use: bytesPerChecksum 0 (blockReadStream divides by it;
// above MaxInt32 it is negative as an int on 32-bit platforms), or a
// chunkOffset past the offset the read asked for (upstream then skipped
// nothing and returned the block's bytes from chunkOffset as if they were
// from offset). Hadoop's BlockReaderRemote refuses the same.
func checkReadResponse(addr string, offset int64, info *hdfs.ReadOpChecksumInfoProto) error {
	bpc := info.GetChecksum().GetBytesPerChecksum()
	if bpc == 0 || bpc > math.MaxInt32 {
		return datanodeErrorf(addr, "read response with bytesPerChecksum %d", bpc)
	}
	if co := info.GetChunkOffset(); offset < 0 || co > uint64(offset) {
		return datanodeErrorf(addr, "read response with chunkOffset %d, past the read's offset %d", co, offset)
	}
	return nil
}

// checkPacketHeader is what readPacketHeader returns for its error:
// upstream dropped the header's parse error, and startPacket used dataLen
// unchecked. lengths are the packet's first 6 bytes (the payload's length,
// the header's length). As Hadoop's PacketHeader.sanityCheck and
// PacketReceiver: dataLen is not negative, only the block's last packet
// has none, the last has none, the packet fits 16 MiB; and the payload
// length is what dataLen and the chunk size make it (4 + checksums +
// data), or the stream would be read off its packet boundaries.
func (s *blockReadStream) checkPacketHeader(lengths []byte, h *hdfs.PacketHeaderProto, parseErr error) error {
	addr := datanodeAddr(s.reader)
	if parseErr != nil {
		return fmt.Errorf("datanode %s: packet header: %w", addr, parseErr)
	}
	payloadLen := int64(binary.BigEndian.Uint32(lengths))
	headerLen := int64(binary.BigEndian.Uint16(lengths[4:]))
	dataLen := int64(h.GetDataLen())
	switch {
	case dataLen < 0:
		return datanodeErrorf(addr, "packet header with dataLen %d", dataLen)
	case h.GetLastPacketInBlock() && dataLen != 0:
		return datanodeErrorf(addr, "the block's last packet with dataLen %d (it has no data)", dataLen)
	case !h.GetLastPacketInBlock() && dataLen == 0:
		return datanodeErrorf(addr, "packet with dataLen 0 before the block's last")
	case payloadLen+headerLen > maxPacketSize:
		return datanodeErrorf(addr, "packet of %d bytes, more than %d", payloadLen+headerLen, maxPacketSize)
	}
	chunkSize := int64(s.chunkSize)
	if chunkSize <= 0 {
		return datanodeErrorf(addr, "packet for a read with bytesPerChecksum %d", chunkSize)
	}
	numChunks := (dataLen + chunkSize - 1) / chunkSize
	if want := 4 + numChunks*int64(s.checksumSize) + dataLen; payloadLen != want {
		return datanodeErrorf(addr, "packet length %d, where its dataLen %d makes %d", payloadLen, dataLen, want)
	}
	return nil
}

// chunkPending reports whether a chunk a small read buffered (Read with
// fewer bytes than a chunk) still holds bytes; Read returns them before it
// starts the next packet or ends the block. Upstream looked at the
// packet's end first, and when the next packet was the block's last (an
// empty one, as a DataNode ends every block) it returned io.EOF with the
// chunk's rest still buffered: in reads of less than a chunk, every
// block's last chunk came short, and FileReader reconnected to read the
// rest (with checkBlockEnd, the read would fail instead).
func (s *blockReadStream) chunkPending() bool {
	return s.chunk.Len() > 0
}

// checkBlockEnd turns the stream's end (io.EOF) before the block's length
// into an error. Upstream returned it to FileReader as the block's end,
// which opened a new BlockReader at the same offset and read again: a
// DataNode that ends its blocks early (the block's last packet too soon,
// or a connection closed between packets) kept a read looping forever,
// and its failure was never recorded, so failover never moved past it.
func checkBlockEnd(br *BlockReader, err error) error {
	if err != io.EOF || uint64(br.Offset) >= br.Block.GetB().GetNumBytes() {
		return err
	}
	return datanodeErrorf(br.datanodes.currentDatanode, "the block ended at byte %d of %d: %v",
		br.Offset, br.Block.GetB().GetNumBytes(), io.ErrUnexpectedEOF)
}

// checkChecksumResponse refuses a block checksum response that is not
// SUCCESS. Upstream did not look at its status: a DataNode's refusal was
// an empty checksum and no error.
func checkChecksumResponse(addr string, resp *hdfs.BlockOpResponseProto) error {
	if resp.GetStatus() != hdfs.Status_SUCCESS {
		return datanodeErrorf(addr, "block checksum failed: %s (%s)", resp.GetStatus(), resp.GetMessage())
	}
	return nil
}
