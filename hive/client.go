// Package hive owns talking to the Hive Metastore over Thrift and mapping
// Avro schemas to Hive tables.
//
// The Client speaks the binary protocol over a buffered plain socket, or
// over Thrift's SASL transport when a mechanism is given (WithSASL: Kerberos
// GSSAPI for hive.metastore.sasl.enabled, in pure Go, frames wrapped when
// the mechanism negotiated integrity or privacy), using the generated
// bindings in github.com/beltran/gohive/hive_metastore.
// It only calls RPCs present in Hive 2.3 through 4 (get_table_req instead of
// the get_table that Hive 4 removed). A Client is safe for concurrent use;
// calls are serialised on one connection, which is redialled after any
// network failure.
package hive

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	hms "github.com/beltran/gohive/hive_metastore"
)

const (
	defaultPort        = "9083"
	defaultDialTimeout = 10 * time.Second
	defaultCallTimeout = 60 * time.Second
	bufferSize         = 64 << 10
)

// Option configures Dial.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	dialTimeout time.Duration
	callTimeout time.Duration
	sasl        SASLMechanism // nil: a plain socket
}

func defaultConfig() config {
	return config{dialTimeout: defaultDialTimeout, callTimeout: defaultCallTimeout}
}

// WithDialTimeout bounds each TCP connect attempt (default 10s).
func WithDialTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.dialTimeout = d })
}

// WithCallTimeout bounds each RPC when the context has no earlier deadline
// (default 60s). It is also the socket read/write timeout; 0 disables it.
func WithCallTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.callTimeout = d })
}

// Client is a connection to one metastore out of a list of URIs.
type Client struct {
	cfg   config
	addrs []string // host:port, in the order given

	// sem (capacity 1) serialises calls on the connection; unlike a mutex,
	// a caller waiting for it still honours its context.
	sem    chan struct{}
	conn   *conn // nil after a network failure; redialled on next call
	closed bool
}

// conn is one live Thrift connection.
type conn struct {
	sock *thrift.TSocket
	hms  *hms.ThriftHiveMetastoreClient
}

// Dial connects to the first reachable metastore of uri, a comma-separated
// list of "thrift://host[:port]" (port defaults to 9083), trying them in
// order. Later reconnects try the list in the same order.
func Dial(ctx context.Context, uri string, opts ...Option) (*Client, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	addrs, err := parseURIs(uri)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, addrs: addrs, sem: make(chan struct{}, 1)}
	if c.conn, err = c.dial(ctx); err != nil {
		return nil, mapError(ctx, "dial", strings.Join(addrs, ","), err)
	}
	return c, nil
}

// parseURIs validates a hive.metastore.uris value.
func parseURIs(uri string) ([]string, error) {
	var addrs []string
	for _, raw := range strings.Split(uri, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "thrift" || u.Hostname() == "" {
			return nil, &Error{Op: "parse uri", Object: raw, Kind: ErrInvalidURI,
				Message: `want "thrift://host[:port]"`, Err: err}
		}
		port := u.Port()
		if port == "" {
			port = defaultPort
		}
		addrs = append(addrs, net.JoinHostPort(u.Hostname(), port))
	}
	if len(addrs) == 0 {
		return nil, &Error{Op: "parse uri", Object: uri, Kind: ErrInvalidURI, Message: "no uri given"}
	}
	return addrs, nil
}

// dial connects to the first address that accepts a TCP connection.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	d := net.Dialer{Timeout: c.cfg.dialTimeout}
	var errs []error
	for _, addr := range c.addrs {
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cn, err := newConn(nc, addr, c.cfg)
		if err != nil {
			// An authentication failure is the answer, not an outage of
			// this address: do not try the next one with it hidden.
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
		return cn, nil
	}
	return nil, errors.Join(errs...)
}

func newConn(nc net.Conn, addr string, cfg config) (*conn, error) {
	// Each connection owns its configuration: call() changes SocketTimeout.
	tc := &thrift.TConfiguration{ConnectTimeout: cfg.dialTimeout, SocketTimeout: cfg.callTimeout}
	sock := thrift.NewTSocketFromConnConf(nc, tc)
	var trans thrift.TTransport = thrift.NewTBufferedTransport(sock, bufferSize)
	if cfg.sasl != nil {
		st := newSASLTransport(sock)
		host, _, _ := net.SplitHostPort(addr)
		if err := st.handshake(cfg.sasl, host); err != nil {
			sock.Close()
			return nil, err
		}
		trans = st
	}
	proto := thrift.NewTBinaryProtocolConf(trans, tc)
	return &conn{sock: sock, hms: hms.NewThriftHiveMetastoreClient(thrift.NewTStandardClient(proto, proto))}, nil
}

// Close closes the connection, after waiting for a call in progress. Later
// calls fail with ErrClosed; a second Close returns nil.
func (c *Client) Close() error {
	c.sem <- struct{}{}
	defer func() { <-c.sem }()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.conn == nil {
		return nil
	}
	err := c.conn.sock.Close()
	c.conn = nil
	if err != nil {
		return &Error{Op: "close", Kind: ErrUnavailable, Err: err}
	}
	return nil
}

// call runs one RPC under the client lock with ctx's deadline applied to the
// socket, redialling first if the previous call broke the connection.
func (c *Client) call(ctx context.Context, op, object string, rpc func(context.Context, *hms.ThriftHiveMetastoreClient) error) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, Object: object, Kind: ErrUnavailable, Err: err}
	}
	select {
	case c.sem <- struct{}{}:
		defer func() { <-c.sem }()
	case <-ctx.Done():
		return &Error{Op: op, Object: object, Kind: ErrUnavailable, Message: "waiting for another call", Err: ctx.Err()}
	}
	if c.closed {
		return &Error{Op: op, Object: object, Kind: ErrClosed}
	}
	if c.conn == nil {
		cn, err := c.dial(ctx)
		if err != nil {
			return mapError(ctx, op, object, fmt.Errorf("redial %s: %w", strings.Join(c.addrs, ","), err))
		}
		c.conn = cn
	}
	cn := c.conn
	_ = cn.sock.SetSocketTimeout(c.timeout(ctx))
	// A deadline or cancellation closes the socket, which unblocks a read
	// in progress; the connection is then discarded below.
	stop := context.AfterFunc(ctx, func() { _ = cn.sock.Close() })
	err := rpc(ctx, cn.hms)
	interrupted := !stop()
	if interrupted || !keepsConnection(err) {
		_ = cn.sock.Close()
		c.conn = nil
	}
	return mapError(ctx, op, object, err)
}

// timeout is the socket timeout for a call: the call timeout, or less if
// ctx expires sooner.
func (c *Client) timeout(ctx context.Context) time.Duration {
	t := c.cfg.callTimeout
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < t {
			t = max(left, time.Millisecond) // 0 would mean "no timeout"
		}
	}
	return t
}
