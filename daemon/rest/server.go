package rest

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ServerConfig is where and how the HTTP server listens.
type ServerConfig struct {
	Addr string
	// Origin says where Addr came from ("--listen", "listeners in worker
	// file /etc/kafka/connect.properties"), for the binding rule's error.
	Origin            string
	AuthFile          string // user:password lines; "" = no authentication
	CertFile, KeyFile string // both or neither
	// ClientCAFile is a PEM file of CA certificates: with it (and
	// CertFile), every request but the probes needs a client certificate
	// one of them signed.
	ClientCAFile string
	// InsecureListen lets the API listen where other hosts can reach it
	// without authentication or read-only mode (a WARN at every start).
	InsecureListen bool
	// AllowedHosts are host names a changing request's Host header may
	// name besides localhost, IP addresses, this machine's host name and
	// Addr's own host (a leading "." allows every name under a domain).
	AllowedHosts []string
}

// Server serves the REST API, /metrics, /healthz, /readyz and /status.
type Server struct {
	srv  *http.Server
	done chan struct{}
	url  string
}

// Serve listens on cfg.Addr and serves api until Shutdown. A bind failure is
// an error: a daemon whose probes and metrics cannot be reached must not
// look healthy by being silent.
//
// Before it listens it applies the binding rule (CheckServer): an address
// other hosts can reach without authentication or read-only mode is an
// *OpenListenerError unless cfg.InsecureListen.
func Serve(cfg ServerConfig, api *API, log *slog.Logger) (*Server, error) {
	g, err := cfg.guards(api.readOnly)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if cfg.CertFile != "" {
		scheme = "https"
	}
	h := &Server{done: make(chan struct{}), url: scheme + "://" + ln.Addr().String()}
	api.hosts = newHostRule(cfg.Addr, cfg.AllowedHosts)
	h.srv = &http.Server{Handler: api.routes(access{users: g.users, clientCert: g.clientCAs != nil}),
		ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	if g.clientCAs != nil {
		// Asked for, not required, in the handshake: the probes are
		// answered without one (kubelet has none); access requires it of
		// everything else.
		h.srv.TLSConfig = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: g.clientCAs, MinVersion: tls.VersionTLS12}
	}
	api.workerID = ln.Addr().String()
	go h.serve(ln, cfg, log)
	log.Info("status endpoint", "url", h.url+"/status")
	g.logStart(cfg, h.url, api.readOnly, log)
	return h, nil
}

func (h *Server) serve(ln net.Listener, cfg ServerConfig, log *slog.Logger) {
	defer close(h.done)
	var err error
	if cfg.CertFile != "" {
		err = h.srv.ServeTLS(ln, cfg.CertFile, cfg.KeyFile)
	} else {
		err = h.srv.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("HTTP server stopped", "err", err)
	}
}

// URL is the server's scheme://host:port.
func (h *Server) URL() string { return h.url }

// Shutdown stops the server, letting requests in flight finish briefly.
func (h *Server) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if h.srv.Shutdown(ctx) != nil {
		h.srv.Close()
	}
	<-h.done
}
