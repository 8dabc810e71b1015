package kerberos

import (
	"errors"
	"strings"

	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/jcmturner/gokrb5/v8/messages"
)

// refusal maps a KDC error code (as gokrb5 names it in its messages) to what
// an operator should do about it.
type refusal struct {
	code   int32
	reason string
}

var refusals = []refusal{
	{errorcode.KDC_ERR_C_PRINCIPAL_UNKNOWN, "the KDC does not know this principal (check its spelling and realm, or create it)"},
	{errorcode.KDC_ERR_PREAUTH_FAILED, "the keytab's key does not match the KDC's (wrong or outdated keytab: re-export it with ktadd -norandkey, or get the current one)"},
	{errorcode.KRB_AP_ERR_BAD_INTEGRITY, "the keytab's key does not match the KDC's (wrong or outdated keytab)"},
	{errorcode.KRB_AP_ERR_SKEW, "this host's clock and the KDC's differ by more than the allowed skew (5 minutes by default): synchronise the clocks (NTP)"},
	{errorcode.KDC_ERR_S_PRINCIPAL_UNKNOWN, "the KDC does not know the service principal asked for (check the service's principal setting and the host name it is dialled by)"},
	{errorcode.KDC_ERR_CLIENT_REVOKED, "the principal is disabled or locked out at the KDC"},
	{errorcode.KDC_ERR_KEY_EXPIRED, "the principal's key has expired at the KDC"},
	{errorcode.KDC_ERR_ETYPE_NOSUPP, "the KDC and the keytab share no encryption type"},
}

// classify turns a gokrb5 failure into an *Error. gokrb5 wraps the KDC's
// KRB-ERROR into text, so its code is found by name.
func classify(principal, during string, err error) *Error {
	e := &Error{Principal: principal, Kind: KindRefused, Err: err}
	msg := err.Error()
	var krbErr messages.KRBError
	code := int32(-1)
	if errors.As(err, &krbErr) {
		code = krbErr.ErrorCode
	}
	for _, r := range refusals {
		if code == r.code || strings.Contains(msg, errorcode.Lookup(r.code)) {
			e.Reason = during + ": " + r.reason
			return e
		}
	}
	switch {
	case strings.Contains(msg, "Decrypting_Error"):
		e.Reason = during + ": the keytab's key does not match the KDC's: its reply cannot be decrypted (wrong or outdated keytab: re-export it, or get the current one)"
	case strings.Contains(msg, "clock skew"):
		e.Reason = during + ": this host's clock and the KDC's differ by more than the allowed skew (krb5.conf clockskew, 5 minutes by default): synchronise the clocks (NTP)"
	case strings.Contains(msg, "communicat") || strings.Contains(msg, "Networking_Error") || strings.Contains(msg, "no KDC"):
		e.Kind = KindUnreachable
		e.Reason = during + ": no KDC answered: " + msg
	default:
		e.Reason = during + ": " + msg
	}
	return e
}
