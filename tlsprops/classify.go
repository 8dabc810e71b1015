package tlsprops

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Failure says why a TLS handshake failed in a way that retrying will not
// fix; the empty string means the error is not such a failure.
func Failure(err error) string {
	var (
		unknown  x509.UnknownAuthorityError
		host     x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		verifyEr *tls.CertificateVerificationError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &unknown):
		return "the server's certificate is not signed by a trusted CA (check ssl.truststore.*)"
	case errors.As(err, &host):
		return fmt.Sprintf("host name mismatch: %v (ssl.endpoint.identification.algorithm= turns the name check off)", host)
	case errors.As(err, &invalid):
		return invalidReason(invalid)
	case errors.As(err, &record):
		return "the server does not speak TLS (does security.protocol match the listener?)"
	case errors.As(err, &verifyEr):
		return "the server's certificate did not verify: " + verifyEr.Err.Error()
	}
	if a := remoteAlert(err); a != "" {
		return "the server refused the TLS handshake (" + a + "): does it require a client certificate (ssl.keystore.*), or reject this one?"
	}
	return ""
}

func invalidReason(e x509.CertificateInvalidError) string {
	if e.Reason == x509.Expired {
		now := time.Now().UTC().Format(time.RFC3339)
		return fmt.Sprintf("the server's certificate %q has expired or is not yet valid (now %s, valid %s to %s)",
			e.Cert.Subject.CommonName, now, e.Cert.NotBefore.UTC().Format(time.RFC3339), e.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return "the server's certificate is not valid: " + e.Error()
}

// remoteAlert finds an alert the server sent ("remote error: tls: bad
// certificate"). crypto/tls reports received alerts as a net.OpError whose
// Op is "remote error" around an unexported alert type, so its text is all
// there is to go by.
func remoteAlert(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if _, ok := e.(tls.AlertError); ok {
			return e.Error()
		}
	}
	msg := err.Error()
	if i := strings.Index(msg, "remote error: tls: "); i >= 0 {
		return msg[i+len("remote error: "):]
	}
	return ""
}
