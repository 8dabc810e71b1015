package tlsprops

import (
	"crypto/tls"
	"crypto/x509"
	"slices"
	"strings"
)

// protocols are the versions ssl.enabled.protocols may name. TLSv1 and
// TLSv1.1 are off in every supported JDK (jdk.tls.disabledAlgorithms), so
// a file that names them never worked with a Java client either.
var protocols = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

// versions maps ssl.protocol and ssl.enabled.protocols to a version range.
func (b *builder) versions(cfg *tls.Config) {
	cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS13
	switch v := b.get("ssl.protocol"); v {
	case "", "TLS", "TLSv1.3":
	case "TLSv1.2": // an SSLContext for TLSv1.2 cannot speak 1.3
		cfg.MaxVersion = tls.VersionTLS12
	default:
		b.fail("ssl.protocol", "must be TLSv1.3 (the default), TLSv1.2 or TLS")
	}
	list := splitList(b.get("ssl.enabled.protocols"))
	if len(list) == 0 {
		return // Java's default: TLSv1.2,TLSv1.3
	}
	lo, hi := uint16(tls.VersionTLS13), uint16(tls.VersionTLS12)
	for _, name := range list {
		ver, ok := protocols[name]
		if !ok {
			b.fail("ssl.enabled.protocols", "each must be TLSv1.2 or TLSv1.3 ("+name+" is not offered: older versions are disabled in Java and Go)")
			return
		}
		lo, hi = min(lo, ver), max(hi, ver)
	}
	cfg.MinVersion, cfg.MaxVersion = max(cfg.MinVersion, lo), min(cfg.MaxVersion, hi)
	if cfg.MinVersion > cfg.MaxVersion {
		b.fail("ssl.enabled.protocols", "names only TLSv1.3 while ssl.protocol is TLSv1.2: no version is left")
	}
}

// tls13Suites are fixed in Go: with TLS 1.3 on, all three are offered.
var tls13Suites = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}

// ciphers maps ssl.cipher.suites: TLS 1.2 suites by their IANA names (Java
// and Go share them). Java cannot negotiate a version none of whose suites
// is listed, so such a version is switched off here too.
func (b *builder) ciphers(cfg *tls.Config) {
	list := splitList(b.get("ssl.cipher.suites"))
	if len(list) == 0 {
		return
	}
	byName := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		byName[s.Name] = s.ID
	}
	var ids []uint16
	var v13 []string
	for _, name := range list {
		switch id, ok := byName[name]; {
		case slices.Contains(tls13Suites, name):
			v13 = append(v13, name)
		case name == "TLS_EMPTY_RENEGOTIATION_INFO_SCSV": // a signal Go always sends
		case ok:
			ids = append(ids, id)
		default:
			b.fail("ssl.cipher.suites", name+" is not a cipher suite Go offers (IANA names of TLS 1.2 suites Go considers secure, or the TLS 1.3 suites)")
			return
		}
	}
	b.limitVersions(cfg, ids, v13)
}

func (b *builder) limitVersions(cfg *tls.Config, ids []uint16, v13 []string) {
	cfg.CipherSuites = ids
	if len(ids) == 0 {
		cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS13)
	}
	switch {
	case cfg.MaxVersion < tls.VersionTLS13:
	case len(v13) == 0:
		cfg.MaxVersion = tls.VersionTLS12
	case len(v13) < len(tls13Suites):
		b.fail("ssl.cipher.suites", "names some but not all TLS 1.3 suites: Go always offers all three ("+strings.Join(tls13Suites, ", ")+"); list all three, or none to disable TLS 1.3")
	}
	if cfg.MinVersion > cfg.MaxVersion {
		b.fail("ssl.cipher.suites", "leaves no cipher suite for any enabled protocol")
	}
}

// hostCheck applies ssl.endpoint.identification.algorithm: "https" (the
// default) checks the server's name; empty checks the chain only, as Java
// does, never nothing.
func (b *builder) hostCheck(cfg *tls.Config) {
	v, set := b.p["ssl.endpoint.identification.algorithm"]
	switch v = strings.TrimSpace(v); {
	case !set || strings.EqualFold(v, "https"):
	case v == "":
		cfg.InsecureSkipVerify = true // replaced by the chain check below
		cfg.VerifyConnection = verifyChainOnly(cfg)
	default:
		b.fail("ssl.endpoint.identification.algorithm", `must be https (the default) or empty (no host name check)`)
	}
}

// verifyChainOnly verifies the server's chain against cfg's roots (the
// system's when none are set) without matching its name.
func verifyChainOnly(cfg *tls.Config) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}
		}
		opts := x509.VerifyOptions{Roots: cfg.RootCAs, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		return nil
	}
}

// splitList splits a Java comma list, trimming items and dropping empty ones.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
