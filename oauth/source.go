// Package oauth obtains and renews the OAuth 2.0 bearer tokens hdfs-sink's
// clients send: a client credentials grant (RFC 6749 §4.4) against a token
// endpoint, or a token file, for Kafka's OAUTHBEARER login (kafkaclient)
// and the schema registry's bearer.auth.credentials.source=OAUTHBEARER
// (internal/wiring). A token is renewed before it expires; a refusal (an
// HTTP 4xx answer, an untrusted certificate, a token that cannot be used)
// is a *RefusedError that no retry fixes; anything else is an outage worth
// a retry. Client secrets and tokens never appear in its errors or logs.
package oauth

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// Config is how tokens are obtained and when they are renewed.
type Config struct {
	Endpoint  *url.URL // http(s): client credentials; file: a token file
	ClientID  string
	Secret    string
	Scope     string
	URLEncode bool   // URL-encode the client id and secret in the basic auth header
	SubClaim  string // the JWT claim that names the principal
	TLS       *tls.Config
	// Timeout bounds one request; Backoff doubles up to BackoffMax between
	// retries of a transient failure.
	Timeout, Backoff, BackoffMax time.Duration
	Refresh                      Refresh
}

// Refresh is when a token is renewed: after Factor (plus up to Jitter) of
// its lifetime, at least MinPeriod after it was obtained and at least
// Buffer before it expires, where the lifetime allows (Kafka's
// sasl.login.refresh.*).
type Refresh struct {
	Factor, Jitter    float64
	MinPeriod, Buffer time.Duration
}

// Request is a client credentials grant with the defaults of Confluent's
// schema registry client.
type Request struct {
	Endpoint, ClientID, ClientSecret, Scope string
	SubClaim                                string        // default "sub"
	TLS                                     *tls.Config   // for an https endpoint; nil: system roots
	Buffer                                  time.Duration // renew this long before expiry
}

// ClientCredentials is the source of r's grant, renewed Buffer before a
// token expires (as Confluent's client caches it).
func ClientCredentials(r Request, log *slog.Logger) (*Source, error) {
	u, err := url.Parse(r.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("token endpoint %q: must be an http:// or https:// URL", r.Endpoint)
	}
	ts := New(Config{Endpoint: u, ClientID: r.ClientID, Secret: r.ClientSecret, Scope: r.Scope,
		SubClaim: first(r.SubClaim, "sub"), TLS: r.TLS, Timeout: 30 * time.Second,
		Backoff: 100 * time.Millisecond, BackoffMax: 10 * time.Second, Refresh: Refresh{Factor: 1, Buffer: r.Buffer}})
	if log != nil {
		ts.SetLogger(log)
	}
	return ts, nil
}

// RefusedError is a token no retry will obtain: the endpoint refused the
// client, its certificate is not trusted, or the token cannot be used.
type RefusedError struct {
	Endpoint string // without user info or query
	Reason   string
	Err      error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("OAuth token endpoint at %s: %s", e.Endpoint, e.Reason)
}

// Unwrap returns the underlying error.
func (e *RefusedError) Unwrap() error { return e.Err }

// Source hands out the current token and obtains a new one once the
// refresh policy says so. A Kafka client asks for a token on every new
// connection and re-authentication, so the renewal happens at the first
// request after the refresh time, which is before the token expires.
type Source struct {
	cfg Config
	hc  *http.Client
	now func() time.Time
	log atomic.Pointer[slog.Logger]

	mu        sync.Mutex
	token     string
	expires   time.Time
	refreshAt time.Time
}

// New is the source of cfg's tokens; nothing is requested before Token.
func New(cfg Config) *Source {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	ts := &Source{cfg: cfg, hc: &http.Client{Timeout: cfg.Timeout, Transport: tr}, now: time.Now}
	ts.log.Store(slog.New(slog.DiscardHandler))
	return ts
}

// SetLogger makes log the receiver of the renewals and the failed ones.
func (ts *Source) SetLogger(log *slog.Logger) { ts.log.Store(log) }

// Token returns the cached token until its refresh time. A refresh that
// fails keeps the old token while it is still valid: a token endpoint
// outage must not stop a client whose token still works.
func (ts *Source) Token(ctx context.Context) (string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := ts.now()
	if ts.token != "" && now.Before(ts.refreshAt) {
		return ts.token, nil
	}
	tok, claims, err := ts.obtain(ctx)
	if err != nil {
		if ts.token != "" && now.Before(ts.expires) {
			ts.log.Load().Warn("OAuth token refresh failed; the current token is still valid", "expires_in", ts.expires.Sub(now).Round(time.Second), "err", err)
			return ts.token, nil
		}
		return "", err
	}
	ts.token, ts.expires = tok, claims.expires
	ts.refreshAt = ts.cfg.Refresh.at(now, claims.expires)
	ts.log.Load().Info("OAuth token obtained", "principal", claims.subject, "expires_in", claims.expires.Sub(now).Round(time.Second),
		"refresh_in", ts.refreshAt.Sub(now).Round(time.Second))
	return tok, nil
}

// at is when a token obtained at now and expiring at exp is renewed.
func (r Refresh) at(now, exp time.Time) time.Time {
	life := exp.Sub(now)
	at := now.Add(time.Duration(float64(life) * (r.Factor + r.Jitter*rand.Float64())))
	if r.Buffer < life && at.After(exp.Add(-r.Buffer)) {
		at = exp.Add(-r.Buffer)
	}
	if r.MinPeriod < life && at.Before(now.Add(r.MinPeriod)) {
		at = now.Add(r.MinPeriod)
	}
	return at
}

type claims struct {
	subject string
	expires time.Time
}

func (ts *Source) obtain(ctx context.Context) (string, claims, error) {
	var tok string
	var err error
	if ts.cfg.Endpoint.Scheme == "file" {
		tok, err = readTokenFile(ts.cfg.Endpoint.Path)
	} else {
		tok, err = ts.fetchRetrying(ctx)
	}
	if err != nil {
		return "", claims{}, err
	}
	c, err := parseJWT(tok, ts.cfg.SubClaim, ts.now())
	if err != nil {
		return "", claims{}, &RefusedError{Endpoint: redact(ts.cfg.Endpoint), Reason: "the token is not usable: " + err.Error()}
	}
	return tok, c, nil
}

func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("OAuth token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// fetchRetrying retries transient failures (no response, HTTP 5xx) with
// sasl.login.retry.backoff.ms doubling up to .max.ms, as Kafka does; a
// refusal (HTTP 4xx) is returned at once as a *RefusedError.
func (ts *Source) fetchRetrying(ctx context.Context) (string, error) {
	wait := ts.cfg.Backoff
	for {
		tok, err := ts.fetch(ctx)
		var re *RefusedError
		if err == nil || errors.As(err, &re) || wait > ts.cfg.BackoffMax {
			return tok, err
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// fetch makes one client-credentials request (RFC 6749 §4.4), the client
// authenticated with HTTP basic auth as Kafka's login handler does.
func (ts *Source) fetch(ctx context.Context) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if ts.cfg.Scope != "" {
		form.Set("scope", ts.cfg.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.cfg.Endpoint.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Basic "+ts.basic())
	resp, err := ts.hc.Do(req)
	if err != nil {
		return "", ts.transportErr(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return ts.tokenFrom(resp.StatusCode, body)
}

func (ts *Source) basic() string {
	id, secret := ts.cfg.ClientID, ts.cfg.Secret
	if ts.cfg.URLEncode {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	return base64.StdEncoding.EncodeToString([]byte(id + ":" + secret))
}

// transportErr makes a TLS failure that no retry fixes a *RefusedError; the
// rest (refused, timed out) are passing. url.Error is unwrapped because its
// text repeats the URL, which may carry a query.
func (ts *Source) transportErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if reason := tlsprops.Failure(err); reason != "" {
		return &RefusedError{Endpoint: redact(ts.cfg.Endpoint), Reason: reason, Err: err}
	}
	return fmt.Errorf("OAuth token endpoint %s: %w", redact(ts.cfg.Endpoint), err)
}

func (ts *Source) tokenFrom(status int, body []byte) (string, error) {
	var r struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	jsonErr := json.Unmarshal(body, &r)
	switch {
	case status >= 500:
		return "", fmt.Errorf("OAuth token endpoint %s: HTTP %d", redact(ts.cfg.Endpoint), status)
	case status >= 400:
		return "", &RefusedError{Endpoint: redact(ts.cfg.Endpoint),
			Reason: strings.TrimSpace(fmt.Sprintf("the client credentials were refused: HTTP %d %s %s", status, r.Error, r.Description))}
	case jsonErr != nil || r.AccessToken == "":
		return "", &RefusedError{Endpoint: redact(ts.cfg.Endpoint), Reason: fmt.Sprintf("HTTP %d without an access_token", status)}
	}
	return r.AccessToken, nil
}

// redact is the endpoint without user info or query, for messages.
func redact(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment = nil, "", ""
	return c.String()
}

// parseJWT reads the claims a Kafka client checks in its token (no
// signature check: the broker verifies the token; the client only needs
// its lifetime and principal): exp, and the subject claim.
func parseJWT(tok, subClaim string, now time.Time) (claims, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return claims{}, errors.New("not a JWT (three dot-separated parts)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return claims{}, errors.New("the JWT payload is not base64url")
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		return claims{}, errors.New("the JWT payload is not a JSON object")
	}
	exp, ok := m["exp"].(float64)
	if !ok {
		return claims{}, errors.New("the JWT has no exp claim")
	}
	sub, _ := m[subClaim].(string)
	if sub == "" {
		return claims{}, fmt.Errorf("the JWT has no %q claim (sasl.oauthbearer.sub.claim.name)", subClaim)
	}
	c := claims{subject: sub, expires: time.Unix(int64(exp), 0)}
	if !c.expires.After(now) {
		return claims{}, fmt.Errorf("the JWT expired at %s", c.expires.UTC().Format(time.RFC3339))
	}
	return c, nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
