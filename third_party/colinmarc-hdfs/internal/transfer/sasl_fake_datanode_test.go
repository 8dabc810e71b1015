package transfer

// hdfs-sink's fake DataNode for the SASL dialer's tests (see FORK.md): the
// server's side of the DIGEST-MD5 handshake over net.Pipe, every read and
// write under a deadline.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	hadoop "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_common"
	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
	"github.com/colinmarc/hdfs/v2/internal/sasl"
)

// pipeDeadline bounds every read and write on a test's net.Pipe: a test
// that waits for bytes that never come fails instead of hanging.
const pipeDeadline = 3 * time.Second

const fakeCnonce = "fake-client-nonce"

var fakeToken = &hadoop.TokenProto{
	Identifier: []byte("block-token-identifier"),
	Password:   []byte("block-token-password"),
	Kind:       proto.String("HDFS_BLOCK_TOKEN"),
	Service:    proto.String(""),
}

// fakeDataNode answers one SASL handshake. step1, when set, is sent
// instead of the challenge (and the handshake ends there); otherwise the
// challenge offers qop (and RC4 for auth-conf), and final builds the second
// reply from the handshake as the DataNode sees it.
type fakeDataNode struct {
	qop   string
	step1 *hdfs.DataTransferEncryptorMessageProto
	final func(*serverHandshake) *hdfs.DataTransferEncryptorMessageProto
	// raw, when set, is written instead of the second reply (bytes a
	// protobuf message cannot be made of).
	raw []byte
}

// serverHandshake is the DataNode's view of a finished digest exchange:
// what it needs to answer rspauth and to wrap keys for the client.
type serverHandshake struct {
	d digestMD5Handshake
}

func (s *serverHandshake) rspauth() []byte {
	return []byte("rspauth=" + s.d.compute(false))
}

// wrap wraps each of msgs as the DataNode's end of the negotiated
// integrity or privacy layer would, in order (their sequence numbers
// follow), without the frame's length.
func (s *serverHandshake) wrap(msgs ...[]byte) [][]byte {
	kic, kis := generateIntegrityKeys(s.d.a1())
	var sink captureConn
	var conn digestMD5Conn
	if s.d.token.Qop[0] == sasl.QopPrivacy {
		kcc, kcs := generatePrivacyKeys(s.d.a1(), s.d.cipher)
		conn = newDigestMD5PrivacyConn(&sink, kis, kic, kcs, kcc)
	} else {
		conn = newDigestMD5IntegrityConn(&sink, kis, kic)
	}
	var out [][]byte
	for _, m := range msgs {
		sink.buf.Reset()
		conn.Write(m)
		out = append(out, append([]byte(nil), sink.buf.Bytes()[4:]...))
	}
	return out
}

// captureConn keeps what is written to it.
type captureConn struct {
	net.Conn
	buf bytes.Buffer
}

func (c *captureConn) Write(b []byte) (int, error) { return c.buf.Write(b) }

// serve plays the DataNode on s until its reply is sent.
func (f *fakeDataNode) serve(s net.Conn) error {
	s.SetDeadline(time.Now().Add(pipeDeadline))
	magic := make([]byte, 4)
	if _, err := io.ReadFull(s, magic); err != nil {
		return err
	}
	if !bytes.Equal(magic, []byte{0xDE, 0xAD, 0xBE, 0xEF}) {
		return fmt.Errorf("magic %x", magic)
	}
	first := &hdfs.DataTransferEncryptorMessageProto{}
	if err := readDelimited(s, first); err != nil {
		return err
	}
	if f.step1 != nil {
		return writeDelimited(s, f.step1)
	}
	challenge := fmt.Sprintf(`realm="0",nonce="fake-server-nonce",qop="%s",charset=utf-8,algorithm=md5-sess`, f.qop)
	if f.qop == sasl.QopPrivacy {
		challenge += `,cipher="rc4"`
	}
	if err := writeDelimited(s, &hdfs.DataTransferEncryptorMessageProto{
		Status:  hdfs.DataTransferEncryptorMessageProto_SUCCESS.Enum(),
		Payload: []byte(challenge),
	}); err != nil {
		return err
	}
	second := &hdfs.DataTransferEncryptorMessageProto{}
	if err := readDelimited(s, second); err != nil {
		return err
	}
	if f.raw != nil {
		_, err := s.Write(f.raw)
		return err
	}
	token, err := sasl.ParseChallenge([]byte(challenge))
	if err != nil {
		return err
	}
	hs := &serverHandshake{digestMD5Handshake{
		authID:   []byte(base64.StdEncoding.EncodeToString(fakeToken.Identifier)),
		passwd:   base64.StdEncoding.EncodeToString(fakeToken.Password),
		hostname: authServer,
		service:  authProtocol,
		token:    token,
		cnonce:   fakeCnonce,
		cipher:   chooseCipher(token.Cipher),
	}}
	return writeDelimited(s, f.final(hs))
}

// dial runs the SASL dialer against f over net.Pipe, the client's end
// named addr, and returns what the dialer returned; panics in the dialer
// are returned as errors naming them.
func (f *fakeDataNode) dial(t *testing.T, addr string) (conn net.Conn, err error) {
	t.Helper()
	oldCnonce := genCnonce
	genCnonce = func() (string, error) { return fakeCnonce, nil }
	defer func() { genCnonce = oldCnonce }()

	c, s := net.Pipe()
	served := make(chan error, 1)
	go func() { served <- f.serve(s) }()
	defer func() {
		c.Close()
		if err := <-served; err != nil {
			t.Logf("fake DataNode: %v", err)
		}
		s.Close()
	}()
	defer func() {
		if p := recover(); p != nil {
			conn, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	dialer := &SaslDialer{
		DialFunc: func(ctx context.Context, network, _ string) (net.Conn, error) {
			c.SetDeadline(time.Now().Add(pipeDeadline))
			return namedConn{c, addr}, nil
		},
		Token: fakeToken,
	}
	return dialer.DialContext(context.Background(), "tcp", addr)
}

// namedConn is a net.Pipe end with a TCP-like remote address.
type namedConn struct {
	net.Conn
	addr string
}

func (n namedConn) RemoteAddr() net.Addr { return fakeAddr(n.addr) }

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

// readDelimited and writeDelimited are Hadoop's writeDelimitedTo and
// vintPrefixed, the DataNode's way of framing handshake messages.
func readDelimited(r io.Reader, m proto.Message) error {
	size, err := binary.ReadUvarint(oneByte{r})
	if err != nil {
		return err
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	return proto.Unmarshal(b, m)
}

func writeDelimited(w io.Writer, m proto.Message) error {
	b, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	_, err = w.Write(append(binary.AppendUvarint(nil, uint64(len(b))), b...))
	return err
}

type oneByte struct{ io.Reader }

func (r oneByte) ReadByte() (byte, error) {
	var b [1]byte
	_, err := io.ReadFull(r.Reader, b[:])
	return b[0], err
}
