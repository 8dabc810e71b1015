package kafkaclient

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

	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// TokenRequest is an OAuth client credentials grant outside Kafka's SASL:
// the schema registry's bearer.auth.credentials.source=OAUTHBEARER.
type TokenRequest struct {
	Endpoint, ClientID, ClientSecret, Scope string
	SubClaim                                string        // default "sub"
	TLS                                     *tls.Config   // for an https endpoint; nil: system roots
	Buffer                                  time.Duration // renew this long before expiry
}

// NewTokenSource returns the current token of r's grant, renewed Buffer
// before it expires (as Confluent's client caches it). Refusals are
// *AuthErrors; other errors are outages worth a retry.
func NewTokenSource(r TokenRequest, log *slog.Logger) (func(context.Context) (string, error), error) {
	u, err := url.Parse(r.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("token endpoint %q: must be an http:// or https:// URL", r.Endpoint)
	}
	cfg := &oauthConfig{endpoint: u, clientID: r.ClientID, secret: r.ClientSecret, scope: r.Scope,
		subClaim: first(r.SubClaim, "sub"), httpTLS: r.TLS, timeout: 30 * time.Second,
		backoff: 100 * time.Millisecond, backoffMax: 10 * time.Second, refresh: refreshPolicy{factor: 1, buffer: r.Buffer}}
	ts := newTokenSource(cfg)
	if log != nil {
		ts.log.Store(log)
	}
	return ts.current, nil
}

// tokenSource hands out the current OAUTHBEARER token and obtains a new one
// once the refresh policy says so. franz-go asks for a token on every new
// connection and re-authentication, so the renewal happens at the first
// request after the refresh time, which is before the token expires.
type tokenSource struct {
	cfg *oauthConfig
	hc  *http.Client
	now func() time.Time
	log atomic.Pointer[slog.Logger]

	mu        sync.Mutex
	token     string
	expires   time.Time
	refreshAt time.Time
}

func newTokenSource(cfg *oauthConfig) *tokenSource {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.httpTLS
	ts := &tokenSource{cfg: cfg, hc: &http.Client{Timeout: cfg.timeout, Transport: tr}, now: time.Now}
	ts.log.Store(slog.New(slog.DiscardHandler))
	return ts
}

func (ts *tokenSource) auth(ctx context.Context) (oauth.Auth, error) {
	tok, err := ts.current(ctx)
	if err != nil {
		return oauth.Auth{}, err
	}
	return oauth.Auth{Token: tok, Extensions: ts.cfg.extensions}, nil
}

// current returns the cached token until its refresh time. A refresh that
// fails keeps the old token while it is still valid: a token endpoint
// outage must not stop a client whose token still works.
func (ts *tokenSource) current(ctx context.Context) (string, error) {
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
	ts.refreshAt = ts.cfg.refresh.at(now, claims.expires)
	ts.log.Load().Info("OAuth token obtained", "principal", claims.subject, "expires_in", claims.expires.Sub(now).Round(time.Second),
		"refresh_in", ts.refreshAt.Sub(now).Round(time.Second))
	return tok, nil
}

// at is when a token obtained at now and expiring at exp is renewed.
func (r refreshPolicy) at(now, exp time.Time) time.Time {
	life := exp.Sub(now)
	at := now.Add(time.Duration(float64(life) * (r.factor + r.jitter*rand.Float64())))
	if r.buffer < life && at.After(exp.Add(-r.buffer)) {
		at = exp.Add(-r.buffer)
	}
	if r.minPeriod < life && at.Before(now.Add(r.minPeriod)) {
		at = now.Add(r.minPeriod)
	}
	return at
}

type claims struct {
	subject string
	expires time.Time
}

func (ts *tokenSource) obtain(ctx context.Context) (string, claims, error) {
	var tok string
	var err error
	if ts.cfg.endpoint.Scheme == "file" {
		tok, err = readTokenFile(ts.cfg.endpoint.Path)
	} else {
		tok, err = ts.fetchRetrying(ctx)
	}
	if err != nil {
		return "", claims{}, err
	}
	c, err := parseJWT(tok, ts.cfg.subClaim, ts.now())
	if err != nil {
		return "", claims{}, &AuthError{Service: "OAuth token endpoint", Addr: redact(ts.cfg.endpoint), Reason: "the token is not usable: " + err.Error()}
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
// refusal (HTTP 4xx) is returned at once as an *AuthError.
func (ts *tokenSource) fetchRetrying(ctx context.Context) (string, error) {
	wait := ts.cfg.backoff
	for {
		tok, err := ts.fetch(ctx)
		var ae *AuthError
		if err == nil || errors.As(err, &ae) || wait > ts.cfg.backoffMax {
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
func (ts *tokenSource) fetch(ctx context.Context) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if ts.cfg.scope != "" {
		form.Set("scope", ts.cfg.scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.cfg.endpoint.String(), strings.NewReader(form.Encode()))
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

func (ts *tokenSource) basic() string {
	id, secret := ts.cfg.clientID, ts.cfg.secret
	if ts.cfg.urlencode {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	return base64.StdEncoding.EncodeToString([]byte(id + ":" + secret))
}

// transportErr makes a TLS failure that no retry fixes an *AuthError; the
// rest (refused, timed out) are passing. url.Error is unwrapped because its
// text repeats the URL, which may carry a query.
func (ts *tokenSource) transportErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if reason := tlsprops.Failure(err); reason != "" {
		return &AuthError{Service: "OAuth token endpoint", Addr: redact(ts.cfg.endpoint), Reason: reason, Err: err}
	}
	return fmt.Errorf("OAuth token endpoint %s: %w", redact(ts.cfg.endpoint), err)
}

func (ts *tokenSource) tokenFrom(status int, body []byte) (string, error) {
	var r struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	jsonErr := json.Unmarshal(body, &r)
	switch {
	case status >= 500:
		return "", fmt.Errorf("OAuth token endpoint %s: HTTP %d", redact(ts.cfg.endpoint), status)
	case status >= 400:
		return "", &AuthError{Service: "OAuth token endpoint", Addr: redact(ts.cfg.endpoint),
			Reason: strings.TrimSpace(fmt.Sprintf("the client credentials were refused: HTTP %d %s %s", status, r.Error, r.Description))}
	case jsonErr != nil || r.AccessToken == "":
		return "", &AuthError{Service: "OAuth token endpoint", Addr: redact(ts.cfg.endpoint), Reason: fmt.Sprintf("HTTP %d without an access_token", status)}
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
