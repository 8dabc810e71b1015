package registry

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

const userSchema = `{"type":"record","name":"User","fields":[
	{"name":"id","type":"long"},
	{"name":"name","type":"string"},
	{"name":"email","type":["null","string"],"default":null}]}`

// fastConfig retries quickly so outage tests finish in milliseconds.
func fastConfig(urls ...string) ClientConfig {
	return ClientConfig{URLs: urls, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Timeout: 2 * time.Second}
}

func newFake(t testing.TB, opts ...srfake.Option) *srfake.Registry {
	t.Helper()
	reg := srfake.New(opts...)
	t.Cleanup(reg.Close)
	reg.SeedSchema("users-value", 1, 7, sr.Schema{Schema: userSchema})
	return reg
}

// countIDRequests counts GET /schemas/ids/ requests reaching reg.
func countIDRequests(reg *srfake.Registry) *atomic.Int64 {
	var n atomic.Int64
	reg.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/schemas/ids/") {
			n.Add(1)
		}
		return false
	})
	return &n
}

func mustClient(t testing.TB, cfg ClientConfig) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientConcurrentMissesMakeOneRequest(t *testing.T) {
	reg := newFake(t)
	n := countIDRequests(reg)
	reg.Intercept(func(http.ResponseWriter, *http.Request) bool {
		time.Sleep(50 * time.Millisecond) // keep the flight open while others arrive
		return false
	})
	c := mustClient(t, fastConfig(reg.URL()))

	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Go(func() {
			s, err := c.SchemaByID(context.Background(), 7)
			if err == nil && (s.ID != 7 || s.Text != userSchema || s.Codec == nil) {
				err = errors.New("wrong schema returned")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SchemaByID(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("registry saw %d requests for 51 lookups, want 1", got)
	}
}

func TestClientRetriesTransientStatuses(t *testing.T) {
	for _, status := range []int{500, 502, 503, 504, 429, 408} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			reg := newFake(t)
			n := countIDRequests(reg)
			var failures atomic.Int64
			reg.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
				if failures.Add(1) > 3 {
					return false
				}
				w.WriteHeader(status)
				_, _ = w.Write([]byte("<html>busy</html>")) // proxies answer with HTML, not JSON
				return true
			})
			c := mustClient(t, fastConfig(reg.URL()))
			s, err := c.SchemaByID(context.Background(), 7)
			if err != nil || s.ID != 7 {
				t.Fatalf("SchemaByID = %v, %v", s, err)
			}
			if got := n.Load(); got != 4 {
				t.Fatalf("requests = %d, want 3 failures + 1 success", got)
			}
		})
	}
}

// TestClientWaitsOutConnectionRefused starts the registry only after the
// lookup has already failed to connect several times.
func TestClientWaitsOutConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused

	var refused atomic.Int64
	cfg := fastConfig("http://" + addr)
	cfg.Transport = countingTransport{base: http.DefaultTransport, errs: &refused}
	c := mustClient(t, cfg)

	done := make(chan error, 1)
	go func() {
		s, err := c.SchemaByID(context.Background(), 7)
		if err == nil && s.ID != 7 {
			err = errors.New("wrong schema")
		}
		done <- err
	}()
	for refused.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("lookup ended during the outage: %v", err)
	default:
	}
	// The lookup waits, so nothing else says the registry is down: Down does.
	if since, err := c.Down(); err == nil || since.IsZero() || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Down() during the outage = %v, %v; want the refusal and its start", since, err)
	}

	reg := srfake.NewRegistry()
	reg.SeedSchema("users-value", 1, 7, sr.Schema{Schema: userSchema})
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("re-listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: reg.Handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("lookup did not recover after the registry came back")
	}
	if _, err := c.Down(); err != nil {
		t.Fatalf("Down() after the registry came back = %v", err)
	}
}

type countingTransport struct {
	base http.RoundTripper
	errs *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		c.errs.Add(1)
	}
	return resp, err
}

func TestClientFailsOverToNextURL(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	reg := newFake(t)
	c := mustClient(t, fastConfig(down.URL, reg.URL()))
	if _, err := c.SchemaByID(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
}

func TestClientPermanentFailures(t *testing.T) {
	tests := []struct {
		name      string
		id        int32
		intercept srfake.Interceptor
		check     func(error) bool
	}{
		{"unknown id is 404", 99, nil, func(err error) bool { return errors.Is(err, schema.ErrUnknownSchema) }},
		{"404 without JSON body", 7, reply(404, "not here"), func(err error) bool { return errors.Is(err, schema.ErrUnknownSchema) }},
		{"unauthorized", 7, reply(401, `{"error_code":401,"message":"no"}`), func(err error) bool {
			var re *Error
			return errors.As(err, &re) && re.Status == 401 && !errors.Is(err, schema.ErrUnknownSchema)
		}},
		{"not avro", 7, reply(200, `{"schema":"syntax = \"proto3\";","schemaType":"PROTOBUF"}`), func(err error) bool {
			return errors.Is(err, schema.ErrUnsupportedSchema) && strings.Contains(err.Error(), "PROTOBUF")
		}},
		{"references", 7, reply(200, `{"schema":"{\"type\":\"record\",\"name\":\"U\",\"fields\":[{\"name\":\"a\",\"type\":\"Address\"}]}","references":[{"name":"Address","subject":"addr","version":1}]}`),
			func(err error) bool {
				return errors.Is(err, schema.ErrUnsupportedSchema) && strings.Contains(err.Error(), "references")
			}},
		{"invalid avro", 7, reply(200, `{"schema":"{\"type\":\"recrod\"}"}`), func(err error) bool { return errors.Is(err, schema.ErrUnsupportedSchema) }},
		{"garbage 200 body", 7, reply(200, `<html>`), func(err error) bool {
			var re *Error
			return errors.As(err, &re) && !re.Retryable()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newFake(t)
			n := countIDRequests(reg)
			if tt.intercept != nil {
				reg.Intercept(tt.intercept)
			}
			c := mustClient(t, fastConfig(reg.URL()))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := c.SchemaByID(ctx, tt.id)
			if err == nil || !tt.check(err) {
				t.Fatalf("SchemaByID = %v", err)
			}
			if got := n.Load(); got != 1 {
				t.Fatalf("permanent failure made %d requests, want 1 (no retry)", got)
			}
		})
	}
}

func reply(status int, body string) srfake.Interceptor {
	return func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
		return true
	}
}

func TestClientHonoursContextDuringOutage(t *testing.T) {
	reg := newFake(t)
	reg.Intercept(reply(503, `{"error_code":50003,"message":"down"}`))
	c := mustClient(t, fastConfig(reg.URL()))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.SchemaByID(ctx, 7)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "50003") {
		t.Fatalf("SchemaByID = %v, want deadline exceeded naming the last failure", err)
	}
}

func TestClientKeepsPathPrefix(t *testing.T) {
	for _, suffix := range []string{"", "/"} {
		reg := newFake(t)
		var paths []string
		var mu sync.Mutex
		const prefix = "/apis/ccompat/v7"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
			http.StripPrefix(prefix, reg.Handler()).ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		c := mustClient(t, fastConfig(srv.URL+prefix+suffix))
		if _, err := c.SchemaByID(context.Background(), 7); err != nil {
			t.Fatalf("suffix %q: %v", suffix, err)
		}
		if len(paths) != 1 || paths[0] != prefix+"/schemas/ids/7" {
			t.Fatalf("suffix %q: paths = %q", suffix, paths)
		}
	}
}

func TestClientSendsBasicAuth(t *testing.T) {
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cr:et"))
	reg := newFake(t, srfake.WithAuth(auth))

	cfg := fastConfig(reg.URL())
	cfg.Username, cfg.Password, _ = ParseUserInfo("alice:s3cr:et")
	if _, err := mustClient(t, cfg).SchemaByID(context.Background(), 7); err != nil {
		t.Fatalf("with credentials: %v", err)
	}

	cfg.Password = "wrong"
	_, err := mustClient(t, cfg).SchemaByID(context.Background(), 7)
	var re *Error
	if !errors.As(err, &re) || re.Status != http.StatusForbidden || re.Retryable() {
		t.Fatalf("wrong password: %v, want permanent 403", err)
	}
}

func TestNewClientRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  ClientConfig
	}{
		{"no url", ClientConfig{}},
		{"no scheme", ClientConfig{URLs: []string{"localhost:8081"}}},
		{"ftp", ClientConfig{URLs: []string{"ftp://h"}}},
		{"user in url", ClientConfig{URLs: []string{"http://u:p@h"}}},
		{"one of two urls bad", ClientConfig{URLs: []string{"http://h", "::"}}},
		{"password without user", ClientConfig{URLs: []string{"http://h"}, Password: "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewClient(tt.cfg); err == nil {
				t.Fatal("NewClient succeeded")
			}
		})
	}
}

func TestParseUserInfo(t *testing.T) {
	for _, bad := range []string{"", "alice", ":pw"} {
		if _, _, err := ParseUserInfo(bad); err == nil {
			t.Errorf("ParseUserInfo(%q) succeeded", bad)
		}
	}
}

// TestClientTLSAndAuth: an https registry that wants a client certificate
// and basic auth (as behind a TLS proxy) is reached with the trust store
// and key given; each refusal is final at once, never retried as an outage.
func TestClientTLSAndAuth(t *testing.T) {
	ca := testpki.NewCA(t, "ca")
	server := ca.Issue(t, testpki.LeafOpts{Name: "registry", IPs: []string{"127.0.0.1"}})
	client := ca.Issue(t, testpki.LeafOpts{Name: "sink", Client: true})
	reg := newFake(t)
	var requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if u, p, ok := r.BasicAuth(); !ok || u != "sink" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte("<html><body>401 Authorization Required</body></html>"))
			return
		}
		proxy(w, r, reg.URL())
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{server.TLS()}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: ca.Pool()}
	srv.StartTLS()
	defer srv.Close()
	trusted := &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{client.TLS()}}
	untrusted := &tls.Config{RootCAs: testpki.NewCA(t, "other").Pool()}
	tests := []struct {
		name       string
		tls        *tls.Config
		user, pass string
		want       string // "" = found
	}{
		{"trusted with basic auth", trusted, "sink", "pw", ""},
		{"wrong password", trusted, "sink", "nope", "id 7: refused: HTTP 401 (error_code 0): Unauthorized"},
		{"untrusted CA", untrusted, "sink", "pw", "id 7: TLS: the server's certificate is not signed by a trusted CA"},
	}
	for _, tt := range tests {
		requests.Store(0)
		cfg := fastConfig(srv.URL)
		cfg.TLS, cfg.Username, cfg.Password = tt.tls, tt.user, tt.pass
		_, err := mustClient(t, cfg).SchemaByID(context.Background(), 7)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (!errors.Is(err, schema.ErrRegistryRefused) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want a refusal containing %q", tt.name, err, tt.want)
		case tt.want != "" && requests.Load() > 1:
			t.Errorf("%s: a refusal was retried (%d requests)", tt.name, requests.Load())
		}
	}
}

// proxy forwards r to base and copies the answer back.
func proxy(w http.ResponseWriter, r *http.Request, base string) {
	resp, err := http.Get(base + r.URL.Path)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// TestClientBearerToken: the token and headers go with each request; a
// refused token is final, a token endpoint outage is retried.
func TestClientBearerToken(t *testing.T) {
	reg := newFake(t)
	var got atomic.Value
	reg.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		got.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("target-sr-cluster"))
		return false
	})
	cfg := fastConfig(reg.URL())
	cfg.Headers = map[string]string{"target-sr-cluster": "lsrc-1"}
	cfg.BearerToken = func(context.Context) (string, error) { return "tok-1", nil }
	if _, err := mustClient(t, cfg).SchemaByID(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	if got.Load() != "Bearer tok-1|lsrc-1" {
		t.Errorf("headers %q", got.Load())
	}
	calls := 0
	cfg.BearerToken = func(context.Context) (string, error) {
		calls++
		return "", fmt.Errorf("%w: OAuth token endpoint at https://idp/token: the client credentials were refused: HTTP 401", schema.ErrRegistryRefused)
	}
	_, err := mustClient(t, cfg).SchemaByID(context.Background(), 7)
	if !errors.Is(err, schema.ErrRegistryRefused) || calls != 1 || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("refused token: %v after %d calls", err, calls)
	}
	calls = 0
	cfg.BearerToken = func(context.Context) (string, error) {
		if calls++; calls < 3 {
			return "", errors.New("token endpoint down")
		}
		return "tok-2", nil
	}
	if _, err := mustClient(t, cfg).SchemaByID(context.Background(), 7); err != nil || calls != 3 {
		t.Errorf("token outage: %v after %d calls", err, calls)
	}
}

// TestClientCacheSize: with CacheSize (schemas.cache.config) the client
// keeps that many schemas: a third id pushes out the first, which is then
// fetched again; the second stays cached.
func TestClientCacheSize(t *testing.T) {
	reg := newFake(t)
	reg.SeedSchema("users-value", 2, 8, sr.Schema{Schema: userSchema})
	reg.SeedSchema("users-value", 3, 9, sr.Schema{Schema: userSchema})
	n := countIDRequests(reg)
	cfg := fastConfig(reg.URL())
	cfg.CacheSize = 2
	c := mustClient(t, cfg)
	for _, id := range []int32{7, 8, 9, 8, 7} {
		if _, err := c.SchemaByID(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Load(); got != 4 {
		t.Fatalf("registry saw %d requests, want 4 (7, 8, 9, then 7 again after it was dropped)", got)
	}
}

// TestClientCacheReadDuringStores: cached lookups (every record's) read
// the cache without a lock while other ids are fetched and stored, and
// always see the schema of their id; with a bounded cache the dropped id
// is fetched again. Run with -race.
func TestClientCacheReadDuringStores(t *testing.T) {
	reg := newFake(t)
	for id := 8; id <= 20; id++ {
		reg.SeedSchema("users-value", id-6, id, sr.Schema{Schema: userSchema})
	}
	cfg := fastConfig(reg.URL())
	cfg.CacheSize = 4
	c := mustClient(t, cfg)
	ctx := context.Background()
	if _, err := c.SchemaByID(ctx, 7); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for id := int32(7); id <= 20; id++ {
				s, err := c.SchemaByID(ctx, id)
				if err != nil || s.ID != id {
					t.Errorf("id %d: schema %v, %v", id, s, err)
				}
				if s := c.Cached(id); s != nil && s.ID != id {
					t.Errorf("cached id %d holds schema %d", id, s.ID)
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkCachedParallel is every partition's per-record lookup at once.
func BenchmarkCachedParallel(b *testing.B) {
	c := mustClient(b, fastConfig(newFake(b).URL()))
	if _, err := c.SchemaByID(context.Background(), 7); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if c.Cached(7) == nil {
				b.Fatal("not cached")
			}
		}
	})
}
