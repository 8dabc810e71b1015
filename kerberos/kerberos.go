// Package kerberos owns the process's Kerberos logins, on the pure-Go
// github.com/jcmturner/gokrb5 (no cgo, no libkrb5: the binary stays static).
//
// A Login is one principal logged in from one keytab. Logins hands out one
// Login per principal and keytab, shared by everything in the process that
// authenticates as it (HDFS, the Hive Metastore, Kafka), and keeps its
// ticket-granting ticket fresh: it logs in again from the keytab once 80% of
// the ticket's lifetime has passed (as Hadoop's UserGroupInformation does),
// retrying while the KDC is unreachable, and logs each renewal. A credential
// cache is never used: a keytab is the only credential that can log in again
// for days of uptime.
//
// SASL runs the client side of SASL GSSAPI (RFC 4752) for the Hive
// Metastore's Thrift transport, with the security layers (integrity,
// privacy) the server asks for; KafkaMechanism is franz-go's GSSAPI
// mechanism on a shared login.
//
// Errors say which principal, keytab or KDC failed and why, and whether a
// retry can help (KDC unreachable) or not (wrong keytab, unknown principal,
// clock skew); keytab contents never appear in them.
package kerberos

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Config is what one login needs.
type Config struct {
	// Principal is user[/host]@REALM; a "_HOST" component is replaced by
	// this host's name (see ExpandHost). Without a realm, krb5.conf's
	// default_realm applies.
	Principal string
	// Keytab is the keytab file holding the principal's keys.
	Keytab string
	// Krb5Conf is the krb5.conf to read; empty: see Krb5ConfPath.
	Krb5Conf string
	// RenewPeriod bounds the time between two checks of the ticket
	// (kerberos.ticket.renew.period.ms); a ticket is also checked when 80%
	// of its lifetime has passed, whichever comes first. 0: one hour.
	RenewPeriod time.Duration
}

// DefaultRenewPeriod is the reference connector's kerberos.ticket.renew.period.ms.
const DefaultRenewPeriod = time.Hour

// Krb5ConfPath is the krb5.conf a login reads: explicit if set, else
// $KRB5_CONFIG (its first entry when it lists several), else /etc/krb5.conf,
// as MIT's own tools and Java's defaults look.
func Krb5ConfPath(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if env := os.Getenv("KRB5_CONFIG"); env != "" {
		return strings.Split(env, ":")[0]
	}
	return "/etc/krb5.conf"
}

// LocalHost is the host name _HOST stands for: the OS host name in lower
// case, as Hadoop's SecurityUtil lower-cases it.
func LocalHost() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return strings.ToLower(h)
}

// ExpandHost replaces a "_HOST" component of principal (user/_HOST@REALM)
// with host in lower case.
func ExpandHost(principal, host string) string {
	name, realm, hasRealm := strings.Cut(principal, "@")
	parts := strings.Split(name, "/")
	for i, p := range parts {
		if p == "_HOST" {
			parts[i] = strings.ToLower(host)
		}
	}
	out := strings.Join(parts, "/")
	if hasRealm {
		out += "@" + realm
	}
	return out
}

// splitPrincipal splits user/host@REALM into its name components and realm
// ("" when absent).
func splitPrincipal(p string) ([]string, string, error) {
	name, realm, _ := strings.Cut(p, "@")
	if name == "" || strings.Contains(realm, "@") {
		return nil, "", fmt.Errorf("principal %q: want name[/host][@REALM]", p)
	}
	comps := strings.Split(name, "/")
	for _, c := range comps {
		if c == "" {
			return nil, "", fmt.Errorf("principal %q: empty name component", p)
		}
	}
	return comps, realm, nil
}

// Kind says what went wrong in a login, and so whether to retry.
type Kind int

// Kinds of login errors.
const (
	// KindConfig: the keytab, principal or krb5.conf cannot be used as
	// given. No retry helps.
	KindConfig Kind = iota + 1
	// KindRefused: the KDC answered and refused (unknown principal, wrong
	// key, clock skew, unknown service). No retry helps.
	KindRefused
	// KindUnreachable: no KDC answered. Worth retrying.
	KindUnreachable
)

// Error is a failed login or ticket request.
type Error struct {
	Principal string
	Kind      Kind
	Reason    string // what the operator should know, never a secret
	Err       error
}

func (e *Error) Error() string {
	return fmt.Sprintf("kerberos: %s: %s", e.Principal, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether err is a Kerberos failure that a later attempt
// may not repeat (no KDC answered). Other Kerberos errors need an operator.
func Retryable(err error) bool {
	var ke *Error
	return errors.As(err, &ke) && ke.Kind == KindUnreachable
}

// IsKerberos reports whether err is or wraps an *Error.
func IsKerberos(err error) bool {
	var ke *Error
	return errors.As(err, &ke)
}
