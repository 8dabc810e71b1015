package kafkaclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/oauth"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// AuthError is a failure that no retry will fix: a broker or a token
// endpoint refused the client's credentials, or a TLS handshake failed
// verification. It names the service, the address and the reason, and
// never a secret.
type AuthError struct {
	Service string // "Kafka", "OAuth token endpoint"
	Addr    string
	Reason  string
	Err     error
}

func (e *AuthError) Error() string { return fmt.Sprintf("%s at %s: %s", e.Service, e.Addr, e.Reason) }

// Unwrap returns the underlying error.
func (e *AuthError) Unwrap() error { return e.Err }

// refusals are the broker error codes that mean "not with these
// credentials": retrying the same request cannot succeed.
var refusals = []error{
	kerr.SaslAuthenticationFailed, kerr.UnsupportedSaslMechanism, kerr.IllegalSaslState,
	kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed,
}

// Fatal returns the *AuthError that err is or holds, or one for a broker's
// refusal of the credentials or of access; nil means err may pass
// (a broker down, a network fault) and is worth retrying.
func (s *Security) Fatal(err error) *AuthError {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae
	}
	var re *oauth.RefusedError
	if errors.As(err, &re) { // the OAUTHBEARER token endpoint's
		return &AuthError{Service: "OAuth token endpoint", Addr: re.Endpoint, Reason: re.Reason, Err: err}
	}
	if kerberos.IsKerberos(err) && !kerberos.Retryable(err) { // an unreachable KDC may come back
		return &AuthError{Service: "Kafka", Addr: s.lastAddr(), Reason: "GSSAPI login refused: " + err.Error(), Err: err}
	}
	for _, r := range refusals {
		if errors.Is(err, r) {
			return &AuthError{Service: "Kafka", Addr: s.lastAddr(), Reason: s.refusal(r, err), Err: err}
		}
	}
	return nil
}

func (s *Security) refusal(code, err error) string {
	switch {
	case errors.Is(code, kerr.SaslAuthenticationFailed):
		return fmt.Sprintf("authentication failed (%s %s): %v", s.Protocol, s.Mechanism, err)
	case errors.Is(code, kerr.UnsupportedSaslMechanism):
		return fmt.Sprintf("the listener does not offer sasl.mechanism %s: %v", s.Mechanism, err)
	}
	return "not authorized: " + err.Error()
}

func (s *Security) lastAddr() string {
	if a, ok := s.last.Load().(string); ok {
		return a
	}
	return "(unknown broker)"
}

// dialTimeout is franz-go's default, kept for the custom dialer.
const dialTimeout = 10 * time.Second

// dial connects to a broker as security.protocol says. A TLS failure that
// no retry fixes becomes an *AuthError naming the broker, whether it shows
// in the handshake or, with TLS 1.3, in the first read (a broker that wants
// a client certificate says so only after the client's handshake is done).
func (s *Security) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.last.Store(addr)
	d := &net.Dialer{Timeout: dialTimeout}
	if s.tls == nil {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &plainConn{Conn: c, addr: addr, protocol: s.Protocol}, nil
	}
	cfg := s.tls.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("unable to split host:port for dialing: %w", err)
		}
		cfg.ServerName = host
	}
	c, err := (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, tlsFailure(addr, err)
	}
	return &tlsConn{Conn: c, addr: addr}, nil
}

func tlsFailure(addr string, err error) error {
	if reason := tlsprops.Failure(err); reason != "" {
		return &AuthError{Service: "Kafka", Addr: addr, Reason: "TLS: " + reason, Err: err}
	}
	return err
}

// tlsConn classifies read and write errors as dial does.
type tlsConn struct {
	net.Conn
	addr string
}

func (c *tlsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		err = tlsFailure(c.addr, err)
	}
	return n, err
}

func (c *tlsConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		err = tlsFailure(c.addr, err)
	}
	return n, err
}

// plainConn tells a TLS listener from a plaintext one: a TLS server answers
// a plaintext request with a TLS alert record (0x15 0x03 ...), whose first
// bytes, read as a Kafka response size, are larger than any response.
type plainConn struct {
	net.Conn
	addr     string
	protocol string
	read     atomic.Bool
}

func (c *plainConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.read.Swap(true) && n >= 2 && p[0] == 0x15 && p[1] == 0x03 {
		return 0, &AuthError{Service: "Kafka", Addr: c.addr,
			Reason: fmt.Sprintf("the listener speaks TLS, but security.protocol=%s does not (SSL or SASL_SSL)", c.protocol)}
	}
	return n, err
}
