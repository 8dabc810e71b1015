package tlsprops

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
)

// pki is one CA with a server certificate for 127.0.0.1 / localhost and a
// client certificate, written in every store format.
type pki struct {
	ca, other      *testpki.CA
	server, client *testpki.Leaf
	dir            string
}

func newPKI(t *testing.T) *pki {
	ca := testpki.NewCA(t, "test-ca")
	return &pki{
		ca: ca, other: testpki.NewCA(t, "other-ca"), dir: t.TempDir(),
		server: ca.Issue(t, testpki.LeafOpts{Name: "broker", DNS: []string{"localhost"}, IPs: []string{"127.0.0.1"}}),
		client: ca.Issue(t, testpki.LeafOpts{Name: "sink", Client: true}),
	}
}

func (k *pki) file(t *testing.T, name string, data []byte) string {
	return testpki.Write(t, k.dir, name, data)
}

// serve accepts one TLS connection with cert, asking for a client
// certificate signed by k.ca when mtls, and returns its address.
func serve(t *testing.T, k *pki, cert *testpki.Leaf, mtls bool) string {
	t.Helper()
	cfg := &tls.Config{Certificates: []tls.Certificate{cert.TLS()}}
	if mtls {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, k.ca.Pool()
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if c.(*tls.Conn).Handshake() == nil {
					c.Write([]byte("ok"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// dial connects with cfg to addr as host and reads the server's "ok".
func dial(cfg *tls.Config, addr, host string) error {
	cfg = cfg.Clone()
	cfg.ServerName = host
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 2)
	_, err = c.Read(buf)
	return err
}

func mustConfig(t *testing.T, p Props) *tls.Config {
	t.Helper()
	cfg, err := Config(p, Prefix("consumer.override."))
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	return cfg
}

// TestStoresInEveryFormat: each way Java users keep the trust and key
// material yields a configuration that completes a mutual TLS handshake.
func TestStoresInEveryFormat(t *testing.T) {
	k := newPKI(t)
	addr := serve(t, k, k.server, true)
	caPEM := string(testpki.CertPEM(k.ca.Cert))
	chainPEM := string(testpki.CertPEM(k.client.Cert, k.ca.Cert))
	trust := map[string]Props{
		"PEM file":      {"ssl.truststore.type": "PEM", "ssl.truststore.location": k.file(t, "ca.pem", []byte(caPEM))},
		"PEM inline":    {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": caPEM},
		"PKCS12":        {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": k.file(t, "ts.p12", k.ca.TrustPKCS12(t, "trustpw")), "ssl.truststore.password": "trustpw"},
		"JKS":           {"ssl.truststore.type": "JKS", "ssl.truststore.location": k.file(t, "ts.jks", k.ca.TrustJKS(t, "trustpw")), "ssl.truststore.password": "trustpw"},
		"JKS default":   {"ssl.truststore.location": k.file(t, "ts2.jks", k.ca.TrustJKS(t, "trustpw")), "ssl.truststore.password": "trustpw"},
		"PKCS12 as JKS": {"ssl.truststore.location": k.file(t, "ts2.p12", k.ca.TrustPKCS12(t, "trustpw")), "ssl.truststore.password": "trustpw"},
	}
	keys := map[string]Props{
		"PEM file": {"ssl.keystore.type": "PEM", "ssl.keystore.location": k.file(t, "client.pem",
			append(k.client.KeyPEM(t, ""), chainPEM...))},
		"PEM encrypted": {"ssl.keystore.type": "PEM", "ssl.key.password": "keypw", "ssl.keystore.location": k.file(t, "client-enc.pem",
			append(k.client.KeyPEM(t, "keypw"), chainPEM...))},
		"PEM inline": {"ssl.keystore.type": "PEM", "ssl.keystore.key": string(k.client.KeyPEM(t, "")), "ssl.keystore.certificate.chain": chainPEM},
		"PKCS12":     {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": k.file(t, "ks.p12", k.client.KeyPKCS12(t, "storepw")), "ssl.keystore.password": "storepw"},
		"JKS": {"ssl.keystore.type": "JKS", "ssl.keystore.location": k.file(t, "ks.jks", k.client.KeyJKS(t, "storepw", "keypass")),
			"ssl.keystore.password": "storepw", "ssl.key.password": "keypass"},
		"JKS key pw = store pw": {"ssl.keystore.location": k.file(t, "ks2.jks", k.client.KeyJKS(t, "storepw", "storepw")), "ssl.keystore.password": "storepw"},
	}
	for tn, tp := range trust {
		for kn, kp := range keys {
			p := Props{}
			for k, v := range tp {
				p[k] = v
			}
			for k, v := range kp {
				p[k] = v
			}
			if err := dial(mustConfig(t, p), addr, "127.0.0.1"); err != nil {
				t.Errorf("trust %s, key %s: %v", tn, kn, err)
			}
		}
	}
}

// TestHandshakeFailures: what a failed handshake is classified as, and
// that ssl.endpoint.identification.algorithm= still checks the chain.
func TestHandshakeFailures(t *testing.T) {
	k := newPKI(t)
	trustCA := Props{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(testpki.CertPEM(k.ca.Cert))}
	trustOther := Props{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(testpki.CertPEM(k.other.Cert))}
	noHostCheck := Props{"ssl.endpoint.identification.algorithm": "", "ssl.truststore.type": "PEM",
		"ssl.truststore.certificates": string(testpki.CertPEM(k.ca.Cert))}
	wrongName := k.ca.Issue(t, testpki.LeafOpts{Name: "elsewhere", DNS: []string{"elsewhere.invalid"}})
	expired := k.ca.Issue(t, testpki.LeafOpts{Name: "old", IPs: []string{"127.0.0.1"}, Expired: true})
	tests := []struct {
		name   string
		server *testpki.Leaf
		mtls   bool
		props  Props
		want   string // substring of Failure; "" = handshake succeeds
	}{
		{"trusted", k.server, false, trustCA, ""},
		{"untrusted CA", k.server, false, trustOther, "not signed by a trusted CA"},
		{"untrusted CA, no host check", k.server, false, Props{"ssl.endpoint.identification.algorithm": "",
			"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(testpki.CertPEM(k.other.Cert))}, "not signed by a trusted CA"},
		{"host name mismatch", wrongName, false, trustCA, "host name mismatch"},
		{"host name check off", wrongName, false, noHostCheck, ""},
		{"expired", expired, false, trustCA, "has expired"},
		{"expired, no host check", expired, false, noHostCheck, "has expired"},
		{"client certificate required", k.server, true, trustCA, "refused the TLS handshake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := serve(t, k, tt.server, tt.mtls)
			err := dial(mustConfig(t, tt.props), addr, "127.0.0.1")
			got := Failure(err)
			if tt.want == "" && err != nil || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Fatalf("err %v, Failure %q; want %q", err, got, tt.want)
			}
		})
	}
}

// TestNotTLS: a server that does not speak TLS is a configuration error.
func TestNotTLS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	err = dial(&tls.Config{}, ln.Addr().String(), "127.0.0.1")
	if got := Failure(err); !strings.Contains(got, "does not speak TLS") {
		t.Fatalf("Failure(%v) = %q", err, got)
	}
	if Failure(errors.New("dial tcp: connection refused")) != "" {
		t.Fatal("a refused connection is not a TLS failure")
	}
}
