package kerberos

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"
)

var testKey = types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: []byte("0123456789abcdef0123456789abcdef")}

// offer is the server's wrapped security-layer offer, signed with key.
func offer(t *testing.T, key types.EncryptionKey, layers byte) []byte {
	t.Helper()
	wt := gssapi.WrapToken{Flags: 0x01, EC: 12, Payload: []byte{layers, 0, 0x10, 0}}
	if err := wt.SetCheckSum(key, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
		t.Fatal(err)
	}
	b, err := wt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func session() *SASL {
	return &SASL{login: &Login{Prepared: &Prepared{Principal: "sink@EXAMPLE.COM"}}, spn: "hive/h", key: testKey}
}

// answer runs the exchange against an offer and returns the signed reply.
func answer(t *testing.T, s *SASL, layers byte) []byte {
	t.Helper()
	resp, done, err := s.Step(nil)
	if err != nil || done || len(resp) != 0 {
		t.Fatalf("first (empty) challenge: %v %v %v", resp, done, err)
	}
	resp, done, err = s.Step(offer(t, testKey, layers))
	if err != nil || !done {
		t.Fatalf("offer: done %v err %v", done, err)
	}
	var a gssapi.WrapToken
	if err := a.Unmarshal(resp, false); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Verify(testKey, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
		t.Fatalf("answer not signed by the initiator: %v", err)
	}
	return a.Payload
}

func TestSASLTakesStrongestLayer(t *testing.T) {
	for offered, want := range map[byte]string{
		layerNone:                  "\x01\x00\x00\x00",
		layerNone | layerIntegrity: "\x02\x00\x10\x00",
		layerNone | layerIntegrity | layerPrivacy: "\x04\x00\x10\x00",
		layerPrivacy: "\x04\x00\x10\x00",
	} {
		s := session()
		if got := answer(t, s, offered); string(got) != want {
			t.Errorf("offer %#x: answered %x, want %x", offered, got, want)
		}
	}
}

// acceptorToken is what the server would send under layer.
func acceptorToken(t *testing.T, layer byte, p []byte, rrc int) []byte {
	t.Helper()
	if layer == layerIntegrity {
		wt := gssapi.WrapToken{Flags: flagSentByAcceptor, EC: 12, SndSeqNum: 7, Payload: p}
		if err := wt.SetCheckSum(testKey, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
			t.Fatal(err)
		}
		b, _ := wt.Marshal()
		return b
	}
	hdr := []byte{0x05, 0x04, flagSentByAcceptor | flagSealed, 0xff, 0, 0, 0, byte(rrc), 0, 0, 0, 0, 0, 0, 0, 9}
	inner := append([]byte{}, hdr...)
	inner[7] = 0 // the encrypted copy carries RRC 0
	et, _ := crypto.GetEtype(testKey.KeyType)
	_, ct, err := et.EncryptMessage(testKey.KeyValue, append(append([]byte{}, p...), inner...), keyusage.GSSAPI_ACCEPTOR_SEAL)
	if err != nil {
		t.Fatal(err)
	}
	rot := append(append([]byte{}, ct[len(ct)-rrc:]...), ct[:len(ct)-rrc]...) // right by rrc
	return append(hdr, rot...)
}

func TestSASLLayers(t *testing.T) {
	msg := []byte("get_table_req default.orders")
	for _, tc := range []struct {
		layer byte
		rrc   int
	}{{layerIntegrity, 0}, {layerPrivacy, 0}, {layerPrivacy, 28}} {
		s := session()
		answer(t, s, tc.layer)
		if !s.Wrapping() {
			t.Fatalf("%s: not wrapping", s.Layer())
		}
		got, err := s.Unwrap(acceptorToken(t, tc.layer, msg, tc.rrc))
		if err != nil || string(got) != string(msg) {
			t.Fatalf("%s rrc %d: unwrap %q %v", s.Layer(), tc.rrc, got, err)
		}
		w, err := s.Wrap(msg)
		if err != nil {
			t.Fatal(err)
		}
		if tc.layer == layerPrivacy && bytes.Contains(w, msg) {
			t.Errorf("privacy: the message is readable in the token")
		}
		if back := openInitiatorToken(t, tc.layer, w); string(back) != string(msg) {
			t.Errorf("%s: the server would read %q", s.Layer(), back)
		}
	}
}

// openInitiatorToken is the server's side of Wrap.
func openInitiatorToken(t *testing.T, layer byte, b []byte) []byte {
	t.Helper()
	if layer == layerIntegrity {
		var wt gssapi.WrapToken
		if err := wt.Unmarshal(b, false); err != nil {
			t.Fatal(err)
		}
		if ok, err := wt.Verify(testKey, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
			t.Fatal(err)
		}
		return wt.Payload
	}
	et, _ := crypto.GetEtype(testKey.KeyType)
	pt, err := et.DecryptMessage(testKey.KeyValue, b[16:], keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		t.Fatal(err)
	}
	return pt[:len(pt)-16]
}

func TestSASLUnwrapRefuses(t *testing.T) {
	s := session()
	answer(t, s, layerPrivacy)
	if _, err := s.Unwrap(acceptorToken(t, layerIntegrity, []byte("x"), 0)); err == nil {
		t.Errorf("a signed-only token under privacy was accepted")
	}
	tok := acceptorToken(t, layerPrivacy, []byte("xyz"), 0)
	tok[len(tok)-1] ^= 1
	if _, err := s.Unwrap(tok); err == nil {
		t.Errorf("a tampered sealed token was accepted")
	}
}

func TestSASLRefusesUnsignedOffer(t *testing.T) {
	other := types.EncryptionKey{KeyType: testKey.KeyType, KeyValue: []byte("fedcba9876543210fedcba9876543210")}
	s := session()
	s.Step(nil)
	if _, _, err := s.Step(offer(t, other, layerNone)); err == nil || !strings.Contains(err.Error(), "verify the server") {
		t.Fatalf("an offer not signed with the session key: err %v", err)
	}
}
