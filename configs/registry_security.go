package configs

import (
	"net/url"
	"sort"
	"strings"
	"time"
)

// CredentialsSASLInherit is basic.auth.credentials.source=SASL_INHERIT: the
// registry's basic auth is the user and password of a PLAIN or SCRAM
// sasl.jaas.config (value.converter.sasl.jaas.config, else the consumer's).
const CredentialsSASLInherit CredentialsSource = "SASL_INHERIT"

// BearerSource is bearer.auth.credentials.source.
type BearerSource string

// Bearer token sources Confluent's converter has and hdfs-sink speaks.
const (
	BearerStaticToken BearerSource = "STATIC_TOKEN"
	BearerOAuth       BearerSource = "OAUTHBEARER"
)

// RegistrySecurity is how the converter's registry client secures its
// requests, from Confluent's converter keys (value.converter.…). Files
// and stores are read where the client is built (cmd), not here.
type RegistrySecurity struct {
	// SSL are the value.converter.schema.registry.ssl.* keys by their
	// Java names ("ssl.truststore.location").
	SSL map[string]string
	// InheritJAAS is value.converter.sasl.jaas.config, for SASL_INHERIT;
	// empty means the consumer's sasl.jaas.config.
	InheritJAAS string

	Bearer      BearerSource // "" for none
	BearerToken string       // STATIC_TOKEN
	OAuth       RegistryOAuth
	// Confluent Cloud's headers, from bearer.auth.logical.cluster and
	// bearer.auth.identity.pool.id.
	LogicalCluster, IdentityPoolID string
}

// RegistryOAuth is the client credentials grant of
// bearer.auth.credentials.source=OAUTHBEARER.
type RegistryOAuth struct {
	IssuerURL, ClientID, ClientSecret, Scope string
	SubClaim                                 string        // bearer.auth.sub.claim.name, default "sub"
	ExpiryBuffer                             time.Duration // bearer.auth.cache.expiry.buffer.seconds, default 300 s
}

const (
	registrySSLPrefix = "value.converter.schema.registry.ssl."
	bearerPrefix      = "value.converter.bearer.auth."
)

// bearerKeys are the bearer.auth.* keys read here (without the prefix).
var bearerKeys = []string{
	"credentials.source", "token", "issuer.endpoint.url", "client.id", "client.secret", "scope",
	"scope.claim.name", "sub.claim.name", "cache.expiry.buffer.seconds", "logical.cluster", "identity.pool.id",
}

// registrySecurity reads the converter's TLS and bearer keys.
func (p *parser) registrySecurity(c *Connector) {
	s := &c.Registry.Security
	for k, v := range p.raw {
		if name, ok := strings.CutPrefix(k, registrySSLPrefix); ok {
			if s.SSL == nil {
				s.SSL = map[string]string{}
			}
			s.SSL["ssl."+name] = strings.TrimSpace(v)
		}
	}
	s.InheritJAAS = p.str("value.converter.sasl.jaas.config", "")
	p.bearer(s)
	p.validateRegistrySecurity(c)
}

func (p *parser) bearer(s *RegistrySecurity) {
	p.unknownBearerKeys()
	s.Bearer = choice(p, bearerPrefix+"credentials.source", "", map[string]BearerSource{
		"": "", "static_token": BearerStaticToken, "oauthbearer": BearerOAuth,
	}, map[string]string{
		"sasl_oauthbearer_inherit": "SASL_OAUTHBEARER_INHERIT is not supported by hdfs-sink (STATIC_TOKEN or OAUTHBEARER)",
		"custom":                   "CUSTOM needs a Java class, which hdfs-sink cannot load (STATIC_TOKEN or OAUTHBEARER)",
	}, "must be STATIC_TOKEN or OAUTHBEARER")
	s.LogicalCluster = p.str(bearerPrefix+"logical.cluster", "")
	s.IdentityPoolID = p.str(bearerPrefix+"identity.pool.id", "")
	switch s.Bearer {
	case BearerStaticToken:
		s.BearerToken = p.str(bearerPrefix+"token", "")
		p.require(bearerPrefix+"token", "required with bearer.auth.credentials.source STATIC_TOKEN")
	case BearerOAuth:
		p.registryOAuth(&s.OAuth)
	}
}

func (p *parser) unknownBearerKeys() {
	var unknown []string
	for k := range p.raw {
		if name, ok := strings.CutPrefix(k, bearerPrefix); ok && !contains(bearerKeys, name) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if k == bearerPrefix+"custom.provider.class" {
			p.fail(k, p.raw[k], "names a Java class, which hdfs-sink cannot load")
			continue
		}
		p.fail(k, "[hidden]", "unknown bearer.auth setting (known: bearer.auth."+strings.Join(bearerKeys, ", bearer.auth.")+")")
	}
}

func (p *parser) registryOAuth(o *RegistryOAuth) {
	o.IssuerURL = p.str(bearerPrefix+"issuer.endpoint.url", "")
	o.ClientID = p.str(bearerPrefix+"client.id", "")
	o.ClientSecret = p.str(bearerPrefix+"client.secret", "")
	o.Scope = p.str(bearerPrefix+"scope", "")
	o.SubClaim = p.str(bearerPrefix+"sub.claim.name", "sub")
	secs := p.integer(bearerPrefix+"cache.expiry.buffer.seconds", 300, 0, reasonNonNegative)
	o.ExpiryBuffer = time.Duration(secs) * time.Second
	for _, k := range []string{"issuer.endpoint.url", "client.id", "client.secret"} {
		p.require(bearerPrefix+k, "required with bearer.auth.credentials.source OAUTHBEARER")
	}
	if u, err := url.Parse(o.IssuerURL); o.IssuerURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		p.fail(bearerPrefix+"issuer.endpoint.url", o.IssuerURL, "must be an http:// or https:// token endpoint URL")
	}
}

// require reports key as missing when it is not set.
func (p *parser) require(key, reason string) {
	if !p.has(key) {
		p.missing(key, reason)
	}
}

// validateRegistrySecurity: what the converter keys ask for together.
// TLS settings for a registry reached over http:// would be unused, and
// Confluent's client takes one of basic and bearer auth, never both.
func (p *parser) validateRegistrySecurity(c *Connector) {
	r := &c.Registry
	if len(r.Security.SSL) > 0 && len(r.URLs) > 0 && !anyHTTPS(r.URLs) {
		keys := make([]string, 0, len(r.Security.SSL))
		for k := range r.Security.SSL {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		v := r.Security.SSL[keys[0]]
		if strings.Contains(keys[0], "password") || keys[0] == "ssl.keystore.key" {
			v = "[hidden]"
		}
		p.fail("value.converter.schema.registry."+keys[0], v, "is set, but the registry URLs are http://: nothing would use it")
	}
	basic := r.UserInfo != "" || r.CredentialsSource == CredentialsSASLInherit
	if r.Security.Bearer != "" && basic {
		p.fail(bearerPrefix+"credentials.source", string(r.Security.Bearer),
			"only one of basic.auth (user info or SASL_INHERIT) and bearer.auth may be used, as in Confluent's converter")
	}
}

func anyHTTPS(urls []string) bool {
	for _, u := range urls {
		if strings.HasPrefix(strings.ToLower(u), "https://") {
			return true
		}
	}
	return false
}
