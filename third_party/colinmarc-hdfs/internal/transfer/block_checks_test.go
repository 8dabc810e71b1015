package transfer

// hdfs-sink's tests of block_checks.go (see FORK.md): a fake DataNode over
// net.Pipe (every read and write under pipeDeadline) answers a block read,
// a block write or a block checksum with malformed bytes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
)

const testDatanode = "10.0.0.5:9866"

func testBlock(numBytes uint64) *hdfs.LocatedBlockProto {
	return &hdfs.LocatedBlockProto{
		B: &hdfs.ExtendedBlockProto{
			PoolId:          proto.String("BP-1"),
			BlockId:         proto.Uint64(1073741825),
			GenerationStamp: proto.Uint64(1001),
			NumBytes:        proto.Uint64(numBytes),
		},
		Offset: proto.Uint64(0),
		Locs: []*hdfs.DatanodeInfoProto{{Id: &hdfs.DatanodeIDProto{
			IpAddr:       proto.String("10.0.0.5"),
			HostName:     proto.String("dn1"),
			DatanodeUuid: proto.String("dn1-uuid"),
			XferPort:     proto.Uint32(9866),
			InfoPort:     proto.Uint32(9864),
			IpcPort:      proto.Uint32(9867),
		}}},
		Corrupt:    proto.Bool(false),
		BlockToken: fakeToken,
	}
}

// opDataNode answers one block operation: it reads the op's header and
// message, writes reply, and then, when hold is set, keeps the connection
// open (reading) until the client closes it or the deadline passes; if
// not, it closes the connection.
type opDataNode struct {
	reply []byte
	hold  bool
}

func (d opDataNode) serve(s net.Conn) error {
	defer s.Close()
	s.SetDeadline(time.Now().Add(pipeDeadline))
	header := make([]byte, 3)
	if _, err := io.ReadFull(s, header); err != nil {
		return err
	}
	size, err := binary.ReadUvarint(oneByte{s})
	if err != nil {
		return err
	}
	if _, err := io.CopyN(io.Discard, s, int64(size)); err != nil {
		return err
	}
	if _, err := s.Write(d.reply); err != nil {
		return err
	}
	if d.hold {
		io.Copy(io.Discard, s)
	}
	return nil
}

// pipeTo runs d on a net.Pipe and returns a DialFunc for its client end,
// named testDatanode, and a function that closes that end and waits for d.
func (d opDataNode) pipeTo(t *testing.T) (func(ctx context.Context, network, addr string) (net.Conn, error), func()) {
	c, s := net.Pipe()
	served := make(chan error, 1)
	go func() { served <- d.serve(s) }()
	dial := func(context.Context, string, string) (net.Conn, error) {
		c.SetDeadline(time.Now().Add(pipeDeadline))
		return namedConn{c, testDatanode}, nil
	}
	return dial, func() {
		c.Close()
		if err := <-served; err != nil && !errors.Is(err, io.ErrClosedPipe) {
			t.Logf("fake DataNode: %v", err)
		}
	}
}

func prefixed(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return append(binary.AppendUvarint(nil, uint64(len(b))), b...)
}

func readResponse(checksum hdfs.ChecksumTypeProto, bytesPerChecksum uint32, chunkOffset uint64) []byte {
	return prefixed(&hdfs.BlockOpResponseProto{
		Status: hdfs.Status_SUCCESS.Enum(),
		ReadOpChecksumInfo: &hdfs.ReadOpChecksumInfoProto{
			Checksum:    &hdfs.ChecksumProto{Type: checksum.Enum(), BytesPerChecksum: proto.Uint32(bytesPerChecksum)},
			ChunkOffset: proto.Uint64(chunkOffset),
		},
	})
}

// rawPacket is a packet as a DataNode writes it: the payload's length, the
// header's length, the header, then checksums and data (rest).
func rawPacket(payloadLen uint32, header []byte, rest []byte) []byte {
	b := make([]byte, 6, 6+len(header)+len(rest))
	binary.BigEndian.PutUint32(b, payloadLen)
	binary.BigEndian.PutUint16(b[4:], uint16(len(header)))
	return append(append(b, header...), rest...)
}

func packetHeader(offset, seqno int64, last bool, dataLen int32) []byte {
	b, err := proto.Marshal(&hdfs.PacketHeaderProto{
		OffsetInBlock:     proto.Int64(offset),
		Seqno:             proto.Int64(seqno),
		LastPacketInBlock: proto.Bool(last),
		DataLen:           proto.Int32(dataLen),
	})
	if err != nil {
		panic(err)
	}
	return b
}

// packet is a well-formed packet of data with CRC32C checksums, one per
// bytesPerChecksum bytes (none when sums is false).
func packet(offset, seqno int64, last bool, data []byte, bytesPerChecksum int, sums bool) []byte {
	var rest []byte
	if sums {
		tab := crc32.MakeTable(crc32.Castagnoli)
		for off := 0; off < len(data); off += bytesPerChecksum {
			end := off + bytesPerChecksum
			if end > len(data) {
				end = len(data)
			}
			rest = binary.BigEndian.AppendUint32(rest, crc32.Checksum(data[off:end], tab))
		}
	}
	rest = append(rest, data...)
	return rawPacket(uint32(4+len(rest)), packetHeader(offset, seqno, last, int32(len(data))), rest)
}

func testData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/256)
	}
	return b
}

// readAll reads br in reads of bufSize bytes until an error (io.EOF
// included); a panic is returned as an error naming it, and 100 reads
// with neither an error nor data as an error saying so.
func readAll(br *BlockReader, bufSize int) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	buf := make([]byte, bufSize)
	for empty := 0; empty < 100; {
		n, err := br.Read(buf)
		data = append(data, buf[:n]...)
		if err != nil {
			return data, err
		}
		if n == 0 {
			empty++
		}
	}
	return data, errors.New("100 reads returned no data and no error")
}

// TestBlockReaderRefusesMalformedDataNodeBytes: each row is a DataNode's
// answer to a block read that upstream's code panicked on, waited on until
// the deadline, or read as good data (wrong bytes, or a block's end); each
// is an error naming the DataNode and what it sent, from the BlockReader's
// failover (a failed DataNode).
func TestBlockReaderRefusesMalformedDataNodeBytes(t *testing.T) {
	const crc32c, null = hdfs.ChecksumTypeProto_CHECKSUM_CRC32C, hdfs.ChecksumTypeProto_CHECKSUM_NULL
	data := testData(1024)
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	lastPacket := func(offset, seqno int64) []byte { return packet(offset, seqno, true, nil, 512, true) }
	for _, tc := range []struct {
		name     string
		numBytes uint64
		reply    []byte
		hold     bool
		bufSize  int
		want     string
	}{
		{
			// Upstream: integer divide by zero in blockReadStream.Read.
			name: "bytesPerChecksum 0", numBytes: 512,
			reply: cat(readResponse(crc32c, 0, 0), packet(0, 0, false, data[:512], 512, true), lastPacket(512, 1)),
			want:  "datanode 10.0.0.5:9866: read response with bytesPerChecksum 0",
		},
		{
			// Upstream: the same division (a NULL checksum of 0 bytes).
			name: "a success without checksum info", numBytes: 512,
			reply: cat(prefixed(&hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum(), Message: proto.String("no checksum info")}), packet(0, 0, false, data[:512], 512, false), lastPacket(512, 1)),
			want:  "datanode 10.0.0.5:9866: read response with bytesPerChecksum 0",
		},
		{
			// Upstream: the block's bytes from 512 returned as its bytes from 0.
			name: "chunkOffset past the read's offset", numBytes: 1024,
			reply: cat(readResponse(crc32c, 512, 512), packet(512, 0, false, data[512:], 512, true), lastPacket(1024, 1)),
			want:  "datanode 10.0.0.5:9866: read response with chunkOffset 512, past the read's offset 0",
		},
		{
			// Upstream: bytes.Buffer.Grow: negative count.
			name: "negative dataLen", numBytes: 512,
			reply: cat(readResponse(crc32c, 512, 0), rawPacket(4, packetHeader(0, 0, false, -4096), nil)),
			hold:  true,
			want:  "datanode 10.0.0.5:9866: packet header with dataLen -4096",
		},
		{
			// Upstream: the parse error dropped, an empty packet read,
			// then a wait for the next until the deadline.
			name: "packet header that does not parse", numBytes: 512,
			reply: cat(readResponse(crc32c, 512, 0), rawPacket(4, []byte{0x08}, nil)),
			hold:  true,
			want:  "datanode 10.0.0.5:9866: packet header: ",
		},
		{
			name: "packet header without its required fields", numBytes: 512,
			reply: cat(readResponse(crc32c, 512, 0), rawPacket(4, nil, nil)),
			hold:  true,
			want:  "datanode 10.0.0.5:9866: packet header: ",
		},
		{
			// Upstream: 100 bytes, then io.EOF (the rest of the chunk
			// was buffered, and dropped at the last packet).
			name: "the block's last packet carries data", numBytes: 512, bufSize: 100,
			reply: cat(readResponse(crc32c, 512, 0), packet(0, 0, true, data[:512], 512, true)),
			want:  "datanode 10.0.0.5:9866: the block's last packet with dataLen 512",
		},
		{
			// Upstream: a read of 0 bytes and no error, then a wait.
			name: "a packet with no data before the last", numBytes: 512,
			reply: cat(readResponse(crc32c, 512, 0), packet(0, 0, false, nil, 512, true)),
			hold:  true,
			want:  "datanode 10.0.0.5:9866: packet with dataLen 0 before the block's last",
		},
		{
			// Upstream: 16 MiB of checksums allocated (8 GiB at
			// bytesPerChecksum 1), then a wait for them.
			name: "a packet of 2 GiB", numBytes: 512,
			reply: cat(readResponse(crc32c, 512, 0), rawPacket(4+4194304*4+math.MaxInt32, packetHeader(0, 0, false, math.MaxInt32), nil)),
			hold:  true,
			want:  "bytes, more than 16777216",
		},
		{
			// Upstream: read by dataLen, the payload's length ignored
			// (with no checksums, the next packet is read from the
			// wrong place unnoticed).
			name: "payload length other than dataLen makes", numBytes: 512,
			reply: cat(readResponse(null, 512, 0), rawPacket(4+256, packetHeader(0, 0, false, 512), data[:512]), packet(512, 1, true, nil, 512, false)),
			want:  "datanode 10.0.0.5:9866: packet length 260, where its dataLen 512 makes 516",
		},
		{
			// Upstream: io.EOF at byte 512 (FileReader read the
			// block again from there, from the same DataNode, forever).
			name: "the block's last packet too soon", numBytes: 1024,
			reply: cat(readResponse(crc32c, 512, 0), packet(0, 0, false, data[:512], 512, true), lastPacket(512, 1)),
			want:  "datanode 10.0.0.5:9866: the block ended at byte 512 of 1024",
		},
		{
			name: "connection closed between packets", numBytes: 1024,
			reply: cat(readResponse(crc32c, 512, 0), packet(0, 0, false, data[:512], 512, true)),
			want:  "datanode 10.0.0.5:9866: the block ended at byte 512 of 1024",
		},
		{
			// Upstream: a wait for 5 bytes until the deadline.
			name: "a 3-byte refusal, the connection left open", numBytes: 512,
			reply: prefixed(&hdfs.BlockOpResponseProto{Status: hdfs.Status_ERROR.Enum()}),
			hold:  true,
			want:  "read failed: ERROR",
		},
		{
			// Upstream: 2 MiB allocated, then a wait for them.
			name: "a response of 2 MiB", numBytes: 512,
			reply: binary.AppendUvarint(nil, 2<<20),
			hold:  true,
			want:  "datanode 10.0.0.5:9866: BlockOpResponseProto of 2097152 bytes, more than 1048576",
		},
		{
			// Upstream: 32 GiB allocated (not run against upstream:
			// it may end the test binary).
			name: "a response of 32 GiB", numBytes: 512,
			reply: []byte{0xff, 0xff, 0xff, 0xff, 0x7f},
			hold:  true,
			want:  "datanode 10.0.0.5:9866: BlockOpResponseProto of 34359738367 bytes, more than 1048576",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dial, done := opDataNode{reply: tc.reply, hold: tc.hold}.pipeTo(t)
			defer done()
			br := &BlockReader{ClientName: "test", Block: testBlock(tc.numBytes)}
			br.DialFunc = dial
			br.SetDeadline(time.Now().Add(pipeDeadline))
			bufSize := tc.bufSize
			if bufSize == 0 {
				bufSize = 512
			}
			_, err := readAll(br, bufSize)
			if err == nil || err == io.EOF || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("read: %v; want an error with %q", err, tc.want)
			}
		})
	}
}

// TestBlockReaderReadsGoodBlock: the fake DataNode's well-formed answers
// read through (the checks refuse none of them), from 0 and from an offset
// inside a chunk, in large and small reads.
func TestBlockReaderReadsGoodBlock(t *testing.T) {
	data := testData(1300)
	for _, tc := range []struct {
		name            string
		offset, bufSize int
		sums            hdfs.ChecksumTypeProto
	}{
		{"from 0, large reads", 0, 4096, hdfs.ChecksumTypeProto_CHECKSUM_CRC32C},
		{"from 0, small reads", 0, 100, hdfs.ChecksumTypeProto_CHECKSUM_CRC32C},
		{"from inside a chunk", 700, 512, hdfs.ChecksumTypeProto_CHECKSUM_CRC32C},
		{"no checksums", 0, 512, hdfs.ChecksumTypeProto_CHECKSUM_NULL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sums := tc.sums != hdfs.ChecksumTypeProto_CHECKSUM_NULL
			chunkOffset := tc.offset - tc.offset%512
			reply := readResponse(tc.sums, 512, uint64(chunkOffset))
			seqno := int64(0)
			for off := chunkOffset; off < len(data); off += 1024 {
				end := off + 1024
				if end > len(data) {
					end = len(data)
				}
				reply = append(reply, packet(int64(off), seqno, false, data[off:end], 512, sums)...)
				seqno++
			}
			reply = append(reply, packet(int64(len(data)), seqno, true, nil, 512, sums)...)
			dial, done := opDataNode{reply: reply}.pipeTo(t)
			defer done()
			br := &BlockReader{ClientName: "test", Block: testBlock(uint64(len(data))), Offset: int64(tc.offset)}
			br.DialFunc = dial
			br.SetDeadline(time.Now().Add(pipeDeadline))
			got, err := readAll(br, tc.bufSize)
			if err != io.EOF {
				t.Fatalf("read: %v; want io.EOF after the block", err)
			}
			if !bytes.Equal(got, data[tc.offset:]) {
				t.Fatalf("read %d bytes, not the block's %d from %d", len(got), len(data)-tc.offset, tc.offset)
			}
		})
	}
}

// TestBlockWriterReadsShortRefusal: a refusal of a block write shorter than
// 5 bytes, the connection left open. Upstream waited for 5 bytes until the
// deadline (the error: a timeout).
func TestBlockWriterReadsShortRefusal(t *testing.T) {
	dial, done := opDataNode{reply: prefixed(&hdfs.BlockOpResponseProto{Status: hdfs.Status_ERROR.Enum()}), hold: true}.pipeTo(t)
	defer done()
	bw := &BlockWriter{ClientName: "test", Block: testBlock(0), BlockSize: 1 << 20}
	bw.DialFunc = dial
	bw.SetDeadline(time.Now().Add(pipeDeadline))
	_, err := bw.Write([]byte("x"))
	if err == nil || !strings.Contains(err.Error(), "write failed: ERROR") {
		t.Fatalf("write: %v; want the DataNode's refusal", err)
	}
}

// TestChecksumReaderReadsStatus: a refused block checksum is an error.
// Upstream read no status: an empty checksum and no error.
func TestChecksumReaderReadsStatus(t *testing.T) {
	refusal := prefixed(&hdfs.BlockOpResponseProto{Status: hdfs.Status_ERROR_ACCESS_TOKEN.Enum(), Message: proto.String("block token expired")})
	t.Run("readChecksum", func(t *testing.T) {
		dial, done := opDataNode{reply: refusal}.pipeTo(t)
		defer done()
		cr := &ChecksumReader{Block: testBlock(512)}
		cr.DialFunc = dial
		cr.SetDeadline(time.Now().Add(pipeDeadline))
		sum, err := cr.readChecksum(testDatanode)
		const want = "datanode 10.0.0.5:9866: block checksum failed: ERROR_ACCESS_TOKEN (block token expired)"
		if err == nil || err.Error() != want {
			t.Fatalf("readChecksum: %x, %v; want %q", sum, err, want)
		}
	})
	t.Run("ReadChecksum", func(t *testing.T) {
		dial, done := opDataNode{reply: refusal}.pipeTo(t)
		defer done()
		cr := &ChecksumReader{Block: testBlock(512)}
		cr.DialFunc = dial
		cr.SetDeadline(time.Now().Add(pipeDeadline))
		if sum, err := cr.ReadChecksum(); err == nil {
			t.Fatalf("ReadChecksum: %x, no error; want one", sum)
		}
	})
}

// TestReadPrefixedMessageReadsOnlyItsOwnBytes: two acks shorter than 5
// bytes back to back, as a write pipeline's ack loop reads them (through a
// bufio.Reader). Upstream read 5 bytes for the first one's length, took
// the second's first bytes with it, and refused the first.
func TestReadPrefixedMessageReadsOnlyItsOwnBytes(t *testing.T) {
	wire := append(prefixed(&hdfs.PipelineAckProto{Seqno: proto.Int64(1)}), prefixed(&hdfs.PipelineAckProto{Seqno: proto.Int64(2)})...)
	if len(wire) >= 10 {
		t.Fatalf("the acks are %d bytes, not short", len(wire))
	}
	r := bufio.NewReader(bytes.NewReader(wire))
	for want := int64(1); want <= 2; want++ {
		ack := &hdfs.PipelineAckProto{}
		if err := readPrefixedMessage(r, ack); err != nil {
			t.Fatalf("ack %d: %v", want, err)
		}
		if ack.GetSeqno() != want {
			t.Fatalf("ack seqno %d; want %d", ack.GetSeqno(), want)
		}
	}
	if err := readPrefixedMessage(r, &hdfs.PipelineAckProto{}); err != io.ErrUnexpectedEOF {
		t.Fatalf("after the acks: %v; want io.ErrUnexpectedEOF", err)
	}
}
