package transfer

// hdfs-sink's tests of digest_md5_frames.go (see FORK.md).

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// pair is a client connection and the DataNode's end of it, wrapped with
// mirrored keys, as after a DIGEST-MD5 handshake.
type pair struct {
	name           string
	client, server func(net.Conn) digestMD5Conn
}

var (
	kic, kis = []byte("client-integrity"), []byte("server-integrity")
	kcc, kcs = []byte("client-confident"), []byte("server-confident")
	pairs    = []pair{
		{"integrity",
			func(c net.Conn) digestMD5Conn { return newDigestMD5IntegrityConn(c, kic, kis) },
			func(c net.Conn) digestMD5Conn { return newDigestMD5IntegrityConn(c, kis, kic) }},
		{"privacy",
			func(c net.Conn) digestMD5Conn { return newDigestMD5PrivacyConn(c, kic, kis, kcc, kcs) },
			func(c net.Conn) digestMD5Conn { return newDigestMD5PrivacyConn(c, kis, kic, kcs, kcc) }},
	}
)

// TestWrappedReadsAcrossFrames: the DataNode sends messages of several
// sizes, an empty one among them, and the client reads them back in
// pieces that straddle the frames. Upstream's Read lost the bytes a piece
// took from the end of one frame.
func TestWrappedReadsAcrossFrames(t *testing.T) {
	sizes := []int{100, 1, 3000, 0, 65536, 7}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			c, s := net.Pipe()
			c.SetDeadline(time.Now().Add(pipeDeadline)) // no read or write on the pipe can hang the test
			s.SetDeadline(time.Now().Add(pipeDeadline))
			defer c.Close()
			client, server := p.client(c), p.server(s)
			var want []byte
			for i, n := range sizes {
				want = append(want, bytes.Repeat([]byte{byte('a' + i)}, n)...)
			}
			go func() {
				defer s.Close()
				off := 0
				for _, n := range sizes {
					if w, err := server.Write(want[off : off+n]); w != n || err != nil {
						t.Errorf("server wrote %d of %d: %v", w, n, err)
						return
					}
					off += n
				}
			}()
			got := make([]byte, 0, len(want))
			piece := make([]byte, 13)
			for len(got) < len(want) {
				size := len(piece)
				if left := len(want) - len(got); left < size {
					size = left
				}
				n, err := client.Read(piece[:size])
				if err != nil {
					t.Fatalf("read after %d of %d bytes: %v", len(got), len(want), err)
				}
				got = append(got, piece[:n]...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes that differ from the %d sent", len(got), len(want))
			}
		})
	}
}

// TestWrappedReadHandsOutBufferedBytesFirst: with bytes of a frame still
// buffered, a read returns them without waiting for the next frame (which
// here never comes: the DataNode waits for the client's answer).
func TestWrappedReadHandsOutBufferedBytesFirst(t *testing.T) {
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			c, s := net.Pipe()
			c.SetDeadline(time.Now().Add(pipeDeadline)) // no read or write on the pipe can hang the test
			s.SetDeadline(time.Now().Add(pipeDeadline))
			defer c.Close()
			defer s.Close()
			client, server := p.client(c), p.server(s)
			go server.Write([]byte("0123456789"))
			first := make([]byte, 4)
			if _, err := io.ReadFull(client, first); err != nil {
				t.Fatal(err)
			}
			rest := make([]byte, 100)
			client.SetReadDeadline(time.Now().Add(5 * time.Second)) // upstream blocked here, reading a frame
			n, err := client.Read(rest)
			if err != nil || string(rest[:n]) != "456789" {
				t.Fatalf("second read: %q, %v; want the buffered %q", rest[:n], err, "456789")
			}
		})
	}
}

// TestWrappedReadRefusesBadFrames: a corrupt stream is an error naming
// the cause, never a panic or a huge allocation.
func TestWrappedReadRefusesBadFrames(t *testing.T) {
	frame := func(size int32, body []byte) []byte {
		b := make([]byte, 4, 4+len(body))
		binary.BigEndian.PutUint32(b, uint32(size))
		return append(b, body...)
	}
	for _, tc := range []struct {
		name, want string
		wire       []byte
	}{
		{"shorter than its trailer", "wrapped frame of 3 bytes", frame(3, []byte("abc"))},
		{"negative length", "wrapped frame of -1 bytes", frame(-1, nil)},
		{"huge length", "wrapped frame of 2147483647 bytes", frame(1<<31-1, nil)},
		{"cut short", "unexpected EOF", frame(40, []byte("only twenty bytes..."))},
		{"bad MAC", "failed", frame(20, bytes.Repeat([]byte{1}, 20))},
	} {
		for _, p := range pairs {
			t.Run(tc.name+"/"+p.name, func(t *testing.T) {
				c, s := net.Pipe()
				c.SetDeadline(time.Now().Add(pipeDeadline)) // no read or write on the pipe can hang the test
				s.SetDeadline(time.Now().Add(pipeDeadline))
				defer c.Close()
				go func() { s.Write(tc.wire); s.Close() }()
				client := p.client(c)
				_, err := client.Read(make([]byte, 10))
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				// What came of a bad frame is never handed out later.
				if n, err := client.Read(make([]byte, 10)); n != 0 || err == nil {
					t.Fatalf("read after the failure: %d bytes, %v", n, err)
				}
			})
		}
	}
}

// TestWrappedWriteCountsTheCallersBytes: Write reports len(b), not the
// frame's length (io.Copy refuses a writer that reports more).
func TestWrappedWriteCountsTheCallersBytes(t *testing.T) {
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			c, s := net.Pipe()
			c.SetDeadline(time.Now().Add(pipeDeadline)) // no read or write on the pipe can hang the test
			s.SetDeadline(time.Now().Add(pipeDeadline))
			defer c.Close()
			go io.Copy(io.Discard, s)
			n, err := io.Copy(p.client(c), strings.NewReader("twelve bytes"))
			if n != 12 || err != nil {
				t.Fatalf("io.Copy: %d, %v; want 12, nil", n, err)
			}
			s.Close()
		})
	}
}
