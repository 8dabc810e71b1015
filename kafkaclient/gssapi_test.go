package kafkaclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/hdfs-sink/hdfs-sink/kerberos"
)

// krbLogin writes a krb5.conf and a keytab holding sink@EXAMPLE.COM.
func krbLogin(t *testing.T) (krb5, kt string) {
	t.Helper()
	dir := t.TempDir()
	krb5 = filepath.Join(dir, "krb5.conf")
	conf := "[libdefaults]\n default_realm = EXAMPLE.COM\n[realms]\n EXAMPLE.COM = {\n  kdc = 127.0.0.1:1\n }\n"
	if err := os.WriteFile(krb5, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	k := keytab.New()
	if err := k.AddEntry("sink", "EXAMPLE.COM", "x", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, _ := k.Marshal()
	kt = filepath.Join(dir, "sink.keytab")
	if err := os.WriteFile(kt, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return krb5, kt
}

// TestGSSAPIWithoutLogins: a GSSAPI client parsed by check (no process
// logins) is GSSAPI still, and refuses to authenticate rather than go
// without SASL.
func TestGSSAPIWithoutLogins(t *testing.T) {
	krb5, kt := krbLogin(t)
	p := Props{"security.protocol": "SASL_PLAINTEXT", // sasl.mechanism unset: GSSAPI, as in Kafka
		"sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="` + kt + `" principal="sink@EXAMPLE.COM";`}
	s, err := ParseWith(p, nil, Kerberos{Krb5Conf: krb5})
	if err != nil {
		t.Fatal(err)
	}
	if s.Mechanism != "GSSAPI" || s.sasl == nil {
		t.Fatalf("mechanism %q (%v), want GSSAPI", s.Mechanism, s.sasl)
	}
	if _, _, err := s.sasl.Authenticate(context.Background(), "broker:9092"); err == nil || !strings.Contains(err.Error(), "without the process's Kerberos logins") {
		t.Fatalf("Authenticate without logins: %v", err)
	}
}

func TestGSSAPIPrincipalNotInKeytab(t *testing.T) {
	krb5, kt := krbLogin(t)
	p := Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
		"sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="` + kt + `" principal="other@EXAMPLE.COM";`}
	_, err := ParseWith(p, nil, Kerberos{Krb5Conf: krb5})
	if err == nil || !strings.Contains(err.Error(), "sasl.jaas.config") || !strings.Contains(err.Error(), "other@EXAMPLE.COM") {
		t.Fatalf("err %v, want the JAAS key and the principal named", err)
	}
}

// TestWaitMessageNamesTheKDC: while a GSSAPI login finds no KDC, the wait
// says so instead of blaming the brokers; a refusal is not waited for.
func TestWaitMessageNamesTheKDC(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("dial tcp 127.0.0.1:9092: connect: connection refused"), "Kafka not reachable; retrying"},
		{fmt.Errorf("sasl: %w", &kerberos.Error{Principal: "sink@EXAMPLE.COM", Kind: kerberos.KindUnreachable, Reason: "no KDC answered"}),
			"Kerberos KDC unreachable; retrying the Kafka login"},
		{&kerberos.Error{Principal: "sink@EXAMPLE.COM", Kind: kerberos.KindRefused, Reason: "unknown principal"}, "Kafka not reachable; retrying"},
	} {
		if got := waitMessage(tc.err); got != tc.want {
			t.Errorf("waitMessage(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
