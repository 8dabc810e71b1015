package kafkaclient

import (
	"context"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	sasloauth "github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/hdfs-sink/hdfs-sink/oauth"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// oauthKeys are the OAUTHBEARER and login-refresh keys of a Kafka client.
// The jwks, expected.* and allow.unverified.* keys configure a broker's
// validator; a client leaves them unused, as the Java client does.
var oauthKeys = []string{
	"sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
	"sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
	"sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
	"sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms",
	"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name",
	"sasl.oauthbearer.jwt.retriever.class", "sasl.oauthbearer.jwt.validator.class", "sasl.oauthbearer.scope",
	"sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.credentials.client.secret",
	"sasl.oauthbearer.header.urlencode",
	"sasl.oauthbearer.jwks.endpoint.url", "sasl.oauthbearer.jwks.endpoint.refresh.ms",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
	"sasl.oauthbearer.clock.skew.seconds", "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
	"sasl.oauthbearer.allow.unverified.audience", "sasl.oauthbearer.allow.unverified.issuer",
	"sasl.oauthbearer.assertion.algorithm", "sasl.oauthbearer.assertion.claim.aud",
	"sasl.oauthbearer.assertion.claim.exp.seconds", "sasl.oauthbearer.assertion.claim.iss",
	"sasl.oauthbearer.assertion.claim.jti.include", "sasl.oauthbearer.assertion.claim.nbf.seconds",
	"sasl.oauthbearer.assertion.claim.sub", "sasl.oauthbearer.assertion.file",
	"sasl.oauthbearer.assertion.private.key.file", "sasl.oauthbearer.assertion.private.key.passphrase",
	"sasl.oauthbearer.assertion.template.file",
}

const retrieverPkg = "org.apache.kafka.common.security.oauthbearer."

// oauthConfig is how OAUTHBEARER tokens are obtained and renewed, and the
// SASL extensions sent with them.
type oauthConfig struct {
	oauth.Config
	extensions map[string]string
}

func buildOAuth(b *builder, opts map[string]string) sasl.Mechanism {
	cfg := b.oauthConfig(opts)
	if cfg == nil {
		return nil
	}
	ts := oauth.New(cfg.Config)
	return oauthMechanism{sasloauth.Oauth(tokenAuth(ts, cfg.extensions)), ts}
}

// tokenAuth is the OAUTHBEARER message: ts's current token and the
// extensions.
func tokenAuth(ts *oauth.Source, extensions map[string]string) func(context.Context) (sasloauth.Auth, error) {
	return func(ctx context.Context) (sasloauth.Auth, error) {
		tok, err := ts.Token(ctx)
		if err != nil {
			return sasloauth.Auth{}, err
		}
		return sasloauth.Auth{Token: tok, Extensions: extensions}, nil
	}
}

// oauthMechanism keeps its token source reachable, for the logger.
type oauthMechanism struct {
	sasl.Mechanism
	ts *oauth.Source
}

func (b *builder) oauthConfig(opts map[string]string) *oauthConfig {
	n := len(b.errs)
	cfg := &oauthConfig{Config: oauth.Config{SubClaim: b.str("sasl.oauthbearer.sub.claim.name", "sub")}, extensions: b.extensions(opts)}
	b.refusedOAuth(opts)
	cfg.Endpoint = b.tokenEndpoint()
	if cfg.Endpoint != nil && cfg.Endpoint.Scheme != "file" {
		b.clientCredentials(cfg, opts)
	}
	cfg.URLEncode = b.flag("sasl.oauthbearer.header.urlencode")
	cfg.Timeout = b.millis("sasl.login.connect.timeout.ms", 10_000) + b.millis("sasl.login.read.timeout.ms", 10_000)
	cfg.Backoff = b.millis("sasl.login.retry.backoff.ms", 100)
	cfg.BackoffMax = b.millis("sasl.login.retry.backoff.max.ms", 10_000)
	cfg.Refresh = oauth.Refresh{
		Factor: b.fraction("sasl.login.refresh.window.factor", 0.8, 0.5, 1.0), Jitter: b.fraction("sasl.login.refresh.window.jitter", 0.05, 0, 0.25),
		MinPeriod: b.seconds("sasl.login.refresh.min.period.seconds", 60, 900), Buffer: b.seconds("sasl.login.refresh.buffer.seconds", 300, 3600),
	}
	if len(b.errs) > n {
		return nil
	}
	return cfg
}

// refusedOAuth: what Kafka can do with OAUTHBEARER that hdfs-sink cannot.
func (b *builder) refusedOAuth(opts map[string]string) {
	for _, k := range oauthKeys {
		if strings.HasPrefix(k, "sasl.oauthbearer.assertion.") && b.get(k) != "" {
			b.fail(k, "the jwt-bearer grant (JwtBearerJwtRetriever) is not supported; use client credentials")
		}
	}
	switch r := b.get("sasl.oauthbearer.jwt.retriever.class"); r {
	case "", retrieverPkg + "DefaultJwtRetriever", retrieverPkg + "ClientCredentialsJwtRetriever", retrieverPkg + "FileJwtRetriever":
	default:
		b.fail("sasl.oauthbearer.jwt.retriever.class", "must be one of Kafka's Default, ClientCredentials or File JwtRetriever (hdfs-sink cannot load other classes)")
	}
	switch v := b.get("sasl.oauthbearer.jwt.validator.class"); v {
	case "", retrieverPkg + "DefaultJwtValidator", retrieverPkg + "ClientJwtValidator":
	default:
		b.fail("sasl.oauthbearer.jwt.validator.class", "must be Kafka's DefaultJwtValidator or ClientJwtValidator (hdfs-sink cannot load other classes)")
	}
	for k := range opts {
		if strings.HasPrefix(k, "unsecuredLogin") {
			b.fail("sasl.jaas.config", "option "+k+": Kafka's unsecured test tokens are not supported; set sasl.oauthbearer.token.endpoint.url")
			return
		}
	}
}

func (b *builder) tokenEndpoint() *url.URL {
	const key = "sasl.oauthbearer.token.endpoint.url"
	v := b.get(key)
	if v == "" {
		b.fail(key, "must be set with sasl.mechanism OAUTHBEARER (an http(s) token endpoint, or a file:// token); Kafka's unsecured test tokens are not supported")
		return nil
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file"):
		b.fail(key, "must be an http://, https:// or file:// URL")
	case u.Scheme == "file" && b.get("sasl.oauthbearer.jwt.retriever.class") == retrieverPkg+"ClientCredentialsJwtRetriever":
		b.fail("sasl.oauthbearer.jwt.retriever.class", "ClientCredentialsJwtRetriever needs an http(s) token endpoint")
	case u.Scheme != "file" && b.get("sasl.oauthbearer.jwt.retriever.class") == retrieverPkg+"FileJwtRetriever":
		b.fail("sasl.oauthbearer.jwt.retriever.class", "FileJwtRetriever needs a file:// token endpoint")
	case u.Scheme == "file":
		if _, err := os.Stat(u.Path); err != nil {
			b.fail(key, "cannot read the token file: "+err.Error())
		}
		return u
	default:
		return u
	}
	return nil
}

// clientCredentials: the client id, secret and scope of the client
// credentials grant, from Kafka 4.1's own keys or else the JAAS options,
// and the JAAS ssl.* options Kafka applies to the token endpoint.
func (b *builder) clientCredentials(cfg *oauthConfig, opts map[string]string) {
	cfg.ClientID = first(b.get("sasl.oauthbearer.client.credentials.client.id"), opts["clientId"])
	cfg.Secret = first(b.get("sasl.oauthbearer.client.credentials.client.secret"), opts["clientSecret"])
	cfg.Scope = first(b.get("sasl.oauthbearer.scope"), opts["scope"])
	if cfg.ClientID == "" || cfg.Secret == "" {
		b.fail("sasl.jaas.config", "OAuthBearerLoginModule needs clientId and clientSecret (or sasl.oauthbearer.client.credentials.client.id and .client.secret) for the token endpoint")
	}
	ssl := tlsprops.Props{}
	for k, v := range opts {
		if strings.HasPrefix(k, "ssl.") {
			ssl[k] = v
		}
	}
	if len(ssl) > 0 {
		if cfg.Endpoint.Scheme != "https" {
			b.fail("sasl.jaas.config", "ssl.* options are set for a token endpoint that is not https")
		}
		var err error
		if cfg.TLS, err = tlsprops.Config(ssl, tlsprops.Prefix(b.name("sasl.jaas.config")+" option ")); err != nil {
			b.errs = append(b.errs, err)
		}
	}
}

// extensionName is what Kafka allows as a SASL extension name.
var extensionName = regexp.MustCompile(`^[A-Za-z]+$`)

// extensions are the JAAS options extension_<name>=<value>, sent as SASL
// extensions (Confluent Cloud's logicalCluster and identityPoolId).
func (b *builder) extensions(opts map[string]string) map[string]string {
	ext := map[string]string{}
	for k, v := range opts {
		name, ok := strings.CutPrefix(k, "extension_")
		if !ok {
			continue
		}
		if !extensionName.MatchString(name) || name == "auth" {
			b.fail("sasl.jaas.config", "option "+k+": an extension name is letters only and not \"auth\"")
			continue
		}
		ext[name] = v
	}
	return ext
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func (b *builder) str(key, def string) string { return first(b.get(key), def) }

func (b *builder) flag(key string) bool {
	switch v := strings.ToLower(b.get(key)); v {
	case "", "false":
		return false
	case "true":
		return true
	}
	b.fail(key, "must be true or false")
	return false
}

func (b *builder) millis(key string, def int64) time.Duration {
	v := b.get(key)
	if v == "" {
		return time.Duration(def) * time.Millisecond
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > int64(24*time.Hour/time.Millisecond) {
		b.fail(key, "must be a number of milliseconds >= 0")
		return time.Duration(def) * time.Millisecond
	}
	return time.Duration(n) * time.Millisecond
}

func (b *builder) seconds(key string, def, most int64) time.Duration {
	v := b.get(key)
	n, err := strconv.ParseInt(first(v, strconv.FormatInt(def, 10)), 10, 64)
	if err != nil || n < 0 || n > most {
		b.fail(key, "must be a number of seconds from 0 to "+strconv.FormatInt(most, 10))
		return time.Duration(def) * time.Second
	}
	return time.Duration(n) * time.Second
}

func (b *builder) fraction(key string, def, lo, hi float64) float64 {
	v := b.get(key)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < lo || f > hi {
		b.fail(key, "must be a number from "+strconv.FormatFloat(lo, 'g', -1, 64)+" to "+strconv.FormatFloat(hi, 'g', -1, 64))
		return def
	}
	return f
}
