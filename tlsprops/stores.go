package tlsprops

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// Store types. Java's KeyStore reads JKS and PKCS12 files whichever of the
// two is named (keystore.type.compat), so the file's own format decides
// between those two here too; PEM is text and named explicitly.
const (
	typeJKS    = "JKS"
	typePKCS12 = "PKCS12"
	typePEM    = "PEM"
)

func (b *builder) storeType(key string) string {
	t := strings.ToUpper(b.get(key))
	switch t {
	case "":
		return typeJKS // Kafka's default
	case typeJKS, typePKCS12, typePEM:
		return t
	}
	b.fail(key, "must be JKS, PKCS12 or PEM")
	return ""
}

// trust sets cfg.RootCAs from the trust store; without one the system's
// roots are used, as a JVM uses its cacerts.
func (b *builder) trust(cfg *tls.Config) {
	loc, inline := b.get("ssl.truststore.location"), b.get("ssl.truststore.certificates")
	typ := b.storeType("ssl.truststore.type")
	switch {
	case loc != "" && inline != "":
		b.fail("ssl.truststore.certificates", "set either ssl.truststore.location or ssl.truststore.certificates, not both")
	case inline != "" && typ != typePEM:
		b.fail("ssl.truststore.certificates", "needs ssl.truststore.type=PEM")
	case inline != "":
		b.trustPEM(cfg, "ssl.truststore.certificates", []byte(inline))
	case loc != "" && typ != "":
		b.trustFile(cfg, loc, typ)
	case b.get("ssl.truststore.password") != "":
		b.fail("ssl.truststore.password", "set without ssl.truststore.location")
	}
}

func (b *builder) trustFile(cfg *tls.Config, loc, typ string) {
	data, err := os.ReadFile(loc)
	if err != nil {
		b.fail("ssl.truststore.location", "cannot read the trust store: "+err.Error())
		return
	}
	pw := b.get("ssl.truststore.password")
	if typ == typePEM {
		if pw != "" {
			b.fail("ssl.truststore.password", "must not be set for a PEM trust store (as in Kafka)")
			return
		}
		b.trustPEM(cfg, "ssl.truststore.location", data)
		return
	}
	if pw == "" {
		b.fail("ssl.truststore.password", "is required for a "+typ+" trust store: hdfs-sink always checks the store's integrity (Java skips the check without a password)")
		return
	}
	certs, err := binaryTrust(data, pw)
	if err != nil {
		b.fail("ssl.truststore.location", fmt.Sprintf("cannot read %s as a JKS or PKCS12 trust store: %v", loc, err))
		return
	}
	cfg.RootCAs = pool(certs)
}

func (b *builder) trustPEM(cfg *tls.Config, key string, data []byte) {
	certs, err := pemCerts(data)
	if err != nil {
		b.fail(key, "no trusted certificates: "+err.Error())
		return
	}
	cfg.RootCAs = pool(certs)
}

func pool(certs []*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// binaryTrust reads the trusted certificates of a JKS or PKCS12 store.
func binaryTrust(data []byte, pw string) ([]*x509.Certificate, error) {
	switch sniff(data) {
	case typeJKS:
		return jksTrust(data, pw)
	case typePKCS12:
		return pkcs12.DecodeTrustStore(data, pw)
	}
	return nil, errNotStore
}

var errNotStore = errors.New("the file is neither JKS nor PKCS12 (JCEKS, BCFKS and others are not supported)")

// sniff tells JKS (magic 0xFEEDFEED) from PKCS12 (a DER sequence).
func sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xFE, 0xED, 0xFE, 0xED}):
		return typeJKS
	case len(data) > 0 && data[0] == 0x30:
		return typePKCS12
	}
	return ""
}

// jksTrust returns a JKS store's trusted certificates and, as Java's trust
// manager does, the end certificate of each key entry.
func jksTrust(data []byte, pw string) ([]*x509.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(pw)); err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		var der []byte
		if e, err := ks.GetTrustedCertificateEntry(alias); err == nil {
			der = e.Certificate.Content
		} else if chain, err := ks.GetPrivateKeyEntryCertificateChain(alias); err == nil && len(chain) > 0 {
			der = chain[0].Content
		}
		if c, err := x509.ParseCertificate(der); err == nil {
			certs = append(certs, c)
		}
	}
	if len(certs) == 0 {
		return nil, errors.New("the store holds no certificate")
	}
	return certs, nil
}

func pemCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var blk *pem.Block
		if blk, data = pem.Decode(data); blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return certs, nil
}

// identity sets the client certificate (mutual TLS) from the key store.
func (b *builder) identity(cfg *tls.Config) {
	loc, inlineKey, inlineChain := b.get("ssl.keystore.location"), b.get("ssl.keystore.key"), b.get("ssl.keystore.certificate.chain")
	typ := b.storeType("ssl.keystore.type")
	var cert tls.Certificate
	var err error
	switch {
	case loc != "" && (inlineKey != "" || inlineChain != ""):
		b.fail("ssl.keystore.location", "set either ssl.keystore.location or ssl.keystore.key with ssl.keystore.certificate.chain, not both")
		return
	case inlineKey != "" || inlineChain != "":
		cert, err = b.inlineIdentity(typ, inlineKey, inlineChain)
	case loc != "" && typ != "":
		cert, err = b.fileIdentity(loc, typ)
	case b.get("ssl.keystore.password") != "":
		b.fail("ssl.keystore.password", "set without ssl.keystore.location")
		return
	default:
		return
	}
	if err == nil {
		cfg.Certificates = []tls.Certificate{cert}
	}
}

// errReported means the failure is already among the builder's errors.
var errReported = errors.New("reported")

func (b *builder) inlineIdentity(typ, key, chain string) (tls.Certificate, error) {
	switch {
	case typ != typePEM:
		b.fail("ssl.keystore.key", "needs ssl.keystore.type=PEM")
	case key == "" || chain == "":
		b.fail("ssl.keystore.key", "ssl.keystore.key and ssl.keystore.certificate.chain go together")
	case b.get("ssl.keystore.password") != "":
		b.fail("ssl.keystore.password", "must not be set with PEM keys; the key's own password is ssl.key.password (as in Kafka)")
	default:
		return b.pemIdentity("ssl.keystore.key", []byte(key), []byte(chain))
	}
	return tls.Certificate{}, errReported
}

func (b *builder) fileIdentity(loc, typ string) (tls.Certificate, error) {
	data, err := os.ReadFile(loc)
	if err != nil {
		b.fail("ssl.keystore.location", "cannot read the key store: "+err.Error())
		return tls.Certificate{}, errReported
	}
	storePW := b.get("ssl.keystore.password")
	if typ == typePEM {
		if storePW != "" {
			b.fail("ssl.keystore.password", "must not be set for a PEM key store; the key's own password is ssl.key.password (as in Kafka)")
			return tls.Certificate{}, errReported
		}
		return b.pemIdentity("ssl.keystore.location", data, data)
	}
	if storePW == "" {
		b.fail("ssl.keystore.password", "is required with a "+typ+" ssl.keystore.location")
		return tls.Certificate{}, errReported
	}
	keyPW := b.get("ssl.key.password")
	if keyPW == "" {
		keyPW = storePW // Kafka's default
	}
	cert, err := binaryIdentity(data, storePW, keyPW)
	if err != nil {
		b.fail("ssl.keystore.location", fmt.Sprintf("cannot read a key and certificate from %s: %v", loc, err))
		return tls.Certificate{}, errReported
	}
	return cert, nil
}

func binaryIdentity(data []byte, storePW, keyPW string) (tls.Certificate, error) {
	switch sniff(data) {
	case typeJKS:
		return jksIdentity(data, storePW, keyPW)
	case typePKCS12:
		if keyPW != storePW {
			return tls.Certificate{}, errors.New("a PKCS12 key with a password of its own (ssl.key.password unlike ssl.keystore.password) is not supported; give the key the store's password")
		}
		key, leaf, chain, err := pkcs12.DecodeChain(data, storePW)
		if err != nil {
			return tls.Certificate{}, err
		}
		return certificate(key, append([]*x509.Certificate{leaf}, chain...))
	}
	return tls.Certificate{}, errNotStore
}

// jksIdentity reads the one private key entry of a JKS store.
func jksIdentity(data []byte, storePW, keyPW string) (tls.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(storePW)); err != nil {
		return tls.Certificate{}, err
	}
	var keys []string
	for _, alias := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(alias) {
			keys = append(keys, alias)
		}
	}
	if len(keys) != 1 {
		return tls.Certificate{}, fmt.Errorf("the store holds %d private key entries; hdfs-sink needs exactly one", len(keys))
	}
	e, err := ks.GetPrivateKeyEntry(keys[0], []byte(keyPW))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("key entry %q: %w (ssl.key.password)", keys[0], err)
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("key entry %q: %w", keys[0], err)
	}
	var chain []*x509.Certificate
	for _, c := range e.CertificateChain {
		cert, err := x509.ParseCertificate(c.Content)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("key entry %q: %w", keys[0], err)
		}
		chain = append(chain, cert)
	}
	return certificate(key, chain)
}

// pemIdentity reads a private key (PKCS#8, encrypted with ssl.key.password
// or not; PKCS#1 and SEC 1 keys too) and its certificate chain.
func (b *builder) pemIdentity(key string, keyData, chainData []byte) (tls.Certificate, error) {
	priv, err := pemKey(keyData, b.get("ssl.key.password"))
	if err != nil {
		b.fail(key, "no usable private key: "+err.Error())
		return tls.Certificate{}, errReported
	}
	chain, err := pemCerts(chainData)
	if err != nil {
		b.fail(key, "no certificate chain: "+err.Error())
		return tls.Certificate{}, errReported
	}
	cert, err := certificate(priv, chain)
	if err != nil {
		b.fail(key, err.Error())
		return tls.Certificate{}, errReported
	}
	return cert, nil
}

func pemKey(data []byte, pw string) (crypto.PrivateKey, error) {
	for {
		var blk *pem.Block
		if blk, data = pem.Decode(data); blk == nil {
			return nil, errors.New("no PEM PRIVATE KEY block")
		}
		switch blk.Type {
		case "PRIVATE KEY":
			return x509.ParsePKCS8PrivateKey(blk.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			if pw == "" {
				return nil, errors.New("the key is encrypted and ssl.key.password is not set")
			}
			k, err := pkcs8.ParsePKCS8PrivateKey(blk.Bytes, []byte(pw))
			if err != nil {
				return nil, fmt.Errorf("cannot decrypt the key with ssl.key.password (PBES2 keys only): %w", err)
			}
			return k, nil
		case "RSA PRIVATE KEY", "EC PRIVATE KEY":
			return legacyKey(blk)
		}
	}
}

func legacyKey(blk *pem.Block) (crypto.PrivateKey, error) {
	if _, enc := blk.Headers["DEK-Info"]; enc {
		return nil, errors.New("legacy OpenSSL-encrypted keys are not supported; convert with openssl pkcs8 -topk8")
	}
	if blk.Type == "RSA PRIVATE KEY" {
		return x509.ParsePKCS1PrivateKey(blk.Bytes)
	}
	return x509.ParseECPrivateKey(blk.Bytes)
}

// certificate pairs key with chain and checks that the key is the leaf's.
func certificate(key crypto.PrivateKey, chain []*x509.Certificate) (tls.Certificate, error) {
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("no certificate for the key")
	}
	signer, ok := key.(crypto.Signer)
	pub, okPub := chain[0].PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !okPub || !pub.Equal(signer.Public()) {
		return tls.Certificate{}, errors.New("the private key does not belong to the first certificate of the chain")
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}
