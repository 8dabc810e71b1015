package hive

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/thrift/lib/go/thrift"
)

// SASLMechanism is a client SASL mechanism for the Metastore's Thrift SASL
// transport (hive.metastore.sasl.enabled), such as Kerberos GSSAPI.
type SASLMechanism interface {
	Name() string
	// Start begins an exchange with the metastore on host (as dialled, for
	// a _HOST principal) and returns its initial response.
	Start(host string) (SASLSession, []byte, error)
}

// SASLSession answers the server's challenges; done means the client has
// sent its last message.
type SASLSession interface {
	Step(challenge []byte) (response []byte, done bool, err error)
}

// SASLLayer is a session that negotiated a security layer (integrity or
// privacy, Wrapping true): every frame is then wrapped and unwrapped.
type SASLLayer interface {
	Wrapping() bool
	Wrap(p []byte) ([]byte, error)
	Unwrap(b []byte) ([]byte, error)
}

// WithSASL makes the client authenticate with m on each connection, and
// protect frames with the security layer the session negotiated, if any.
func WithSASL(m SASLMechanism) Option {
	return optionFunc(func(c *config) { c.sasl = m })
}

// Negotiation status bytes of Thrift's TSaslTransport.
const (
	saslStart    = 1
	saslOK       = 2
	saslBad      = 3
	saslError    = 4
	saslComplete = 5
)

// maxSASLFrame bounds what a server may announce, so a wrong peer (a plain
// Thrift server answering SASL bytes) cannot make us allocate gigabytes.
const maxSASLFrame = 64 << 20

// saslTransport is Thrift's TSaslClientTransport: a negotiation of
// [status byte][4-byte length][payload] messages, then frames of
// [4-byte length][payload] in each direction.
type saslTransport struct {
	sock  *thrift.TSocket
	r     *bufio.Reader
	wbuf  bytes.Buffer
	rbuf  bytes.Reader
	layer SASLLayer // nil: frames travel as they are
}

func newSASLTransport(sock *thrift.TSocket) *saslTransport {
	return &saslTransport{sock: sock, r: bufioReader(sock)}
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, bufferSize) }

// handshake runs the SASL negotiation with the server on host.
func (t *saslTransport) handshake(m SASLMechanism, host string) error {
	sess, initial, err := m.Start(host)
	if err != nil {
		return err
	}
	if err := t.writeMessage(saslStart, []byte(m.Name())); err != nil {
		return err
	}
	if err := t.writeMessage(saslOK, initial); err != nil {
		return err
	}
	for done := false; ; {
		status, payload, err := t.readMessage()
		if err != nil {
			return err
		}
		if status == saslComplete {
			return t.complete(sess, done)
		}
		if status != saslOK {
			return fmt.Errorf("SASL %s: the metastore refused: %s", m.Name(), payload)
		}
		if done, err = t.answer(sess, payload); err != nil {
			return err
		}
	}
}

// answer sends the session's response to one challenge, marked COMPLETE
// when it is the session's last.
func (t *saslTransport) answer(sess SASLSession, challenge []byte) (bool, error) {
	resp, last, err := sess.Step(challenge)
	if err != nil {
		return false, err
	}
	status := byte(saslOK)
	if last {
		status = saslComplete
	}
	return last, t.writeMessage(status, resp)
}

// complete ends a negotiation the server reported successful, with the
// session's security layer if it negotiated one.
func (t *saslTransport) complete(sess SASLSession, done bool) error {
	if !done {
		return errors.New("SASL: the metastore reported success before the exchange ended")
	}
	if l, ok := sess.(SASLLayer); ok && l.Wrapping() {
		t.layer = l
	}
	return nil
}

func (t *saslTransport) writeMessage(status byte, payload []byte) error {
	hdr := [5]byte{status}
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if _, err := t.sock.Write(append(hdr[:], payload...)); err != nil {
		return fmt.Errorf("SASL: write: %w", err)
	}
	return nil
}

func (t *saslTransport) readMessage() (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(t.r, hdr[:]); err != nil {
		return 0, nil, fmt.Errorf("SASL: read (does the metastore use SASL? hive.metastore.sasl.enabled): %w", err)
	}
	payload, err := t.readN(binary.BigEndian.Uint32(hdr[1:]))
	if err != nil {
		return 0, nil, err
	}
	if hdr[0] < saslStart || hdr[0] > saslComplete {
		return 0, nil, fmt.Errorf("SASL: status %d is not Thrift SASL (is hive.metastore.sasl.enabled set on the metastore?)", hdr[0])
	}
	return hdr[0], payload, nil
}

func (t *saslTransport) readN(n uint32) ([]byte, error) {
	if n > maxSASLFrame {
		return nil, fmt.Errorf("SASL: frame of %d bytes announced: not a Thrift SASL server", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(t.r, b); err != nil {
		return nil, fmt.Errorf("SASL: read: %w", err)
	}
	return b, nil
}

// Read serves the current frame, reading the next one when it is used up.
func (t *saslTransport) Read(p []byte) (int, error) {
	if t.rbuf.Len() == 0 {
		var hdr [4]byte
		if _, err := io.ReadFull(t.r, hdr[:]); err != nil {
			return 0, err
		}
		frame, err := t.readN(binary.BigEndian.Uint32(hdr[:]))
		if err != nil {
			return 0, err
		}
		if t.layer != nil {
			if frame, err = t.layer.Unwrap(frame); err != nil {
				return 0, fmt.Errorf("SASL: unwrap a frame from the metastore: %w", err)
			}
		}
		t.rbuf.Reset(frame)
	}
	return t.rbuf.Read(p)
}

func (t *saslTransport) Write(p []byte) (int, error) { return t.wbuf.Write(p) }

// Flush sends what was written as one frame.
func (t *saslTransport) Flush(context.Context) error {
	if t.wbuf.Len() == 0 {
		return nil
	}
	frame := t.wbuf.Bytes()
	if t.layer != nil {
		var err error
		if frame, err = t.layer.Wrap(frame); err != nil {
			return fmt.Errorf("SASL: wrap a frame: %w", err)
		}
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(frame)))
	_, err := t.sock.Write(append(hdr[:], frame...))
	t.wbuf.Reset()
	return err
}

func (t *saslTransport) RemainingBytes() uint64 { return uint64(t.rbuf.Len()) }
func (t *saslTransport) Open() error            { return nil }
func (t *saslTransport) IsOpen() bool           { return t.sock.IsOpen() }
func (t *saslTransport) Close() error           { return t.sock.Close() }
