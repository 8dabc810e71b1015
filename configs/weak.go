package configs

import (
	"net/url"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// Settings that weaken security without breaking anything: they work, so
// nothing else would say so. Each is a warning naming the connector and
// the key, printed by check and logged at every start (and reload).

// warnWeakSecurity warns of the consumer's and the registry client's
// weakening settings.
func (p *parser) warnWeakSecurity(c *Connector) {
	p.warnWeakKafka(c.Kafka)
	if c.NeedsRegistry() {
		p.warnWeakRegistry(c)
	}
}

func (p *parser) warnWeakKafka(k Kafka) {
	props := k.from[clientConsumer]
	protocol := strings.ToUpper(strings.TrimSpace(props["security.protocol"].value))
	if hc, ok := props["ssl.endpoint.identification.algorithm"]; ok && strings.TrimSpace(hc.value) == "" &&
		(protocol == "SSL" || protocol == "SASL_SSL") {
		p.warnOrigin(hc.key, hc.origin, "empty: the broker's certificate is not checked against its host name, so any certificate the trust store accepts can stand in for the broker (set https, the default)")
	}
	mech, ok := props["sasl.mechanism"]
	if !ok || protocol != "SASL_PLAINTEXT" {
		return
	}
	switch strings.ToUpper(strings.TrimSpace(mech.value)) {
	case "PLAIN":
		p.warnOrigin(mech.key, mech.origin, "PLAIN over SASL_PLAINTEXT sends the password in clear to the broker and anyone on the path (use SASL_SSL, or SCRAM)")
	case "OAUTHBEARER":
		p.warnOrigin(mech.key, mech.origin, "OAUTHBEARER over SASL_PLAINTEXT sends the bearer token in clear to the broker and anyone on the path (use SASL_SSL)")
	}
}

func (p *parser) warnWeakRegistry(c *Connector) {
	r := c.Registry
	urlKey, urls, _ := p.pick("value.converter.schema.registry.url", "schema.registry.url")
	var credentials string
	switch {
	case r.Security.Bearer != "":
		credentials = "the bearer token (value.converter.bearer.auth.*)"
	case r.CredentialsSource == CredentialsSASLInherit && (r.Security.InheritJAAS != "" || c.Kafka.Consumer["sasl.jaas.config"] != ""):
		credentials = "the basic auth password (basic.auth.credentials.source SASL_INHERIT)"
	case r.UserInfo != "":
		credentials = "the basic auth password"
		if key, _, ok := p.pick("value.converter.basic.auth.user.info", "value.converter.schema.registry.basic.auth.user.info",
			"basic.auth.user.info", "schema.registry.basic.auth.user.info"); ok && r.CredentialsSource == CredentialsUserInfo {
			credentials += " (" + key + ")"
		} else {
			credentials += " (in the URL)"
		}
	}
	anyHTTPS := false
	for _, s := range splitList(urls) {
		u, err := url.Parse(s)
		if err != nil {
			continue
		}
		switch u.Scheme {
		case "http":
			if credentials != "" {
				p.warn(urlKey, secret.URL(s)+" is plain http: "+credentials+" goes in clear to the registry and anyone on the path (use https)")
			}
		case "https":
			anyHTTPS = true
		}
	}
	const hostCheck = registrySSLPrefix + "endpoint.identification.algorithm"
	if v, ok := p.get(hostCheck); ok && v == "" && anyHTTPS {
		p.warn(hostCheck, "empty: the registry's certificate is not checked against its host name, so any certificate the trust store accepts can stand in for it (set https, the default)")
	}
}
