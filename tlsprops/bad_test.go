package tlsprops

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
)

// TestRefused: every setting that cannot be honoured is an error naming the
// key (with the caller's prefix) and saying why; secrets stay hidden.
func TestRefused(t *testing.T) {
	k := newPKI(t)
	jks := k.file(t, "ts.jks", k.ca.TrustJKS(t, "trustpw"))
	ksJKS := k.file(t, "ks.jks", k.client.KeyJKS(t, "storepw", "keypass"))
	ksP12 := k.file(t, "ks.p12", k.client.KeyPKCS12(t, "storepw"))
	caPEM := k.file(t, "ca.pem", testpki.CertPEM(k.ca.Cert))
	foreignKey := k.file(t, "foreign.pem", append(k.server.KeyPEM(t, ""), testpki.CertPEM(k.client.Cert)...))
	tests := []struct {
		name  string
		props Props
		want  string
	}{
		{"unknown key", Props{"ssl.truststore.loaction": "/x"}, `consumer.override.ssl.truststore.loaction = "/x": unknown ssl setting`},
		{"provider", Props{"ssl.provider": "BC"}, `ssl.provider = "BC": names a Java security provider`},
		{"engine factory", Props{"ssl.engine.factory.class": "com.example.F"}, `ssl.engine.factory.class`},
		{"keymanager", Props{"ssl.keymanager.algorithm": "IbmX509"}, `ssl.keymanager.algorithm = "IbmX509"`},
		{"old protocol", Props{"ssl.enabled.protocols": "TLSv1.1,TLSv1.2"}, `ssl.enabled.protocols = "TLSv1.1,TLSv1.2": each must be TLSv1.2 or TLSv1.3`},
		{"ssl.protocol SSL", Props{"ssl.protocol": "SSLv3"}, `ssl.protocol = "SSLv3": must be TLSv1.3`},
		{"no version left", Props{"ssl.protocol": "TLSv1.2", "ssl.enabled.protocols": "TLSv1.3"}, `no version is left`},
		{"unknown cipher", Props{"ssl.cipher.suites": "SSL_RSA_WITH_RC4_128_MD5"}, `SSL_RSA_WITH_RC4_128_MD5 is not a cipher suite Go offers`},
		{"some TLS 1.3 suites", Props{"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, `names some but not all TLS 1.3 suites`},
		{"host check algorithm", Props{"ssl.endpoint.identification.algorithm": "ldaps"}, `must be https (the default) or empty`},
		{"store type", Props{"ssl.truststore.type": "JCEKS", "ssl.truststore.location": jks}, `ssl.truststore.type = "JCEKS": must be JKS, PKCS12 or PEM`},
		{"missing trust store", Props{"ssl.truststore.location": "/nonexistent/ts.jks", "ssl.truststore.password": "x"}, `ssl.truststore.location = "/nonexistent/ts.jks": cannot read the trust store`},
		{"JKS without password", Props{"ssl.truststore.location": jks}, `ssl.truststore.password = "": is required for a JKS trust store`},
		{"wrong trust password", Props{"ssl.truststore.location": jks, "ssl.truststore.password": "wrong!"}, `cannot read ` + jks + ` as a JKS or PKCS12 trust store: got invalid digest`},
		{"PEM trust with password", Props{"ssl.truststore.type": "PEM", "ssl.truststore.location": caPEM, "ssl.truststore.password": "secret1"}, `ssl.truststore.password = "[hidden]": must not be set for a PEM trust store`},
		{"PEM trust store not PEM", Props{"ssl.truststore.type": "PEM", "ssl.truststore.location": jks}, `no trusted certificates`},
		{"both trust forms", Props{"ssl.truststore.type": "PEM", "ssl.truststore.location": caPEM, "ssl.truststore.certificates": "x"}, `set either ssl.truststore.location or ssl.truststore.certificates`},
		{"inline trust not PEM", Props{"ssl.truststore.certificates": "x"}, `needs ssl.truststore.type=PEM`},
		{"trust password alone", Props{"ssl.truststore.password": "secret1"}, `ssl.truststore.password = "[hidden]": set without ssl.truststore.location`},
		{"key store without password", Props{"ssl.keystore.location": ksJKS}, `ssl.keystore.password = "": is required with a JKS ssl.keystore.location`},
		{"wrong key store password", Props{"ssl.keystore.location": ksJKS, "ssl.keystore.password": "wrong!"}, `cannot read a key and certificate from ` + ksJKS + `: got invalid digest`},
		{"wrong key password", Props{"ssl.keystore.location": ksJKS, "ssl.keystore.password": "storepw", "ssl.key.password": "wrong!"}, `(ssl.key.password)`},
		{"PKCS12 key password of its own", Props{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": ksP12, "ssl.keystore.password": "storepw", "ssl.key.password": "other1"}, `a PKCS12 key with a password of its own`},
		{"encrypted PEM without password", Props{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(k.client.KeyPEM(t, "keypw")),
			"ssl.keystore.certificate.chain": string(testpki.CertPEM(k.client.Cert))}, `the key is encrypted and ssl.key.password is not set`},
		{"encrypted PEM wrong password", Props{"ssl.keystore.type": "PEM", "ssl.key.password": "nope12", "ssl.keystore.key": string(k.client.KeyPEM(t, "keypw")),
			"ssl.keystore.certificate.chain": string(testpki.CertPEM(k.client.Cert))}, `cannot decrypt the key with ssl.key.password`},
		{"key not the leaf's", Props{"ssl.keystore.type": "PEM", "ssl.keystore.location": foreignKey}, `the private key does not belong to the first certificate`},
		{"inline key without chain", Props{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(k.client.KeyPEM(t, ""))}, `go together`},
		{"inline key not PEM type", Props{"ssl.keystore.key": string(k.client.KeyPEM(t, "")), "ssl.keystore.certificate.chain": "x"}, `ssl.keystore.key = "[hidden]": needs ssl.keystore.type=PEM`},
		{"PEM key store with store password", Props{"ssl.keystore.type": "PEM", "ssl.keystore.location": caPEM, "ssl.keystore.password": "secret1"}, `ssl.keystore.password = "[hidden]": must not be set for a PEM key store`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Config(tt.props, Prefix("consumer.override."))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant it to contain %s", err, tt.want)
			}
			for _, secret := range []string{"secret1", "trustpw", "storepw", "keypass", "wrong!", "other1", "nope12", "PRIVATE KEY"} {
				if strings.Contains(err.Error(), secret) && !strings.Contains(tt.want, secret) {
					t.Errorf("error shows a secret (%s): %v", secret, err)
				}
			}
		})
	}
}

// TestVersionsAndSuites: what is mapped, and how.
func TestVersionsAndSuites(t *testing.T) {
	tests := []struct {
		props    Props
		min, max uint16
		suites   int
	}{
		{Props{}, tls.VersionTLS12, tls.VersionTLS13, 0},
		{Props{"ssl.protocol": "TLSv1.2"}, tls.VersionTLS12, tls.VersionTLS12, 0},
		{Props{"ssl.enabled.protocols": "TLSv1.3"}, tls.VersionTLS13, tls.VersionTLS13, 0},
		{Props{"ssl.enabled.protocols": " TLSv1.2 , TLSv1.3 "}, tls.VersionTLS12, tls.VersionTLS13, 0},
		// Only TLS 1.2 suites listed: Java cannot negotiate 1.3 then.
		{Props{"ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, tls.VersionTLS12, tls.VersionTLS12, 1},
		// Only TLS 1.3 suites: no 1.2 suite left.
		{Props{"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256"}, tls.VersionTLS13, tls.VersionTLS13, 0},
	}
	for _, tt := range tests {
		cfg := mustConfig(t, tt.props)
		if cfg.MinVersion != tt.min || cfg.MaxVersion != tt.max || len(cfg.CipherSuites) != tt.suites {
			t.Errorf("%v: min %x max %x suites %d; want %x %x %d", tt.props, cfg.MinVersion, cfg.MaxVersion, len(cfg.CipherSuites), tt.min, tt.max, tt.suites)
		}
	}
}
