package kerberos

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
)

const testKrb5 = `[libdefaults]
  default_realm = EXAMPLE.COM
  udp_preference_limit = 1
[realms]
  EXAMPLE.COM = {
    kdc = 127.0.0.1:1
  }
`

// files writes a krb5.conf and a keytab holding principal (user@REALM)
// with mode perm.
func files(t *testing.T, principal string, perm os.FileMode) (krb5, kt string) {
	t.Helper()
	dir := t.TempDir()
	krb5 = filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(krb5, []byte(testKrb5), 0o644); err != nil {
		t.Fatal(err)
	}
	name, realm, _ := strings.Cut(principal, "@")
	k := keytab.New()
	if err := k.AddEntry(name, realm, "not-a-secret", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := k.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	kt = filepath.Join(dir, "a.keytab")
	if err := os.WriteFile(kt, b, perm); err != nil {
		t.Fatal(err)
	}
	return krb5, kt
}

func TestExpandHost(t *testing.T) {
	for in, want := range map[string]string{
		"nn/_HOST@EXAMPLE.COM": "nn/node1.example.com@EXAMPLE.COM",
		"connect/_HOST":        "connect/node1.example.com",
		"sink@EXAMPLE.COM":     "sink@EXAMPLE.COM",
		"x/_HOSTNAME@R":        "x/_HOSTNAME@R", // only a whole component
	} {
		if got := ExpandHost(in, "Node1.Example.COM"); got != want {
			t.Errorf("ExpandHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKrb5ConfPath(t *testing.T) {
	t.Setenv("KRB5_CONFIG", "/a/krb5.conf:/b/krb5.conf")
	if got := Krb5ConfPath(""); got != "/a/krb5.conf" {
		t.Errorf("with KRB5_CONFIG: %q", got)
	}
	if got := Krb5ConfPath("/x"); got != "/x" {
		t.Errorf("explicit: %q", got)
	}
	t.Setenv("KRB5_CONFIG", "")
	if got := Krb5ConfPath(""); got != "/etc/krb5.conf" {
		t.Errorf("default: %q", got)
	}
}

func TestPrepare(t *testing.T) {
	krb5, kt := files(t, "sink@EXAMPLE.COM", 0o600)
	p, err := Prepare(Config{Principal: "sink", Keytab: kt, Krb5Conf: krb5})
	if err != nil {
		t.Fatal(err)
	}
	if p.Principal != "sink@EXAMPLE.COM" || len(p.Warnings) != 0 {
		t.Errorf("principal %q (default realm), warnings %v", p.Principal, p.Warnings)
	}
}

func TestPrepareRefuses(t *testing.T) {
	krb5, kt := files(t, "sink@EXAMPLE.COM", 0o600)
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"no keytab":      {Config{Principal: "sink", Krb5Conf: krb5}, "no keytab given"},
		"missing keytab": {Config{Principal: "sink", Keytab: kt + ".gone", Krb5Conf: krb5}, "no such file"},
		"not a keytab":   {Config{Principal: "sink", Keytab: krb5, Krb5Conf: krb5}, "cannot be read as a keytab"},
		"other principal": {Config{Principal: "hive/_HOST@EXAMPLE.COM", Keytab: kt, Krb5Conf: krb5},
			"holds no key for hive/" + LocalHost() + "@EXAMPLE.COM (it has: sink@EXAMPLE.COM)"},
		"no krb5.conf":  {Config{Principal: "sink", Keytab: kt, Krb5Conf: krb5 + ".gone"}, "krb5.conf " + krb5 + ".gone cannot be read"},
		"bad principal": {Config{Principal: "a//b@R", Keytab: kt, Krb5Conf: krb5}, "empty name component"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Prepare(tc.cfg)
			var ke *Error
			if !errors.As(err, &ke) || ke.Kind != KindConfig || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a config error with %q", err, tc.want)
			}
		})
	}
}

// TestPrepareNamesKrb5ConfAndKeytab: with krb5.conf unreadable, a keytab
// that cannot be used is named in the same error, so that check shows
// both; a usable keytab adds nothing.
func TestPrepareNamesKrb5ConfAndKeytab(t *testing.T) {
	krb5, kt := files(t, "sink@EXAMPLE.COM", 0o600)
	gone := krb5 + ".gone"
	for name, tc := range map[string]struct {
		keytab, want string
	}{
		"missing keytab": {kt + ".gone", "; keytab " + kt + ".gone: no such file or directory"},
		"not a keytab":   {krb5, "; keytab " + krb5 + " cannot be read as a keytab"},
		"no keytab":      {"", "; no keytab given"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Prepare(Config{Principal: "sink@EXAMPLE.COM", Keytab: tc.keytab, Krb5Conf: gone})
			var ke *Error
			if !errors.As(err, &ke) || ke.Kind != KindConfig || !strings.Contains(err.Error(), "krb5.conf "+gone+" cannot be read") ||
				!strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a config error naming krb5.conf %s and %q", err, gone, tc.want)
			}
		})
	}
	_, err := Prepare(Config{Principal: "sink@EXAMPLE.COM", Keytab: kt, Krb5Conf: gone})
	if err == nil || strings.Contains(err.Error(), "keytab") {
		t.Fatalf("err %v, want krb5.conf named and nothing said of the usable keytab", err)
	}
}

func TestPrepareWarnsOnReadableKeytab(t *testing.T) {
	krb5, kt := files(t, "sink@EXAMPLE.COM", 0o644)
	p, err := Prepare(Config{Principal: "sink@EXAMPLE.COM", Keytab: kt, Krb5Conf: krb5})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "readable by others (mode 0644)") {
		t.Errorf("warnings %v", p.Warnings)
	}
}

// TestLoginUnreachableIsRetryable: a KDC that does not answer is the one
// Kerberos failure worth waiting out, and a failed first login is not kept.
func TestLoginUnreachableIsRetryable(t *testing.T) {
	krb5, kt := files(t, "sink@EXAMPLE.COM", 0o600)
	ls := NewLogins(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer ls.Close()
	_, err := ls.Login(Config{Principal: "sink", Keytab: kt, Krb5Conf: krb5})
	if !Retryable(err) || !strings.Contains(err.Error(), "no KDC answered") {
		t.Fatalf("err %v, want retryable 'no KDC answered'", err)
	}
	if len(ls.logins) != 0 {
		t.Errorf("a failed login was kept")
	}
}

func TestClassify(t *testing.T) {
	for code, want := range map[int32]string{
		6: "does not know this principal", 24: "keytab's key does not match", 37: "clock",
		7: "does not know the service principal",
	} {
		err := classify("p@R", "login", messages.KRBError{ErrorCode: code})
		if err.Kind != KindRefused || !strings.Contains(err.Reason, want) {
			t.Errorf("code %d: %v %q, want refused %q", code, err.Kind, err.Reason, want)
		}
	}
	if e := classify("p@R", "login", fmt.Errorf("x: clock skew with KDC too large")); !strings.Contains(e.Reason, "clock") {
		t.Errorf("gokrb5's own skew check: %q", e.Reason)
	}
}

func TestNextCheck(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &Login{Prepared: &Prepared{cfg: Config{RenewPeriod: time.Hour}}, now: func() time.Time { return now }}
	l.authTime, l.endTime = now, now.Add(2*time.Minute)
	if got := l.nextCheck(); got != 96*time.Second {
		t.Errorf("2-minute ticket: next check in %v, want 96s (80%%)", got)
	}
	l.endTime = now.Add(10 * time.Hour)
	if got := l.nextCheck(); got != time.Hour {
		t.Errorf("10-hour ticket, 1-hour period: %v, want 1h", got)
	}
	now = now.Add(9 * time.Hour)
	if got := l.nextCheck(); got != 0 {
		t.Errorf("past 80%%: %v, want 0 (renew now)", got)
	}
}

func TestKafkaLoginConfig(t *testing.T) {
	cfg, svc, err := KafkaLoginConfig(map[string]string{"useKeyTab": "true", "keyTab": "/k", "principal": "p@R", "storeKey": "true"}, "")
	if err != nil || cfg.Keytab != "/k" || cfg.Principal != "p@R" || svc != "kafka" {
		t.Fatalf("%+v %q %v", cfg, svc, err)
	}
	_, svc, _ = KafkaLoginConfig(map[string]string{"useKeyTab": "true", "keyTab": "/k", "principal": "p", "serviceName": "kfk"}, "")
	if svc != "kfk" {
		t.Errorf("JAAS serviceName: %q", svc)
	}
	for opts, want := range map[string]map[string]string{
		"useTicketCache=true is not supported": {"useTicketCache": "true", "principal": "p"},
		"needs useKeyTab=true":                 {"principal": "p"},
		"option renewTGT is not supported":     {"useKeyTab": "true", "keyTab": "/k", "principal": "p", "renewTGT": "true"},
	} {
		if _, _, err := KafkaLoginConfig(want, ""); err == nil || !strings.Contains(err.Error(), opts) {
			t.Errorf("%v: err %v, want %q", want, err, opts)
		}
	}
}
