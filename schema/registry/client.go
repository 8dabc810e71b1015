// Package registry fetches Avro writer schemas by id from a Confluent-API
// schema registry (Confluent, Apicurio ccompat, Karapace): Client, with an
// immutable id cache, request coalescing, retry through outages (but not
// through refusals: HTTP 401/403 or a TLS handshake that fails
// verification), TLS with a trust store and client certificate, and basic
// or bearer authentication; and
// Memory, an in-process registry for tests and the embedded demo. Both
// satisfy schema.Registry, which the sink consumes.
package registry

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/riferrei/srclient"
	"golang.org/x/sync/singleflight"

	"github.com/hdfs-sink/hdfs-sink/health"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/idcache"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// Defaults for ClientConfig's zero values.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultInitialBackoff = 100 * time.Millisecond
	DefaultMaxBackoff     = 10 * time.Second
)

// ClientConfig configures NewClient.
type ClientConfig struct {
	// URLs are registry base URLs, tried in turn after transient failures.
	// A path prefix is kept (e.g. http://host:8080/apis/ccompat/v7).
	URLs []string
	// Username and Password enable HTTP basic auth when both are set
	// (the connector's basic.auth.user.info "user:password").
	Username, Password string
	// BearerToken, when set, gives the token of each request's
	// "Authorization: Bearer" header (bearer.auth.credentials.source: a
	// static token, or an OAuth token it renews). An error that wraps
	// schema.ErrRegistryRefused is final; others are retried as outages.
	BearerToken func(ctx context.Context) (string, error)
	// Headers are sent with every request (Confluent Cloud's
	// target-sr-cluster and Confluent-Identity-Pool-Id).
	Headers map[string]string
	// TLS is the client TLS configuration for https URLs (trust store,
	// client certificate); nil: the system's roots. Ignored when
	// Transport is set.
	TLS *tls.Config
	// Timeout bounds one HTTP request; default DefaultTimeout.
	Timeout time.Duration
	// InitialBackoff and MaxBackoff bound the exponential wait between
	// retries of transient failures; defaults DefaultInitialBackoff and
	// DefaultMaxBackoff.
	InitialBackoff, MaxBackoff time.Duration
	// Transport carries the requests (e.g. with a TLS config); default is a
	// clone of http.DefaultTransport.
	Transport http.RoundTripper
	// Logger receives a warning per retried failure; default discards.
	Logger *slog.Logger
	// CacheSize bounds the schemas kept (schemas.cache.config); the oldest
	// fetched is dropped first, and fetched again if asked for. 0: no bound.
	CacheSize int
}

// ParseUserInfo splits the connector's "user:password" credentials.
func ParseUserInfo(s string) (user, password string, err error) {
	user, password, ok := strings.Cut(s, ":")
	if !ok || user == "" {
		return "", "", fmt.Errorf("schema: basic auth user info must be \"user:password\"")
	}
	return user, password, nil
}

// Client is a schema.Registry backed by riferrei/srclient. It caches schemas by id
// forever (ids are immutable), makes one request for concurrent misses of
// one id, and retries transient failures until ctx ends: a registry outage
// means waiting, never a skipped record.
type Client struct {
	backends []backend
	next     atomic.Uint32 // index of the backend to ask next
	initial  time.Duration
	max      time.Duration
	log      *slog.Logger

	// cache is read by every record's Cached without a lock (idcache
	// replaces the map whole on a store): a read lock per record was 5 %
	// of a 100-byte record's CPU (issue 25), more with partitions on every
	// core sharing the lock's counter. Bounded by CacheSize.
	cache *idcache.Map[*schema.Schema]
	group singleflight.Group
	// down is the current run of transient failures, for GET /status: a
	// lookup that waits for the registry blocks the partition, and no
	// partition is "broken" meanwhile.
	down health.Streak
}

type backend struct {
	url string
	sr  *srclient.SchemaRegistryClient
}

var _ schema.Registry = (*Client)(nil)

// NewClient validates cfg and returns the client. No request is made.
func NewClient(cfg ClientConfig) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("schema: client: no registry URL")
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		return nil, errors.New("schema: client: basic auth needs both username and password")
	}
	if cfg.Username != "" && cfg.BearerToken != nil {
		return nil, errors.New("schema: client: basic auth and a bearer token are exclusive")
	}
	cfg = withDefaults(cfg)
	auth := authTransport{base: cfg.Transport, token: cfg.BearerToken, headers: cfg.Headers}
	hc := &http.Client{Timeout: cfg.Timeout, Transport: statusTransport{base: auth}}
	c := &Client{initial: cfg.InitialBackoff, max: cfg.MaxBackoff, log: cfg.Logger, cache: idcache.New[*schema.Schema](cfg.CacheSize)}
	for _, raw := range cfg.URLs {
		base, err := normalizeURL(raw)
		if err != nil {
			return nil, err
		}
		sr := srclient.NewSchemaRegistryClient(base, srclient.WithClient(hc))
		sr.CachingEnabled(false) // our cache is the only one: no second copy
		if cfg.Username != "" {
			sr.SetCredentials(cfg.Username, cfg.Password)
		}
		c.backends = append(c.backends, backend{url: base, sr: sr})
	}
	return c, nil
}

func withDefaults(cfg ClientConfig) ClientConfig {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.InitialBackoff <= 0 {
		cfg.InitialBackoff = DefaultInitialBackoff
	}
	if cfg.MaxBackoff < cfg.InitialBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.InitialBackoff)
	}
	if cfg.Transport == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = cfg.TLS
		cfg.Transport = tr
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// normalizeURL checks raw and drops a trailing slash: srclient joins the
// base and "/schemas/ids/N" by plain concatenation, which keeps a path
// prefix but would double the slash.
func normalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("schema: registry URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("schema: registry URL %q: want http(s)://host[:port][/prefix]", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("schema: registry URL %q: credentials, query and fragment are not allowed", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// Ping asks the registries for their global compatibility level, the
// cheapest request every Confluent-API registry answers, and returns nil
// once one has answered: the readiness check of a daemon that may not need
// a schema for hours. It does not retry.
func (c *Client) Ping(ctx context.Context) error {
	errs := make([]error, 0, len(c.backends))
	for _, b := range c.backends {
		if ctx.Err() != nil {
			break
		}
		if _, err := b.sr.GetGlobalCompatibilityLevel(); err != nil {
			errs = append(errs, fmt.Errorf("schema registry %s: %w", b.url, err))
			continue
		}
		return nil
	}
	return errors.Join(append(errs, ctx.Err())...)
}

// SchemaByID returns the schema with id, from cache or the registry.
func (c *Client) SchemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	if s := c.Cached(id); s != nil {
		return s, nil
	}
	wait := c.initial
	var last error
	for attempt := 1; ; attempt++ {
		s, err := c.fetchShared(ctx, id)
		if err == nil {
			c.down.OK(time.Now())
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, gaveUp(ctx, id, attempt-1, last)
		}
		var re *Error
		if !errors.As(err, &re) || !re.Retryable() {
			return nil, err
		}
		last = err
		lasted := c.down.Fail(err, time.Now())
		c.log.Warn("schema registry lookup failed; retrying",
			"id", id, "attempt", attempt, "backoff", wait, "failing_for", lasted.Round(time.Second), "err", err)
		if sleep(ctx, jitter(wait)) != nil {
			return nil, gaveUp(ctx, id, attempt, last)
		}
		wait = min(2*wait, c.max)
	}
}

// Down is the registry's current run of transient failures: since when,
// and the last error; a nil error while lookups succeed.
func (c *Client) Down() (since time.Time, err error) { return c.down.Down() }

// gaveUp names the last registry failure, since "context canceled" alone
// hides why a lookup took that long.
func gaveUp(ctx context.Context, id int32, failures int, last error) error {
	if last == nil {
		return fmt.Errorf("schema: look up id %d: %w", id, ctx.Err())
	}
	return fmt.Errorf("schema: look up id %d: %w after %d failed attempts, last: %v", id, ctx.Err(), failures, last)
}

// fetchShared runs one registry request per id at a time; every concurrent
// caller shares its result. A caller whose ctx ends stops waiting, but the
// request completes (bounded by the HTTP timeout) and fills the cache.
func (c *Client) fetchShared(ctx context.Context, id int32) (*schema.Schema, error) {
	ch := c.group.DoChan(strconv.Itoa(int(id)), func() (any, error) { return c.fetch(id) })
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*schema.Schema), nil
	}
}

func (c *Client) fetch(id int32) (*schema.Schema, error) {
	if s := c.Cached(id); s != nil { // filled by a flight that just ended
		return s, nil
	}
	i := c.next.Load()
	b := c.backends[int(i)%len(c.backends)]
	raw, err := b.sr.GetSchema(int(id))
	if err != nil {
		re := classify(err, id, b.url)
		if re.Retryable() {
			c.next.CompareAndSwap(i, i+1) // fail over to the next URL
		}
		return nil, re
	}
	s, err := fromSrclient(id, raw)
	if err != nil {
		return nil, err
	}
	c.cache.Put(id, s)
	return s, nil
}

// Cached is the schema with id when the client holds it already, else
// nil: a lookup that cannot wait, need no deadline and allocates nothing.
func (c *Client) Cached(id int32) *schema.Schema {
	s, _ := c.cache.Get(id)
	return s
}

func fromSrclient(id int32, raw *srclient.Schema) (*schema.Schema, error) {
	if t := raw.SchemaType(); t != nil && *t != "" && *t != srclient.Avro {
		return nil, &schema.SchemaError{ID: id, Reason: fmt.Sprintf("schema type %s is not AVRO", *t)}
	}
	if refs := raw.References(); len(refs) > 0 {
		return nil, &schema.SchemaError{ID: id, Reason: fmt.Sprintf("schema references are not supported (%d references, first %q)", len(refs), refs[0].Name)}
	}
	return schema.New(id, raw.Schema())
}

// classify turns an srclient error into an *Error. statusTransport
// makes every HTTP error status arrive as *statusError inside *url.Error;
// any other *url.Error means no usable response (refused, reset, timeout).
func classify(err error, id int32, base string) *Error {
	re := &Error{ID: id, URL: base, Err: err}
	var se *statusError
	var ue *url.Error
	switch {
	case errors.As(err, &se):
		re.Status, re.Code, re.Message, re.Err = se.status, se.code, se.message, nil
		re.retryable = se.status == http.StatusRequestTimeout ||
			se.status == http.StatusTooManyRequests || se.status >= 500
		re.refused = se.status == http.StatusUnauthorized || se.status == http.StatusForbidden
	case errors.Is(err, schema.ErrRegistryRefused):
		re.refused = true
	case errors.As(err, &ue):
		re.Err = ue.Err // its text repeats the URL with the id
		re.TLSFailure = tlsprops.Failure(ue.Err)
		re.refused, re.retryable = re.TLSFailure != "", re.TLSFailure == ""
	}
	return re
}

// statusError is an HTTP error status with the registry's error body.
type statusError struct {
	status  int
	code    int
	message string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d (error_code %d): %s", e.status, e.code, e.message)
}

// statusTransport turns responses with status >= 400 into *statusError.
// srclient keeps only the body's error_code and drops the status (and for a
// non-JSON body keeps only the status text), which cannot tell a 503 from a
// 404 reliably; doing it here keeps classification exact.
type statusTransport struct{ base http.RoundTripper }

func (t statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	se := &statusError{status: resp.StatusCode}
	var payload struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	switch text := strings.TrimSpace(string(body)); {
	case json.Unmarshal(body, &payload) == nil && (payload.Code != 0 || payload.Message != ""):
		se.code, se.message = payload.Code, payload.Message
	case strings.HasPrefix(text, "<"): // a proxy's HTML error page
		se.message = http.StatusText(resp.StatusCode)
	default:
		se.message = text
	}
	return nil, se
}

// authTransport adds the bearer token and the extra headers. The token
// func's error reaches srclient as a transport error (a *url.Error), and
// classify keeps its ErrRegistryRefused.
type authTransport struct {
	base    http.RoundTripper
	token   func(context.Context) (string, error)
	headers map[string]string
}

func (t authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.token == nil && len(t.headers) == 0 {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	if t.token != nil {
		tok, err := t.token(req.Context())
		if err != nil {
			return nil, fmt.Errorf("bearer token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return t.base.RoundTrip(req)
}

// jitter spreads retries of many waiters over [d/2, d).
func jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + rand.N(half+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
