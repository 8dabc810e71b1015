package kerberos

import (
	"errors"
	"fmt"

	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// SASL is the client side of one SASL GSSAPI exchange (RFC 4752). It takes
// the strongest security layer the server offers (privacy, integrity, or
// none); with one, Wrap and Unwrap protect every later message.
//
// The flow Java's GssKrb5Server expects: Start's token (the Kerberos AP-REQ;
// no mutual-authentication flag, so the server answers with an empty
// challenge), an empty response, then the server's wrapped offer of
// security layers, which is verified with the session key (so the server
// proved it could read the ticket) and answered with "no layer".
type SASL struct {
	login *Login
	spn   string
	key   types.EncryptionKey
	step  int
	layer layerState
}

// NewSASL prepares an exchange with the service principal spn
// (service/host, realm from krb5.conf's domain_realm or the default).
func (l *Login) NewSASL(spn string) *SASL { return &SASL{login: l, spn: spn} }

// Start returns the initial response: the GSS-API token with the AP-REQ.
func (s *SASL) Start() ([]byte, error) {
	tkt, key, err := s.login.ServiceTicket(s.spn)
	if err != nil {
		return nil, err
	}
	s.key = key
	tok, err := spnego.NewKRB5TokenAPREQ(s.login.cl, tkt, key, []int{gssapi.ContextFlagInteg, gssapi.ContextFlagConf}, nil)
	if err != nil {
		return nil, s.fail("build the AP-REQ", err)
	}
	b, err := tok.Marshal()
	if err != nil {
		return nil, s.fail("encode the AP-REQ", err)
	}
	return b, nil
}

// Layer bits of the server's offer (RFC 4752 §3.3).
const (
	layerNone      = 1
	layerIntegrity = 2
	layerPrivacy   = 4
)

// Step answers one server challenge; done reports that the client has
// nothing more to say (the server then reports success or failure).
func (s *SASL) Step(challenge []byte) (response []byte, done bool, err error) {
	s.step++
	switch {
	case s.step == 1 && len(challenge) == 0:
		return []byte{}, false, nil // context established; ask for the offer
	case s.step <= 2:
		resp, err := s.answerOffer(challenge)
		return resp, err == nil, err
	}
	return nil, false, s.fail("the exchange", fmt.Errorf("unexpected challenge %d", s.step))
}

func (s *SASL) answerOffer(challenge []byte) ([]byte, error) {
	var offer gssapi.WrapToken
	if err := offer.Unmarshal(challenge, true); err != nil {
		return nil, s.fail("read the server's security layer offer", err)
	}
	if ok, err := offer.Verify(s.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		return nil, s.fail("verify the server (its token is not signed with the ticket's session key)", err)
	}
	if len(offer.Payload) < 4 {
		return nil, s.fail("read the server's security layer offer", errors.New("offer too short"))
	}
	s.layer.bit = strongest(offer.Payload[0])
	if s.layer.bit == 0 {
		return nil, s.fail("choose a security layer", fmt.Errorf("the server offers none (%#x)", offer.Payload[0]))
	}
	// The answer names the layer and the largest message we accept (the
	// server's own limit: Thrift frames stay far below it); it is signed
	// only, as Java's GssKrb5Client signs it.
	reply := append([]byte{s.layer.bit}, offer.Payload[1:4]...)
	if s.layer.bit == layerNone {
		reply = []byte{layerNone, 0, 0, 0} // no layer, no buffer (RFC 4752 §3.1)
	}
	answer, err := gssapi.NewInitiatorWrapToken(reply, s.key)
	if err != nil {
		return nil, s.fail("sign the answer", err)
	}
	b, err := answer.Marshal()
	if err != nil {
		return nil, s.fail("encode the answer", err)
	}
	return b, nil
}

func (s *SASL) fail(what string, err error) error {
	return &Error{Principal: s.login.Principal, Kind: KindRefused, Reason: fmt.Sprintf("SASL GSSAPI with %s: %s: %v", s.spn, what, err), Err: err}
}
