package kafkaclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// jwt is an unsigned token with the given claims (the client never checks
// signatures; the broker does).
func jwt(claims map[string]any) string {
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	return enc(map[string]string{"alg": "RS256"}) + "." + enc(claims) + ".c2ln"
}

// idp is a token endpoint that answers every request with status (200: a
// token valid for an hour) and keeps the requests.
type idp struct {
	mu     sync.Mutex
	status int
	seen   []*http.Request
	forms  []string
}

func (p *idp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.ParseForm()
	p.seen = append(p.seen, r)
	p.forms = append(p.forms, r.PostForm.Encode())
	if p.status != 200 {
		w.WriteHeader(p.status)
		fmt.Fprint(w, `{"error":"invalid_client","error_description":"bad client"}`)
		return
	}
	fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","expires_in":3600}`, jwt(map[string]any{"sub": "sink", "exp": time.Now().Add(time.Hour).Unix()}))
}

// oauthSecurity parses an OAUTHBEARER client of the token endpoint url.
func oauthSecurity(t *testing.T, url string, more ...string) *Security {
	t.Helper()
	p := Props{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": url,
		"sasl.jaas.config":            `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="sink" clientSecret="s3cr:t" scope="kafka" extension_logicalCluster="lkc-1";`,
		"sasl.login.retry.backoff.ms": "10", "sasl.login.retry.backoff.max.ms": "100"}
	for i := 0; i+1 < len(more); i += 2 {
		p[more[i]] = more[i+1]
	}
	s, err := Parse(p, tlsprops.Prefix(""))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOAuthClientCredentials: the grant as Kafka's login handler sends it
// (package oauth renews it), and the token and extensions in the
// OAUTHBEARER message; the renewal is logged without secrets or tokens.
func TestOAuthClientCredentials(t *testing.T) {
	p := &idp{status: 200}
	srv := httptest.NewServer(p)
	defer srv.Close()
	s := oauthSecurity(t, srv.URL+"/token")
	var logs bytes.Buffer
	s.Opts(slog.New(slog.NewTextHandler(&logs, nil)))
	_, msg, err := s.sasl.Authenticate(context.Background(), "broker:9096")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(msg, []byte("auth=Bearer ey")) || !bytes.Contains(msg, []byte("logicalCluster=lkc-1")) {
		t.Errorf("OAUTHBEARER message lacks the token or the extension: %q", msg)
	}
	u, pw, _ := p.seen[0].BasicAuth()
	if u != "sink" || pw != "s3cr:t" || p.forms[0] != "grant_type=client_credentials&scope=kafka" {
		t.Errorf("token request: basic %q:%q, form %q", u, pw, p.forms[0])
	}
	if !strings.Contains(logs.String(), "OAuth token obtained") || strings.Contains(logs.String(), "s3cr:t") || strings.Contains(logs.String(), "eyJ") {
		t.Errorf("log: want the renewal without secrets or tokens:\n%s", logs.String())
	}
}

// TestOAuthRefusalsAreFatal: a token endpoint that refuses the client, or
// whose certificate the JAAS trust store does not trust, is an *AuthError:
// no retry fixes it.
func TestOAuthRefusalsAreFatal(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		srv := httptest.NewServer(&idp{status: 401})
		defer srv.Close()
		s := oauthSecurity(t, srv.URL+"/token?tenant=x")
		_, _, err := s.sasl.Authenticate(context.Background(), "broker:9096")
		want := "OAuth token endpoint at " + srv.URL + "/token: the client credentials were refused: HTTP 401 invalid_client bad client"
		if ae := s.Fatal(err); ae == nil || ae.Error() != want {
			t.Fatalf("%v, want the *AuthError %q", err, want)
		}
	})
	t.Run("untrusted endpoint", func(t *testing.T) {
		srv := httptest.NewTLSServer(&idp{status: 200})
		defer srv.Close()
		ca := testpki.NewCA(t, "other")
		pemFile := testpki.Write(t, t.TempDir(), "ca.pem", testpki.CertPEM(ca.Cert))
		p := Props{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": srv.URL,
			"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="a" clientSecret="b" ssl.truststore.type="PEM" ssl.truststore.location="` + pemFile + `";`}
		s, err := Parse(p, tlsprops.Prefix(""))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = s.sasl.Authenticate(context.Background(), "broker:9096")
		if ae := s.Fatal(err); ae == nil || !strings.Contains(ae.Error(), "not signed by a trusted CA") {
			t.Fatalf("%v", err)
		}
	})
}
