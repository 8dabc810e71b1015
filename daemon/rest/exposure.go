package rest

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
)

// The binding rule (docs/security.md): the API listens on loopback unless
// told otherwise, and an address other hosts can reach needs
// authentication (basic auth, client certificates) or read-only mode,
// else the server refuses to start, naming where the address came from
// and the ways out. --insecure-listen overrides, with a WARN at every
// start. A worker file's listeners=HTTP://:8083 (or CONNECT_LISTENERS,
// CONNECT_REST_PORT) is such an address: in Kafka Connect the REST API is
// open to whoever reaches it, and copying that here would open pause,
// restart, config changes and deletes of an exactly-once pipeline.

// guards are what Serve puts in front of the API, read and checked from a
// ServerConfig before anything listens.
type guards struct {
	users     users
	clientCAs *x509.CertPool // nil: no client certificates asked for
	exposed   bool           // other hosts can reach the address
	open      bool           // exposed, and nothing guards changes (--insecure-listen)
}

// CheckServer checks cfg as Serve would before listening: the files it
// names, TLS flags that go together, and the binding rule; readOnly is
// the API's. `hdfs-sink check` reports its error, run refuses to start.
func CheckServer(cfg ServerConfig, readOnly bool) error {
	_, err := cfg.guards(readOnly)
	return err
}

func (cfg ServerConfig) guards(readOnly bool) (guards, error) {
	var g guards
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return g, errors.New("--rest-tls-cert and --rest-tls-key go together")
	}
	if cfg.ClientCAFile != "" && cfg.CertFile == "" {
		return g, errors.New("--rest-tls-client-ca asks clients for certificates over HTTPS: give --rest-tls-cert and --rest-tls-key too")
	}
	var err error
	if g.users, err = loadUsers(cfg.AuthFile); err != nil {
		return g, err
	}
	if g.clientCAs, err = loadClientCAs(cfg.ClientCAFile); err != nil {
		return g, err
	}
	g.exposed = exposed(cfg.Addr)
	guarded := g.users != nil || g.clientCAs != nil || readOnly
	if g.exposed && !guarded {
		if !cfg.InsecureListen {
			return g, &OpenListenerError{Addr: cfg.Addr, Origin: cfg.Origin}
		}
		g.open = true
	}
	return g, nil
}

// OpenListenerError is an address other hosts can reach, with nothing
// guarding changes and no --insecure-listen.
type OpenListenerError struct {
	Addr   string
	Origin string // where Addr came from: "--listen", "listeners in worker file …"; "" unknown
}

func (e *OpenListenerError) Error() string {
	from := ""
	if e.Origin != "" {
		from = " (from " + e.Origin + ")"
	}
	return fmt.Sprintf("the REST API would listen on %s%s, which other hosts can reach, without authentication: "+
		"anyone who can connect could pause, restart, reconfigure and delete connectors. Refusing to start. Choose one: "+
		"--rest-basic-auth-file FILE (HTTP basic authentication); "+
		"--rest-tls-client-ca FILE with --rest-tls-cert and --rest-tls-key (client certificates); "+
		"--read-only (nothing can be changed over HTTP). "+
		"Or listen on loopback (--listen 127.0.0.1:8083), or accept the risk with --insecure-listen",
		e.Addr, from)
}

// exposed reports whether other hosts may reach addr: every address but a
// loopback IP, localhost, or a name whose addresses are all loopback. An
// empty host is every interface; a name that does not resolve counts as
// reachable (the safe answer).
func exposed(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return !ip.IsLoopback()
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return true
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return true
		}
	}
	return false
}

// loadClientCAs reads the PEM CA certificates client certificates must be
// signed by; "" is none.
func loadClientCAs(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--rest-tls-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--rest-tls-client-ca %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// logStart says how the API is reached and guarded, with a WARN for each
// way it is weaker than it should be; Serve calls it at every start.
func (g guards) logStart(cfg ServerConfig, url string, readOnly bool, log *slog.Logger) {
	log.Info("REST API, metrics and health", "url", url, "reachable_from_other_hosts", g.exposed, "read_only", readOnly,
		"basic_auth", g.users != nil, "client_certificates", g.clientCAs != nil)
	if g.open {
		log.Warn("the REST API listens where other hosts can reach it, without authentication, and accepts changes (--insecure-listen): "+
			"anyone who can connect can pause, restart, reconfigure and delete connectors", "addr", cfg.Addr, "from", cfg.Origin)
	}
	if g.exposed && g.users != nil && cfg.CertFile == "" {
		log.Warn("HTTP basic authentication over plain HTTP where other hosts can reach it: passwords cross the network in clear text; add --rest-tls-cert and --rest-tls-key",
			"addr", cfg.Addr)
	}
}
