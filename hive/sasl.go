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

// WithSASL makes the client authenticate with m on each connection. Only
// authentication is negotiated (no integrity or privacy layer): a
// mechanism must refuse a server that insists on one.
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
	sock *thrift.TSocket
	r    *bufio.Reader
	wbuf bytes.Buffer
	rbuf bytes.Reader
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
	done := false
	if err := t.writeMessage(saslOK, initial); err != nil {
		return err
	}
	for {
		status, payload, err := t.readMessage()
		if err != nil {
			return err
		}
		switch status {
		case saslComplete:
			if !done {
				return errors.New("SASL: the metastore reported success before the exchange ended")
			}
			return nil
		case saslOK:
		default:
			return fmt.Errorf("SASL %s: the metastore refused: %s", m.Name(), payload)
		}
		resp, last, err := sess.Step(payload)
		if err != nil {
			return err
		}
		status = saslOK
		if last {
			done, status = true, saslComplete
		}
		if err := t.writeMessage(status, resp); err != nil {
			return err
		}
	}
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
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(t.wbuf.Len()))
	_, err := t.sock.Write(append(hdr[:], t.wbuf.Bytes()...))
	t.wbuf.Reset()
	return err
}

func (t *saslTransport) RemainingBytes() uint64 { return uint64(t.rbuf.Len()) }
func (t *saslTransport) Open() error            { return nil }
func (t *saslTransport) IsOpen() bool           { return t.sock.IsOpen() }
func (t *saslTransport) Close() error           { return t.sock.Close() }
