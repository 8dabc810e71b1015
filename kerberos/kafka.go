package kerberos

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	krbsasl "github.com/twmb/franz-go/pkg/sasl/kerberos"
)

// Krb5LoginModule is the JAAS login module class a GSSAPI Kafka client names.
const Krb5LoginModule = "com.sun.security.auth.module.Krb5LoginModule"

// krb5Options are the Krb5LoginModule options hdfs-sink reads or accepts;
// any other is an error, since it would mean something is not honoured.
var krb5Options = map[string]bool{
	"useKeyTab": true, "keyTab": true, "principal": true, "serviceName": true,
	"storeKey": true, "doNotPrompt": true, "debug": true, "refreshKrb5Config": true,
	"isInitiator": true, "useTicketCache": true,
}

// KafkaLoginConfig reads a Kafka client's Krb5LoginModule options (already
// parsed from sasl.jaas.config) and sasl.kerberos.service.name into a login
// and the broker service name ("kafka" when neither the property nor the
// JAAS serviceName option says otherwise). Only keytab logins are taken: a
// ticket cache cannot be renewed past its own lifetime.
func KafkaLoginConfig(opts map[string]string, serviceName string) (Config, string, error) {
	var errs []string
	for k := range opts {
		if !krb5Options[k] {
			errs = append(errs, fmt.Sprintf("option %s is not supported", k))
		}
	}
	if !isTrue(opts["useKeyTab"]) || opts["keyTab"] == "" {
		errs = append(errs, "needs useKeyTab=true and keyTab=<file>: hdfs-sink logs in from a keytab only")
	}
	if isTrue(opts["useTicketCache"]) {
		errs = append(errs, "useTicketCache=true is not supported: a ticket cache expires and cannot be renewed from; use a keytab")
	}
	if opts["principal"] == "" {
		errs = append(errs, "needs principal=<name@REALM>")
	}
	if v, ok := opts["isInitiator"]; ok && !isTrue(v) {
		errs = append(errs, "isInitiator=false makes no sense for a client")
	}
	if len(errs) > 0 {
		return Config{}, "", errors.New("Krb5LoginModule: " + strings.Join(errs, "; "))
	}
	service := firstNonEmpty(serviceName, opts["serviceName"], "kafka")
	return Config{Principal: opts["principal"], Keytab: opts["keyTab"]}, service, nil
}

func isTrue(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// KafkaMechanism is franz-go's GSSAPI mechanism (pkg/sasl/kerberos) for
// brokers whose principal is service/<broker host>, with the login found
// in logins at the first authentication (so a mechanism built while
// checking a file never contacts a KDC) and then shared. Its failures come
// back as *Error: a refusal (unknown principal, wrong service name) is
// not worth retrying, an unreachable KDC is.
func KafkaMechanism(logins *Logins, cfg Config, service string) sasl.Mechanism {
	return &kafkaMechanism{logins: logins, cfg: cfg, service: service}
}

type kafkaMechanism struct {
	logins  *Logins
	cfg     Config
	service string
}

func (m *kafkaMechanism) Name() string { return "GSSAPI" }

func (m *kafkaMechanism) Authenticate(ctx context.Context, host string) (sasl.Session, []byte, error) {
	l, err := m.logins.Login(m.cfg)
	if err != nil {
		return nil, nil, err
	}
	inner := krbsasl.Auth{Client: l.cl, Service: m.service, PersistAfterAuth: true}.AsMechanism()
	sess, tok, err := inner.Authenticate(ctx, host)
	if err != nil {
		return nil, nil, classify(l.Principal, "Kafka broker "+host+" (service "+m.service+")", err)
	}
	return sess, tok, nil
}
