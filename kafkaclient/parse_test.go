package kafkaclient

import (
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

const (
	plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="hunter2";`
	scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="hunter2";`
	oauthJAAS = `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="sink" clientSecret="hunter2" scope="kafka";`
)

func TestParseAccepts(t *testing.T) {
	ca := testpki.NewCA(t, "ca")
	pemFile := testpki.Write(t, t.TempDir(), "ca.pem", testpki.CertPEM(ca.Cert))
	tests := []struct {
		props      Props
		protocol   string
		mech       string
		tls, _sasl bool
	}{
		{Props{}, Plaintext, "", false, false},
		{Props{"security.protocol": "ssl", "ssl.truststore.type": "PEM", "ssl.truststore.location": pemFile}, SSL, "", true, false},
		{Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS}, SASLPlaintext, "PLAIN", false, true},
		{Props{"security.protocol": "SASL_SSL", "sasl.mechanism": "scram-sha-512", "sasl.jaas.config": scramJAAS,
			"sasl.kerberos.service.name": "kafka", "ssl.client.auth": "required"}, SASLSSL, "SCRAM-SHA-512", true, true},
		{Props{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": oauthJAAS,
			"sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
			"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"}, SASLSSL, "OAUTHBEARER", true, true},
	}
	for _, tt := range tests {
		s, err := Parse(tt.props, tlsprops.Prefix("consumer.override."))
		if err != nil {
			t.Errorf("%v: %v", tt.props, err)
			continue
		}
		if s.Protocol != tt.protocol || s.Mechanism != tt.mech || (s.tls != nil) != tt.tls || (s.sasl != nil) != tt._sasl {
			t.Errorf("%v: got %s %s tls=%v sasl=%v", tt.props, s.Protocol, s.Mechanism, s.tls != nil, s.sasl != nil)
		}
	}
}

// TestParseRefuses: every security setting that cannot be honoured is an
// error naming the key as the user wrote it; secrets never show.
func TestParseRefuses(t *testing.T) {
	sasl := func(mech, jaas string, more ...string) Props {
		p := Props{"security.protocol": "SASL_SSL", "sasl.mechanism": mech, "sasl.jaas.config": jaas}
		for i := 0; i+1 < len(more); i += 2 {
			p[more[i]] = more[i+1]
		}
		return p
	}
	oauth := func(more ...string) Props {
		return sasl("OAUTHBEARER", oauthJAAS, append([]string{"sasl.oauthbearer.token.endpoint.url", "http://idp:8080/token"}, more...)...)
	}
	// A GSSAPI login reads $KRB5_CONFIG, else /etc/krb5.conf: give it a
	// krb5.conf of the test's own, so that the keytab case fails on its
	// keytab on every machine, not on a machine without /etc/krb5.conf.
	krb5, _ := krbLogin(t)
	t.Setenv("KRB5_CONFIG", krb5)
	tests := []struct {
		name  string
		props Props
		want  string
	}{
		{"protocol", Props{"security.protocol": "TLS"}, `consumer.override.security.protocol = "TLS": must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL`},
		{"truststore with PLAINTEXT", Props{"ssl.truststore.location": "/ts.jks"}, `consumer.override.ssl.truststore.location = "/ts.jks": is set, but security.protocol=PLAINTEXT (the default) does not use it`},
		{"jaas with SSL", Props{"security.protocol": "SSL", "sasl.jaas.config": plainJAAS}, `consumer.override.sasl.jaas.config = "[hidden]": is set, but security.protocol=SSL does not use it`},
		{"GSSAPI by default", Props{"security.protocol": "SASL_SSL", "sasl.jaas.config": plainJAAS}, `sasl.mechanism GSSAPI needs the login module com.sun.security.auth.module.Krb5LoginModule`},
		{"GSSAPI ticket cache", Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
			"sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true principal="sink@EXAMPLE.COM";`}, "useTicketCache=true is not supported"},
		{"GSSAPI keytab missing", Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
			"sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/nonexistent.keytab" principal="sink@EXAMPLE.COM";`}, "/nonexistent.keytab"},
		{"unknown mechanism", sasl("AWS_MSK_IAM", plainJAAS), `sasl.mechanism = "AWS_MSK_IAM": must be GSSAPI (Kafka's default), PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER`},
		{"no jaas", Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, `sasl.jaas.config = "": must be set with sasl.mechanism PLAIN`},
		{"bad jaas", sasl("PLAIN", `PlainLoginModule required username="a" password="hunter2"`), `sasl.jaas.config = "[hidden]": is not a JAAS configuration: login module PlainLoginModule: the entry is not terminated by ';'`},
		{"two modules", sasl("PLAIN", plainJAAS+plainJAAS), `must hold exactly one login module`},
		{"module for another mechanism", sasl("SCRAM-SHA-256", plainJAAS), `sasl.mechanism SCRAM-SHA-256 needs the login module org.apache.kafka.common.security.scram.ScramLoginModule, not org.apache.kafka.common.security.plain.PlainLoginModule`},
		{"no password", sasl("PLAIN", `org.apache.kafka.common.security.plain.PlainLoginModule required username="a";`), `PlainLoginModule needs the option password`},
		{"callback handler", sasl("PLAIN", plainJAAS, "sasl.client.callback.handler.class", "com.example.H"), `sasl.client.callback.handler.class = "com.example.H": names a Java class`},
		{"login handler with PLAIN", sasl("PLAIN", plainJAAS, "sasl.login.callback.handler.class", "com.example.H"), `sasl.login.callback.handler.class = "com.example.H"`},
		{"unknown sasl key", sasl("PLAIN", plainJAAS, "sasl.kerberos.servicename", "kafka"), `sasl.kerberos.servicename = "kafka": unknown sasl setting`},
		{"tls error through", Props{"security.protocol": "SSL", "ssl.keystore.type": "BCFKS"}, `consumer.override.ssl.keystore.type = "BCFKS": must be JKS, PKCS12 or PEM`},
		{"oauth without endpoint", sasl("OAUTHBEARER", oauthJAAS), `sasl.oauthbearer.token.endpoint.url = "": must be set with sasl.mechanism OAUTHBEARER`},
		{"oauth unsecured", sasl("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="x";`,
			"sasl.oauthbearer.token.endpoint.url", "http://idp/token"), `option unsecuredLoginStringClaim_sub: Kafka's unsecured test tokens are not supported`},
		{"oauth no secret", sasl("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="x";`,
			"sasl.oauthbearer.token.endpoint.url", "http://idp/token"), `OAuthBearerLoginModule needs clientId and clientSecret`},
		{"oauth endpoint scheme", oauth("sasl.oauthbearer.token.endpoint.url", "ldap://idp"), `must be an http://, https:// or file:// URL`},
		{"oauth token file missing", oauth("sasl.oauthbearer.token.endpoint.url", "file:///nonexistent/token"), `cannot read the token file`},
		{"oauth jwt-bearer", oauth("sasl.oauthbearer.assertion.file", "/a.jwt"), `sasl.oauthbearer.assertion.file = "/a.jwt": the jwt-bearer grant`},
		{"oauth retriever", oauth("sasl.oauthbearer.jwt.retriever.class", "com.example.R"), `must be one of Kafka's Default, ClientCredentials or File JwtRetriever`},
		{"oauth file retriever for http", oauth("sasl.oauthbearer.jwt.retriever.class", retrieverPkg+"FileJwtRetriever"), `FileJwtRetriever needs a file:// token endpoint`},
		{"oauth refresh factor", oauth("sasl.login.refresh.window.factor", "0.2"), `sasl.login.refresh.window.factor = "0.2": must be a number from 0.5 to 1`},
		{"oauth buffer", oauth("sasl.login.refresh.buffer.seconds", "7200"), `must be a number of seconds from 0 to 3600`},
		{"oauth timeout", oauth("sasl.login.read.timeout.ms", "soon"), `sasl.login.read.timeout.ms = "soon"`},
		{"oauth extension", sasl("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="x" clientSecret="hunter2" extension_auth="x";`,
			"sasl.oauthbearer.token.endpoint.url", "http://idp/token"), `option extension_auth: an extension name is letters only`},
		{"oauth ssl options over http", sasl("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="x" clientSecret="hunter2" ssl.truststore.location="/x";`,
			"sasl.oauthbearer.token.endpoint.url", "http://idp/token"), `ssl.* options are set for a token endpoint that is not https`},
		{"oauth secret key hidden", oauth("sasl.oauthbearer.client.credentials.client.secret", "hunter2", "sasl.oauthbearer.header.urlencode", "yes"), `sasl.oauthbearer.header.urlencode = "yes": must be true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.props, tlsprops.Prefix("consumer.override."))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant it to contain %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}

func TestUserPassword(t *testing.T) {
	if u, p, ok := UserPassword(Props{"sasl.jaas.config": scramJAAS}); !ok || u != "alice" || p != "hunter2" {
		t.Errorf("scram: %q %q %v", u, p, ok)
	}
	if _, _, ok := UserPassword(Props{"sasl.jaas.config": oauthJAAS}); ok {
		t.Error("an OAuth login has no user and password")
	}
}
