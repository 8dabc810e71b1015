package kerberos

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
)

// A negotiated SASL security layer wraps every message after the exchange
// in an RFC 4121 wrap token: signed (integrity) or sealed, that is
// encrypted and signed (privacy), each with its own sequence number.

// Wrap flags of RFC 4121 §4.2.2.
const (
	flagSentByAcceptor = 0x01
	flagSealed         = 0x02
	flagAcceptorSubkey = 0x04
)

// layerState is the negotiated layer and the initiator's sequence number.
type layerState struct {
	mu  sync.Mutex
	bit byte // layerNone, layerIntegrity or layerPrivacy; 0 before negotiation
	seq uint64
}

// strongest picks the layer to use from the server's offer: privacy, then
// integrity, then none. Taking the strongest offered is never a downgrade.
func strongest(offer byte) byte {
	for _, b := range []byte{layerPrivacy, layerIntegrity, layerNone} {
		if offer&b != 0 {
			return b
		}
	}
	return 0
}

// Wrapping reports whether messages after the exchange must be wrapped.
func (s *SASL) Wrapping() bool { return s.layer.bit == layerIntegrity || s.layer.bit == layerPrivacy }

// Layer names the negotiated layer, for logs.
func (s *SASL) Layer() string {
	switch s.layer.bit {
	case layerPrivacy:
		return "privacy"
	case layerIntegrity:
		return "integrity"
	}
	return "authentication"
}

func (s *SASL) nextSeq() uint64 {
	s.layer.mu.Lock()
	defer s.layer.mu.Unlock()
	n := s.layer.seq
	s.layer.seq++
	return n
}

// Wrap protects one outgoing message with the negotiated layer.
func (s *SASL) Wrap(p []byte) ([]byte, error) {
	if s.layer.bit == layerPrivacy {
		return s.seal(p)
	}
	wt := gssapi.WrapToken{EC: 0, SndSeqNum: s.nextSeq(), Payload: p}
	et, err := crypto.GetEtype(s.key.KeyType)
	if err != nil {
		return nil, err
	}
	wt.EC = uint16(et.GetHMACBitLength() / 8)
	if err := wt.SetCheckSum(s.key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
		return nil, err
	}
	return wt.Marshal()
}

// seal builds a sealed token: header, then the encryption of plaintext and
// a copy of the header (EC 0: AES needs no filler; RRC 0).
func (s *SASL) seal(p []byte) ([]byte, error) {
	hdr := make([]byte, 16)
	copy(hdr, []byte{0x05, 0x04, flagSealed, 0xff})
	binary.BigEndian.PutUint64(hdr[8:], s.nextSeq())
	et, err := crypto.GetEtype(s.key.KeyType)
	if err != nil {
		return nil, err
	}
	_, ct, err := et.EncryptMessage(s.key.KeyValue, append(append(make([]byte, 0, len(p)+16), p...), hdr...), keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return append(hdr, ct...), nil
}

// Unwrap checks and opens one incoming message.
func (s *SASL) Unwrap(b []byte) ([]byte, error) {
	if len(b) < 16 || b[0] != 0x05 || b[1] != 0x04 || b[3] != 0xff {
		return nil, errors.New("not a GSS-API wrap token")
	}
	flags := b[2]
	switch {
	case flags&flagSentByAcceptor == 0:
		return nil, errors.New("wrap token not sent by the server")
	case flags&flagAcceptorSubkey != 0:
		return nil, errors.New("wrap token uses an acceptor subkey, which was not negotiated")
	case (flags&flagSealed != 0) != (s.layer.bit == layerPrivacy):
		return nil, fmt.Errorf("wrap token sealed=%v does not match the negotiated %s", flags&flagSealed != 0, s.Layer())
	case flags&flagSealed != 0:
		return s.unseal(b)
	}
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(b, true); err != nil {
		return nil, err
	}
	if ok, err := wt.Verify(s.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		return nil, fmt.Errorf("wrap token: %v", err)
	}
	return wt.Payload, nil
}

func (s *SASL) unseal(b []byte) ([]byte, error) {
	ec := int(binary.BigEndian.Uint16(b[4:6]))
	rrc := int(binary.BigEndian.Uint16(b[6:8]))
	ct := rotateLeft(b[16:], rrc)
	et, err := crypto.GetEtype(s.key.KeyType)
	if err != nil {
		return nil, err
	}
	pt, err := et.DecryptMessage(s.key.KeyValue, ct, keyusage.GSSAPI_ACCEPTOR_SEAL)
	if err != nil {
		return nil, fmt.Errorf("unseal: %w", err)
	}
	if len(pt) < ec+16 {
		return nil, errors.New("unseal: token too short")
	}
	return pt[:len(pt)-ec-16], nil
}

// rotateLeft undoes the sender's right rotation by rrc bytes (RFC 4121 §4.2.5).
func rotateLeft(b []byte, rrc int) []byte {
	if len(b) == 0 || rrc%len(b) == 0 {
		return b
	}
	rrc %= len(b)
	return append(append(make([]byte, 0, len(b)), b[rrc:]...), b[:rrc]...)
}
