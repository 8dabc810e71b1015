package kerberos

import (
	"errors"
	"strings"
	"testing"

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

func TestSASLAnswersNoLayer(t *testing.T) {
	s := session()
	resp, done, err := s.Step(nil)
	if err != nil || done || len(resp) != 0 {
		t.Fatalf("first (empty) challenge: %v %v %v", resp, done, err)
	}
	resp, done, err = s.Step(offer(t, testKey, layerNone|layerPrivacy))
	if err != nil || !done {
		t.Fatalf("offer: done %v err %v", done, err)
	}
	var answer gssapi.WrapToken
	if err := answer.Unmarshal(resp, false); err != nil {
		t.Fatal(err)
	}
	if ok, err := answer.Verify(testKey, keyusage.GSSAPI_INITIATOR_SEAL); !ok || string(answer.Payload) != "\x01\x00\x00\x00" {
		t.Fatalf("answer %x verified %v %v; want 'no layer' signed by the initiator", answer.Payload, ok, err)
	}
}

func TestSASLRefusesLayerOnlyServer(t *testing.T) {
	s := session()
	s.Step(nil)
	_, _, err := s.Step(offer(t, testKey, layerPrivacy))
	var ke *Error
	if !errors.As(err, &ke) || ke.Kind != KindConfig || !strings.Contains(err.Error(), "requires a SASL security layer ([privacy])") {
		t.Fatalf("err %v", err)
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
