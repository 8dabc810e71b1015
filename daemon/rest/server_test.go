package rest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBasicAuthGuardsAllButProbes: with a users file, every endpoint but
// /healthz and /readyz wants the credentials, and a wrong password is
// refused like none.
func TestBasicAuthGuardsAllButProbes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(file, []byte("# operators\nops:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := loadUsers(file)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(&fakeConnectors{}, Options{Status: okHandler, Metrics: okHandler}).routes(access{users: u}))
	defer srv.Close()
	get := func(path, user, pass string) int {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []string{"/connectors", "/metrics", "/status", "/"} {
		if got := get(p, "", ""); got != 401 {
			t.Errorf("GET %s without credentials: %d", p, got)
		}
		if got := get(p, "ops", "wrong"); got != 401 {
			t.Errorf("GET %s with a wrong password: %d", p, got)
		}
		if got := get(p, "ops", "s3cret"); got != 200 {
			t.Errorf("GET %s with credentials: %d", p, got)
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if got := get(p, "", ""); got != 200 {
			t.Errorf("GET %s (a probe) without credentials: %d", p, got)
		}
	}
}

// TestRefusedSecretsAreNotEchoed: a config refused for a bad credential
// value does not quote the value back (configs hides it already;
// redactedErrors hides what a FieldError of a secret key would quote).
func TestRefusedSecretsAreNotEchoed(t *testing.T) {
	cfg := map[string]any{"name": "v", "topics": "t", "hdfs.url": "hdfs://nn:8020", "flush.size": "10",
		"value.converter.schema.registry.url": "http://r", "value.converter.basic.auth.user.info": "no-colon-s3cret",
		"value.converter.basic.auth.credentials.source": "USER_INFO"}
	out := validateConfig(nil, sinkClass, cfg)
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), "s3cret") {
		t.Fatalf("validate echoes the credential: %s", b)
	}
	if out.ErrorCount == 0 {
		t.Skipf("configs accepts %q; nothing refused to check", cfg["value.converter.basic.auth.user.info"])
	}
}

// TestTLSServer: with a certificate the server speaks HTTPS only.
func TestTLSServer(t *testing.T) {
	cert, key := selfSigned(t)
	srv, err := Serve(ServerConfig{Addr: "127.0.0.1:0", CertFile: cert, KeyFile: key}, New(&fakeConnectors{}, Options{}), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer insecure.CloseIdleConnections()
	resp, err := insecure.Get(srv.URL() + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(srv.URL(), "https://") {
		t.Fatalf("GET /healthz over TLS at %s: %v %v", srv.URL(), resp, err)
	}
	resp.Body.Close()
	plain := "http://" + strings.TrimPrefix(srv.URL(), "https://") + "/healthz"
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	if resp, err := client.Get(plain); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP to the TLS server was answered 200")
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hdfs-sink test"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}
