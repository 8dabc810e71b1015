package kafkaclient

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/hdfs-sink/hdfs-sink/kerberos"
)

// Login module classes, as sasl.jaas.config names them.
const (
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

// mechanism is one SASL mechanism: the login module its JAAS config must
// name, and how its franz-go mechanism is built from the module's options
// and the client's properties (errors go to the builder).
type mechanism struct {
	module string
	build  func(b *builder, opts map[string]string) sasl.Mechanism
}

// mechanisms is every sasl.mechanism hdfs-sink speaks.
var mechanisms = map[string]mechanism{
	"PLAIN":         {plainModule, buildPlain},
	"SCRAM-SHA-256": {scramModule, buildScram(scram.Auth.AsSha256Mechanism)},
	"SCRAM-SHA-512": {scramModule, buildScram(scram.Auth.AsSha512Mechanism)},
	"OAUTHBEARER":   {oauthModule, buildOAuth},
	"GSSAPI":        {kerberos.Krb5LoginModule, buildKerberos},
}

// saslKeys are the client's sasl.* keys this package reads or accepts.
// The sasl.kerberos.* keys belong to GSSAPI; like the Java client, other
// mechanisms leave them unused.
var saslKeys = []string{
	"sasl.mechanism", "sasl.jaas.config",
	"sasl.client.callback.handler.class", "sasl.login.callback.handler.class", "sasl.login.class",
	"sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
	"sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
}

func (b *builder) mechanism(s *Security) (string, sasl.Mechanism) {
	b.unknownSASLKeys()
	name := strings.ToUpper(b.get("sasl.mechanism"))
	if name == "" {
		name = "GSSAPI"
	}
	m, ok := mechanisms[name]
	if !ok {
		b.fail("sasl.mechanism", "must be GSSAPI (Kafka's default), PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER")
		return name, nil
	}
	b.handlerClasses(name)
	opts, ok := b.loginModule(name, m.module)
	if !ok {
		return name, nil
	}
	mech := m.build(b, opts)
	if mech == nil {
		return name, nil
	}
	return name, tracked{mech, s}
}

func (b *builder) unknownSASLKeys() {
	var unknown []string
	for k := range b.p {
		if strings.HasPrefix(k, "sasl.") && !slices.Contains(saslKeys, k) && !slices.Contains(oauthKeys, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		b.fail(k, "unknown sasl setting for a Kafka client")
	}
}

// oauthHandlers are the login callback handlers that do what this package
// does for OAUTHBEARER (the second is their name before Kafka 3.4).
var oauthHandlers = []string{
	"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
	"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
}

// handlerClasses refuses Java classes hdfs-sink cannot load.
func (b *builder) handlerClasses(mech string) {
	if b.get("sasl.client.callback.handler.class") != "" {
		b.fail("sasl.client.callback.handler.class", "names a Java class, which hdfs-sink cannot load")
	}
	if b.get("sasl.login.class") != "" {
		b.fail("sasl.login.class", "names a Java class, which hdfs-sink cannot load")
	}
	h := b.get("sasl.login.callback.handler.class")
	if h != "" && !(mech == "OAUTHBEARER" && slices.Contains(oauthHandlers, h)) {
		b.fail("sasl.login.callback.handler.class", "names a Java class, which hdfs-sink cannot load (with OAUTHBEARER, "+oauthHandlers[0]+" is what hdfs-sink does)")
	}
}

// loginModule parses sasl.jaas.config: exactly one entry, of the module
// the mechanism needs.
func (b *builder) loginModule(mech, module string) (map[string]string, bool) {
	v := b.get("sasl.jaas.config")
	if v == "" {
		b.fail("sasl.jaas.config", "must be set with sasl.mechanism "+mech+" ("+module+" required ...;); a JAAS file named by java.security.auth.login.config is not read")
		return nil, false
	}
	mods, err := ParseJAAS(v)
	switch {
	case err != nil:
		b.fail("sasl.jaas.config", "is not a JAAS configuration: "+err.Error())
	case len(mods) != 1:
		b.fail("sasl.jaas.config", "must hold exactly one login module, as for any Kafka client")
	case mods[0].Class != module:
		b.fail("sasl.jaas.config", "sasl.mechanism "+mech+" needs the login module "+module+", not "+mods[0].Class)
	default:
		return mods[0].Options, true
	}
	return nil, false
}

// needOptions reports the JAAS options a module requires that are missing.
func (b *builder) needOptions(opts map[string]string, module string, names ...string) bool {
	ok := true
	for _, n := range names {
		if opts[n] == "" {
			b.fail("sasl.jaas.config", module+" needs the option "+n)
			ok = false
		}
	}
	return ok
}

func buildPlain(b *builder, opts map[string]string) sasl.Mechanism {
	if !b.needOptions(opts, "PlainLoginModule", "username", "password") {
		return nil
	}
	return plain.Auth{User: opts["username"], Pass: opts["password"]}.AsMechanism()
}

func buildScram(as func(scram.Auth) sasl.Mechanism) func(*builder, map[string]string) sasl.Mechanism {
	return func(b *builder, opts map[string]string) sasl.Mechanism {
		if !b.needOptions(opts, "ScramLoginModule", "username", "password") {
			return nil
		}
		token := strings.EqualFold(opts["tokenauth"], "true") // a delegation token
		return as(scram.Auth{User: opts["username"], Pass: opts["password"], IsToken: token})
	}
}

// buildKerberos reads a Krb5LoginModule login (keytab only: a ticket
// cache cannot be renewed from) and checks its keytab and krb5.conf as far
// as that can be done without a KDC. The KDC is asked at the first
// authentication, with the process's shared login for that principal.
func buildKerberos(b *builder, opts map[string]string) sasl.Mechanism {
	cfg, service, err := kerberos.KafkaLoginConfig(opts, b.get("sasl.kerberos.service.name"))
	if err != nil {
		b.fail("sasl.jaas.config", err.Error())
		return nil
	}
	cfg.Krb5Conf = b.krb.Krb5Conf
	if _, err := kerberos.Prepare(cfg); err != nil {
		b.fail("sasl.jaas.config", err.Error())
		return nil
	}
	if b.krb.Logins == nil {
		return noLogins{}
	}
	return kerberos.KafkaMechanism(b.krb.Logins, cfg, service)
}

// noLogins is the GSSAPI mechanism of a Security parsed without the
// process's logins (by check): it refuses to authenticate rather than
// connect without.
type noLogins struct{}

func (noLogins) Name() string { return "GSSAPI" }

func (noLogins) Authenticate(context.Context, string) (sasl.Session, []byte, error) {
	return nil, nil, errors.New("GSSAPI: this client was built without the process's Kerberos logins")
}

// tracked remembers which broker a SASL exchange was last started with:
// the broker's refusal comes back as an error code without its address.
type tracked struct {
	sasl.Mechanism
	s *Security
}

func (t tracked) Authenticate(ctx context.Context, addr string) (sasl.Session, []byte, error) {
	t.s.last.Store(addr)
	return t.Mechanism.Authenticate(ctx, addr)
}
