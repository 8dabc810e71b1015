package kafkaclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
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

// idp is a token endpoint that counts its requests and answers with
// status (200: a token valid for life).
type idp struct {
	mu       sync.Mutex
	requests int
	status   []int // per request; the last repeats
	life     time.Duration
	seen     []*http.Request
	forms    []string
}

func (p *idp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.ParseForm()
	p.seen = append(p.seen, r)
	p.forms = append(p.forms, r.PostForm.Encode())
	st := p.status[min(p.requests, len(p.status)-1)]
	p.requests++
	if st != 200 {
		w.WriteHeader(st)
		fmt.Fprint(w, `{"error":"invalid_client","error_description":"bad client"}`)
		return
	}
	fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","expires_in":%d}`,
		jwt(map[string]any{"sub": "sink", "exp": time.Now().Add(p.life).Unix(), "n": p.requests}), int(p.life.Seconds()))
}

func oauthSecurity(t *testing.T, url string, more ...string) (*Security, *tokenSource) {
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
	return s, s.sasl.(tracked).Mechanism.(oauthMechanism).ts
}

// TestOAuthClientCredentials: the grant as Kafka's login handler sends it,
// the token and extensions in the OAUTHBEARER message, and renewal at the
// refresh time, before the token expires.
func TestOAuthClientCredentials(t *testing.T) {
	p := &idp{status: []int{200}, life: time.Hour}
	srv := httptest.NewServer(p)
	defer srv.Close()
	s, ts := oauthSecurity(t, srv.URL+"/token")
	var logs bytes.Buffer
	s.Opts(slog.New(slog.NewTextHandler(&logs, nil)))
	now := time.Now()
	ts.now = func() time.Time { return now }

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
	// Before the refresh time (0.8 of an hour, with up to 5% jitter) the
	// token is reused; after it, a new one is fetched while the old is valid.
	now = now.Add(40 * time.Minute)
	s.sasl.Authenticate(context.Background(), "broker:9096")
	if p.requests != 1 {
		t.Fatalf("%d token requests after 40 minutes, want 1", p.requests)
	}
	now = now.Add(11 * time.Minute)
	s.sasl.Authenticate(context.Background(), "broker:9096")
	if p.requests != 2 {
		t.Fatalf("%d token requests after 51 minutes, want 2 (renewed before the hour)", p.requests)
	}
	if !strings.Contains(logs.String(), "OAuth token obtained") || strings.Contains(logs.String(), "s3cr:t") || strings.Contains(logs.String(), "eyJ") {
		t.Errorf("log: want the renewal without secrets or tokens:\n%s", logs.String())
	}
}

// TestOAuthFailures: a refused client is an *AuthError at once; a server
// error is retried; a failed renewal keeps the still-valid token.
func TestOAuthFailures(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		p := &idp{status: []int{401}, life: time.Hour}
		srv := httptest.NewServer(p)
		defer srv.Close()
		_, ts := oauthSecurity(t, srv.URL+"/token?tenant=x")
		_, err := ts.auth(context.Background())
		var ae *AuthError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "OAuth token endpoint at "+srv.URL+"/token: the client credentials were refused: HTTP 401 invalid_client bad client") || p.requests != 1 {
			t.Fatalf("%v after %d requests", err, p.requests)
		}
	})
	t.Run("retried", func(t *testing.T) {
		p := &idp{status: []int{503, 502, 200}, life: time.Hour}
		srv := httptest.NewServer(p)
		defer srv.Close()
		_, ts := oauthSecurity(t, srv.URL)
		if _, err := ts.auth(context.Background()); err != nil || p.requests != 3 {
			t.Fatalf("%v after %d requests", err, p.requests)
		}
	})
	t.Run("renewal fails, token still valid", func(t *testing.T) {
		p := &idp{status: []int{200, 500}, life: time.Hour}
		srv := httptest.NewServer(p)
		defer srv.Close()
		_, ts := oauthSecurity(t, srv.URL)
		first, _ := ts.current(context.Background())
		now := time.Now().Add(55 * time.Minute)
		ts.now = func() time.Time { return now }
		if tok, err := ts.current(context.Background()); err != nil || tok != first {
			t.Fatalf("renewal failure: %v", err)
		}
		now = now.Add(10 * time.Minute) // past expiry
		if _, err := ts.current(context.Background()); err == nil {
			t.Fatal("an expired token was handed out")
		}
	})
	t.Run("untrusted endpoint", func(t *testing.T) {
		srv := httptest.NewTLSServer(&idp{status: []int{200}, life: time.Hour})
		defer srv.Close()
		ca := testpki.NewCA(t, "other")
		pemFile := testpki.Write(t, t.TempDir(), "ca.pem", testpki.CertPEM(ca.Cert))
		p := Props{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": srv.URL,
			"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="a" clientSecret="b" ssl.truststore.type="PEM" ssl.truststore.location="` + pemFile + `";`}
		s, err := Parse(p, tlsprops.Prefix(""))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.sasl.(tracked).Mechanism.(oauthMechanism).ts.auth(context.Background())
		if ae := s.Fatal(err); ae == nil || !strings.Contains(ae.Error(), "not signed by a trusted CA") {
			t.Fatalf("%v", err)
		}
	})
}

func TestTokenFile(t *testing.T) {
	tok := jwt(map[string]any{"sub": "sink", "exp": time.Now().Add(time.Hour).Unix()})
	f := testpki.Write(t, t.TempDir(), "token", []byte(tok+"\n"))
	_, ts := oauthSecurity(t, "file://"+f)
	if got, err := ts.current(context.Background()); err != nil || got != tok {
		t.Fatalf("%q, %v", got, err)
	}
}

func TestParseJWT(t *testing.T) {
	now := time.Now()
	tests := []struct {
		tok, want string
	}{
		{"abc", "not a JWT"},
		{"a.!!.c", "not base64url"},
		{jwt(map[string]any{"sub": "x"}), "no exp claim"},
		{jwt(map[string]any{"exp": now.Add(time.Hour).Unix()}), `no "sub" claim`},
		{jwt(map[string]any{"sub": "x", "exp": now.Add(-time.Hour).Unix()}), "expired"},
	}
	for _, tt := range tests {
		if _, err := parseJWT(tt.tok, "sub", now); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseJWT(%q): %v, want %q", tt.tok, err, tt.want)
		}
	}
}

func TestRefreshPolicy(t *testing.T) {
	r := refreshPolicy{factor: 0.8, jitter: 0, minPeriod: time.Minute, buffer: 5 * time.Minute}
	now := time.Unix(0, 0)
	for _, tt := range []struct{ life, want time.Duration }{
		{time.Hour, 48 * time.Minute},         // 0.8 of the lifetime
		{20 * time.Minute, 15 * time.Minute},  // at least the buffer before expiry
		{90 * time.Second, 72 * time.Second},  // shorter than buffer and min period: the factor
		{10 * time.Minute, 5 * time.Minute},   // buffer wins over 8 minutes
		{100 * time.Second, 80 * time.Second}, // buffer does not fit, min period fits and is earlier
	} {
		if got := r.at(now, now.Add(tt.life)).Sub(now); got != tt.want {
			t.Errorf("lifetime %v: refresh after %v, want %v", tt.life, got, tt.want)
		}
	}
}

// TestNewTokenSource: the registry's OAUTHBEARER grant, renewed Buffer
// before expiry (Confluent's cache.expiry.buffer.seconds).
func TestNewTokenSource(t *testing.T) {
	p := &idp{status: []int{200}, life: time.Hour}
	srv := httptest.NewServer(p)
	defer srv.Close()
	src, err := NewTokenSource(TokenRequest{Endpoint: srv.URL, ClientID: "sr", ClientSecret: "x", Buffer: 5 * time.Minute}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := src(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if p.requests != 1 {
		t.Fatalf("%d token requests for three uses of a fresh token", p.requests)
	}
	if _, err := NewTokenSource(TokenRequest{Endpoint: "ftp://idp"}, nil); err == nil {
		t.Fatal("an ftp:// endpoint was accepted")
	}
}
