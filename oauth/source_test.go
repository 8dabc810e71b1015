package oauth

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
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

// source is a source of the endpoint at url as Kafka's client builds it
// (sasl.login.* defaults, quick retries), with the clock at now.
func source(url string, now *time.Time) *Source {
	u, err := neturl.Parse(url)
	if err != nil {
		panic(err)
	}
	ts := New(Config{Endpoint: u, ClientID: "sink", Secret: "s3cr:t", Scope: "kafka", SubClaim: "sub", Timeout: 20 * time.Second,
		Backoff: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond,
		Refresh: Refresh{Factor: 0.8, Jitter: 0.05, MinPeriod: time.Minute, Buffer: 5 * time.Minute}})
	if now != nil {
		ts.now = func() time.Time { return *now }
	}
	return ts
}

// TestClientCredentials: the grant as Kafka's login handler sends it, and
// renewal at the refresh time, before the token expires.
func TestClientCredentials(t *testing.T) {
	p := &idp{status: []int{200}, life: time.Hour}
	srv := httptest.NewServer(p)
	defer srv.Close()
	now := time.Now()
	ts := source(srv.URL+"/token", &now)
	var logs bytes.Buffer
	ts.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	if _, err := ts.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	u, pw, _ := p.seen[0].BasicAuth()
	if u != "sink" || pw != "s3cr:t" || p.forms[0] != "grant_type=client_credentials&scope=kafka" {
		t.Errorf("token request: basic %q:%q, form %q", u, pw, p.forms[0])
	}
	// Before the refresh time (0.8 of an hour, with up to 5% jitter) the
	// token is reused; after it, a new one is fetched while the old is valid.
	now = now.Add(40 * time.Minute)
	ts.Token(context.Background())
	if p.requests != 1 {
		t.Fatalf("%d token requests after 40 minutes, want 1", p.requests)
	}
	now = now.Add(11 * time.Minute)
	ts.Token(context.Background())
	if p.requests != 2 {
		t.Fatalf("%d token requests after 51 minutes, want 2 (renewed before the hour)", p.requests)
	}
	if !strings.Contains(logs.String(), "OAuth token obtained") || strings.Contains(logs.String(), "s3cr:t") || strings.Contains(logs.String(), "eyJ") {
		t.Errorf("log: want the renewal without secrets or tokens:\n%s", logs.String())
	}
}

// TestFailures: a refused client is a *RefusedError at once; a server
// error is retried; a failed renewal keeps the still-valid token; an
// untrusted endpoint is refused.
func TestFailures(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		p := &idp{status: []int{401}, life: time.Hour}
		srv := httptest.NewServer(p)
		defer srv.Close()
		_, err := source(srv.URL+"/token?tenant=x", nil).Token(context.Background())
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "OAuth token endpoint at "+srv.URL+"/token: the client credentials were refused: HTTP 401 invalid_client bad client") || p.requests != 1 {
			t.Fatalf("%v after %d requests", err, p.requests)
		}
	})
	t.Run("retried", func(t *testing.T) {
		p := &idp{status: []int{503, 502, 200}, life: time.Hour}
		srv := httptest.NewServer(p)
		defer srv.Close()
		if _, err := source(srv.URL, nil).Token(context.Background()); err != nil || p.requests != 3 {
			t.Fatalf("%v after %d requests", err, p.requests)
		}
	})
	t.Run("renewal fails, token still valid", func(t *testing.T) {
		p := &idp{status: []int{200, 500}, life: time.Hour}
		srv := httptest.NewServer(p)
		defer srv.Close()
		now := time.Now()
		ts := source(srv.URL, &now)
		first, _ := ts.Token(context.Background())
		now = now.Add(55 * time.Minute)
		if tok, err := ts.Token(context.Background()); err != nil || tok != first {
			t.Fatalf("renewal failure: %v", err)
		}
		now = now.Add(10 * time.Minute) // past expiry
		if _, err := ts.Token(context.Background()); err == nil {
			t.Fatal("an expired token was handed out")
		}
	})
	t.Run("untrusted endpoint", func(t *testing.T) {
		srv := httptest.NewTLSServer(&idp{status: []int{200}, life: time.Hour})
		defer srv.Close()
		ca := testpki.NewCA(t, "other")
		ts := source(srv.URL, nil)
		ts.hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: ca.Pool()}
		_, err := ts.Token(context.Background())
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "not signed by a trusted CA") {
			t.Fatalf("%v", err)
		}
	})
}

func TestTokenFile(t *testing.T) {
	tok := jwt(map[string]any{"sub": "sink", "exp": time.Now().Add(time.Hour).Unix()})
	f := testpki.Write(t, t.TempDir(), "token", []byte(tok+"\n"))
	if got, err := source("file://"+f, nil).Token(context.Background()); err != nil || got != tok {
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
	r := Refresh{Factor: 0.8, Jitter: 0, MinPeriod: time.Minute, Buffer: 5 * time.Minute}
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

// TestRegistryRequest: the registry's OAUTHBEARER grant, renewed Buffer
// before expiry (Confluent's cache.expiry.buffer.seconds).
func TestRegistryRequest(t *testing.T) {
	p := &idp{status: []int{200}, life: time.Hour}
	srv := httptest.NewServer(p)
	defer srv.Close()
	src, err := ClientCredentials(Request{Endpoint: srv.URL, ClientID: "sr", ClientSecret: "x", Buffer: 5 * time.Minute}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := src.Token(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if p.requests != 1 {
		t.Fatalf("%d token requests for three uses of a fresh token", p.requests)
	}
	if _, err := ClientCredentials(Request{Endpoint: "ftp://idp"}, nil); err == nil {
		t.Fatal("an ftp:// endpoint was accepted")
	}
}
