// Package testpki makes throwaway certificate authorities, server and client
// certificates for unit tests, and writes them as Java users keep them: PEM
// files, PKCS12 and JKS stores. Nothing here is for production use; the
// real-service test ground makes its own with openssl and keytool.
package testpki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// CA is a certificate authority that signs leaves.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Leaf is a certificate with its key, signed by a CA.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	CA   *CA
}

var serial int64 = 1

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// NewCA makes a self-signed CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	return &CA{Cert: sign(t, tmpl, tmpl, key, key), Key: key}
}

func sign(t testing.TB, tmpl, parent *x509.Certificate, pub *ecdsa.PrivateKey, signer *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &pub.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// LeafOpts shape a leaf certificate.
type LeafOpts struct {
	Name    string   // common name
	DNS     []string // subject alternative names
	IPs     []string
	Expired bool // valid until an hour ago
	Client  bool // client authentication instead of server
}

// Issue signs a leaf certificate.
func (ca *CA) Issue(t testing.TB, o LeafOpts) *Leaf {
	t.Helper()
	key := newKey(t)
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: o.Name}, DNSNames: o.DNS,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if o.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if o.Expired {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)
	}
	for _, ip := range o.IPs {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	return &Leaf{Cert: sign(t, tmpl, ca.Cert, key, ca.Key), Key: key, CA: ca}
}

// TLS is the leaf as a tls.Certificate with its CA in the chain.
func (l *Leaf) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{l.Cert.Raw, l.CA.Cert.Raw}, PrivateKey: l.Key, Leaf: l.Cert}
}

// Pool is a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// CertPEM is the PEM encoding of certs.
func CertPEM(certs ...*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

// KeyPEM is the leaf's key as PKCS#8 PEM, encrypted (PBES2) when password
// is not empty.
func (l *Leaf) KeyPEM(t testing.TB, password string) []byte {
	t.Helper()
	if password == "" {
		der, err := x509.MarshalPKCS8PrivateKey(l.Key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	der, err := pkcs8.MarshalPrivateKey(l.Key, []byte(password), nil)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: der})
}

// Write writes data to name in dir and returns the path.
func Write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TrustPKCS12 is a Java-style PKCS12 trust store holding the CA.
func (ca *CA) TrustPKCS12(t testing.TB, password string) []byte {
	t.Helper()
	data, err := pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{ca.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// KeyPKCS12 is a PKCS12 key store holding the leaf's key and chain.
func (l *Leaf) KeyPKCS12(t testing.TB, password string) []byte {
	t.Helper()
	data, err := pkcs12.Modern2023.Encode(l.Key, l.Cert, []*x509.Certificate{l.CA.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TrustJKS is a JKS trust store holding the CA.
func (ca *CA) TrustJKS(t testing.TB, password string) []byte {
	t.Helper()
	ks := keystore.New()
	err := ks.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{
		CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.Cert.Raw}})
	if err != nil {
		t.Fatal(err)
	}
	return storeJKS(t, ks, password)
}

// KeyJKS is a JKS key store holding the leaf's key (under keyPassword) and chain.
func (l *Leaf) KeyJKS(t testing.TB, storePassword, keyPassword string) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	err = ks.SetPrivateKeyEntry("client", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: l.Cert.Raw}, {Type: "X509", Content: l.CA.Cert.Raw}}},
		[]byte(keyPassword))
	if err != nil {
		t.Fatal(err)
	}
	return storeJKS(t, ks, storePassword)
}

func storeJKS(t testing.TB, ks keystore.KeyStore, password string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(password)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
