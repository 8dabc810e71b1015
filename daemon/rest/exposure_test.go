package rest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
)

func TestExposed(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8083":             false,
		"127.0.0.53:8083":            false,
		"[::1]:8083":                 false,
		"localhost:8083":             false,
		":8083":                      true,
		"0.0.0.0:8083":               true,
		"[::]:8083":                  true,
		"10.1.2.3:8083":              true,
		"[fe80::1%eth0]:8083":        true,
		"no-such-host.invalid.:8083": true,
		"missing-port":               true,
	} {
		if got := exposed(addr); got != want {
			t.Errorf("exposed(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestBindingRule: an address other hosts can reach needs basic auth,
// client certificates or read-only mode, or --insecure-listen; the
// refusal names the address, where it came from and every way out.
func TestBindingRule(t *testing.T) {
	dir := t.TempDir()
	authFile := testpki.Write(t, dir, "users", []byte("ops:pw\n"))
	cert, key := selfSigned(t)
	ca := testpki.Write(t, dir, "ca.pem", testpki.CertPEM(testpki.NewCA(t, "clients").Cert))
	notPEM := testpki.Write(t, dir, "not.pem", []byte("hello"))
	const origin = "listeners in worker file /etc/kafka/connect-distributed.properties"
	for _, tt := range []struct {
		name     string
		cfg      ServerConfig
		readOnly bool
		want     string // "" accepted, else a substring of the error
	}{
		{"loopback, nothing", ServerConfig{Addr: "127.0.0.1:8083"}, false, ""},
		{"localhost, nothing", ServerConfig{Addr: "localhost:8083"}, false, ""},
		{"every interface, nothing", ServerConfig{Addr: ":8083", Origin: origin}, false,
			"the REST API would listen on :8083 (from " + origin + "), which other hosts can reach, without authentication"},
		{"0.0.0.0, nothing", ServerConfig{Addr: "0.0.0.0:8083", Origin: "--listen"}, false, "on 0.0.0.0:8083 (from --listen)"},
		{"0.0.0.0, basic auth", ServerConfig{Addr: "0.0.0.0:8083", AuthFile: authFile}, false, ""},
		{"0.0.0.0, client certificates", ServerConfig{Addr: "0.0.0.0:8083", CertFile: cert, KeyFile: key, ClientCAFile: ca}, false, ""},
		{"0.0.0.0, read-only", ServerConfig{Addr: "0.0.0.0:8083"}, true, ""},
		{"0.0.0.0, TLS alone is not authentication", ServerConfig{Addr: "0.0.0.0:8083", CertFile: cert, KeyFile: key}, false, "without authentication"},
		{"0.0.0.0, --insecure-listen", ServerConfig{Addr: "0.0.0.0:8083", InsecureListen: true}, false, ""},
		{"client CA without a certificate", ServerConfig{Addr: "127.0.0.1:8083", ClientCAFile: ca}, false, "--rest-tls-client-ca asks clients for certificates over HTTPS: give --rest-tls-cert and --rest-tls-key too"},
		{"client CA not PEM", ServerConfig{Addr: "127.0.0.1:8083", CertFile: cert, KeyFile: key, ClientCAFile: notPEM}, false, "--rest-tls-client-ca " + notPEM + ": no PEM certificate in it"},
		{"client CA missing", ServerConfig{Addr: "127.0.0.1:8083", CertFile: cert, KeyFile: key, ClientCAFile: filepath.Join(dir, "nope")}, false, "--rest-tls-client-ca: open"},
		{"auth file missing", ServerConfig{Addr: "0.0.0.0:8083", AuthFile: filepath.Join(dir, "nope")}, false, "--rest-basic-auth-file: open"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckServer(tt.cfg, tt.readOnly)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v\nwant %q", err, tt.want)
			}
		})
	}
	err := CheckServer(ServerConfig{Addr: ":8083", Origin: origin}, false)
	var open *OpenListenerError
	if !errors.As(err, &open) {
		t.Fatalf("%T %v, want an *OpenListenerError", err, err)
	}
	for _, way := range []string{"--rest-basic-auth-file FILE", "--rest-tls-client-ca FILE with --rest-tls-cert and --rest-tls-key", "--read-only", "--listen 127.0.0.1:8083", "--insecure-listen"} {
		if !strings.Contains(err.Error(), way) {
			t.Errorf("the refusal does not name %q: %v", way, err)
		}
	}
}

// TestServeRefusesOpenListener: Serve applies the rule before it listens;
// --insecure-listen serves, with a WARN saying what is open.
func TestServeRefusesOpenListener(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if srv, err := Serve(ServerConfig{Addr: "0.0.0.0:0", Origin: "--listen"}, New(&fakeConnectors{}, Options{}), log); err == nil {
		srv.Shutdown()
		t.Fatal("served 0.0.0.0 without authentication")
	}
	srv, err := Serve(ServerConfig{Addr: "0.0.0.0:0", Origin: "--listen", InsecureListen: true}, New(&fakeConnectors{}, Options{}), log)
	if err != nil {
		t.Fatal(err)
	}
	srv.Shutdown()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "--insecure-listen") {
		t.Fatalf("no WARN for --insecure-listen:\n%s", logs.String())
	}
	logs.Reset()
	users := testpki.Write(t, t.TempDir(), "users", []byte("ops:pw\n"))
	srv, err = Serve(ServerConfig{Addr: "0.0.0.0:0", AuthFile: users}, New(&fakeConnectors{}, Options{}), log)
	if err != nil {
		t.Fatal(err)
	}
	srv.Shutdown()
	if !strings.Contains(logs.String(), "passwords cross the network in clear text") {
		t.Fatalf("no WARN for basic auth over plain HTTP on 0.0.0.0:\n%s", logs.String())
	}
}

// TestClientCertificates: with --rest-tls-client-ca every request but the
// probes needs a certificate that CA signed; one from another CA fails
// the handshake.
func TestClientCertificates(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, otherCA := testpki.NewCA(t, "server-ca"), testpki.NewCA(t, "client-ca"), testpki.NewCA(t, "other-ca")
	server := serverCA.Issue(t, testpki.LeafOpts{Name: "server", IPs: []string{"127.0.0.1"}})
	certFile := testpki.Write(t, dir, "server.pem", testpki.CertPEM(server.Cert))
	keyFile := testpki.Write(t, dir, "server.key", server.KeyPEM(t, ""))
	caFile := testpki.Write(t, dir, "clients.pem", testpki.CertPEM(clientCA.Cert))
	srv, err := Serve(ServerConfig{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile},
		New(&fakeConnectors{}, Options{}), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	// The client sends its certificate whatever CAs the server names (Go's
	// client would otherwise send none for a CA the server does not ask for).
	client := func(l *testpki.Leaf) *http.Client {
		cfg := &tls.Config{RootCAs: serverCA.Pool()}
		if l != nil {
			cert := l.TLS()
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	}
	get := func(c *http.Client, path string) (int, error) {
		defer c.CloseIdleConnections()
		resp, err := c.Get(srv.URL() + path)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for _, tt := range []struct {
		name string
		leaf *testpki.Leaf
		path string
		want int // 0: the handshake fails
	}{
		{"no certificate, a probe", nil, "/healthz", 200},
		{"no certificate, readiness", nil, "/readyz", 200},
		{"no certificate, the API", nil, "/connectors", 401},
		{"no certificate, metrics", nil, "/metrics", 401},
		{"the client CA's certificate", clientCA.Issue(t, testpki.LeafOpts{Name: "ops", Client: true}), "/connectors", 200},
		{"another CA's certificate", otherCA.Issue(t, testpki.LeafOpts{Name: "intruder", Client: true}), "/connectors", 0},
	} {
		code, err := get(client(tt.leaf), tt.path)
		if code != tt.want || (tt.want == 0) != (err != nil) {
			t.Errorf("%s: GET %s: %d %v, want %d", tt.name, tt.path, code, err, tt.want)
		}
	}
}
