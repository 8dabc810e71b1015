package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

func TestRedactHidesSecretsByKeyAndInURLs(t *testing.T) {
	for key, value := range map[string]string{
		"consumer.override.sasl.jaas.config":               `org.apache.kafka.common.security.plain.PlainLoginModule required password="p";`,
		"ssl.keystore.password":                            "p",
		"value.converter.basic.auth.user.info":             "u:p",
		"value.converter.bearer.auth.token":                "t",
		"hive.metastore.client.secret":                     "s",
		"consumer.override.ssl.key.password":               "p",
		"value.converter.schema.registry.ssl.keystore.key": "k",
	} {
		if got := redact(nil, key, value); got != hidden {
			t.Errorf("redact(%q) = %q, want %q", key, got, hidden)
		}
	}
	if got := redact(nil, "topics", "orders"); got != "orders" {
		t.Errorf("redact of a plain key changed it: %q", got)
	}
	got := redact(nil, "value.converter.schema.registry.url", "https://user:pw@reg:8081,http://other:1")
	if got != "https://[hidden]@reg:8081,http://other:1" {
		t.Errorf("credentials in a URL: %q", got)
	}
}

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
	d := newDaemon(nil, processMemory{}, newStatusBoard(), testLogger(t))
	srv := httptest.NewServer((&restAPI{d: d, log: testLogger(t)}).routes(u))
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

// TestHealthCommand: exit 0 and "ready" for 200, exit 1 and the reasons
// for 503, exit 1 when nothing answers.
func TestHealthCommand(t *testing.T) {
	ready := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && !ready {
			writeJSON(w, 503, map[string]any{"status": "not ready", "reasons": []string{"connector a: kafka unreachable"}})
			return
		}
		writeJSON(w, 200, map[string]string{"status": "ready"})
	}))
	addr := strings.TrimPrefix(srv.URL, "http://")
	var out, errb bytes.Buffer
	if code := run([]string{"health", "--addr", addr}, &out, &errb); code != 0 || out.String() != "ready\n" {
		t.Fatalf("ready: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	ready = false
	out.Reset()
	if code := run([]string{"health", "--addr", addr}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "kafka unreachable") {
		t.Fatalf("not ready: exit %d, stderr %q", code, errb.String())
	}
	srv.Close()
	if code := run([]string{"health", "--addr", addr, "--live"}, &out, &errb); code != 1 {
		t.Fatalf("nothing listening: exit %d", code)
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

func TestRedactedErrorsHideFieldValues(t *testing.T) {
	err := errors.Join(&configs.FieldError{Connector: "c", Source: "f", Key: "consumer.override.sasl.jaas.config", Value: "password=s3cret", Set: true, Reason: "bad"},
		errors.New("registry https://u:pw@r:1 refused"))
	got := strings.Join(redactedErrors(nil, err), "\n")
	if strings.Contains(got, "s3cret") || strings.Contains(got, "pw@") || !strings.Contains(got, "sasl.jaas.config") {
		t.Fatalf("redactedErrors: %s", got)
	}
}

// TestTLSServerAndHealthProbe: with a certificate the server speaks HTTPS
// only, and hdfs-sink health --tls --insecure gets its answer.
func TestTLSServerAndHealthProbe(t *testing.T) {
	cert, key := selfSigned(t)
	d := newDaemon(nil, processMemory{}, newStatusBoard(), testLogger(t))
	api := &restAPI{d: d, log: testLogger(t)}
	srv, err := serveHTTP(serverConfig{addr: "127.0.0.1:0", certFile: cert, keyFile: key}, api, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.shutdown()
	addr := strings.TrimPrefix(srv.url, "https://")
	var out, errb bytes.Buffer
	if code := run([]string{"health", "--addr", addr, "--tls", "--insecure"}, &out, &errb); code != 0 {
		t.Fatalf("health over TLS: exit %d, %s", code, errb.String())
	}
	if code := run([]string{"health", "--addr", addr}, &out, &errb); code != 1 {
		t.Fatalf("plain HTTP to the TLS server: exit %d, want 1", code)
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
