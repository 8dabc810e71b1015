package rest

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ServerConfig is where and how the HTTP server listens.
type ServerConfig struct {
	Addr              string
	AuthFile          string // user:password lines; "" = no authentication
	CertFile, KeyFile string // both or neither
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
func Serve(cfg ServerConfig, api *API, log *slog.Logger) (*Server, error) {
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("--rest-tls-cert and --rest-tls-key go together")
	}
	users, err := loadUsers(cfg.AuthFile)
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
	h.srv = &http.Server{Handler: api.routes(users), ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	api.workerID = ln.Addr().String()
	go h.serve(ln, cfg, log)
	log.Info("status endpoint", "url", h.url+"/status")
	log.Info("REST API, metrics and health", "url", h.url, "read_only", api.readOnly, "basic_auth", users != nil)
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
