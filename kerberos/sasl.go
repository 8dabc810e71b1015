package kerberos

import (
	"errors"
	"fmt"

	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// SASL is the client side of one SASL GSSAPI exchange (RFC 4752) with
// authentication only: no security layer is negotiated, so messages after
// it travel as they are. A server that insists on integrity or privacy is
// refused with an error that says so, never accepted silently.
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
	if offer.Payload[0]&layerNone == 0 {
		return nil, &Error{Principal: s.login.Principal, Kind: KindConfig,
			Reason: fmt.Sprintf("%s requires a SASL security layer (%s); hdfs-sink speaks only authentication (QOP auth) to it: set hadoop.rpc.protection=authentication for that service", s.spn, layerNames(offer.Payload[0]))}
	}
	answer, err := gssapi.NewInitiatorWrapToken([]byte{layerNone, 0, 0, 0}, s.key)
	if err != nil {
		return nil, s.fail("sign the answer", err)
	}
	b, err := answer.Marshal()
	if err != nil {
		return nil, s.fail("encode the answer", err)
	}
	return b, nil
}

func layerNames(bits byte) string {
	var names []string
	if bits&layerIntegrity != 0 {
		names = append(names, "integrity")
	}
	if bits&layerPrivacy != 0 {
		names = append(names, "privacy")
	}
	return fmt.Sprint(names)
}

func (s *SASL) fail(what string, err error) error {
	return &Error{Principal: s.login.Principal, Kind: KindRefused, Reason: fmt.Sprintf("SASL GSSAPI with %s: %s: %v", s.spn, what, err), Err: err}
}
