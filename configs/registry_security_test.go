package configs

import (
	"reflect"
	"testing"
	"time"
)

func TestRegistrySecurityKeys(t *testing.T) {
	data := []byte(`{"name":"orders","config":{"topics":"orders","flush.size":"10","hdfs.url":"hdfs://nn:8020",
		"bootstrap.servers":"k:9092","value.converter.schema.registry.url":"https://sr:8443",
		"value.converter.schema.registry.ssl.truststore.location":"/etc/ts.jks",
		"value.converter.schema.registry.ssl.truststore.password":"ts-pw",
		"value.converter.schema.registry.ssl.keystore.type":"PKCS12",
		"value.converter.bearer.auth.credentials.source":"OAUTHBEARER",
		"value.converter.bearer.auth.issuer.endpoint.url":"https://idp/token",
		"value.converter.bearer.auth.client.id":"sink","value.converter.bearer.auth.client.secret":"cs",
		"value.converter.bearer.auth.scope":"registry","value.converter.bearer.auth.cache.expiry.buffer.seconds":"60",
		"value.converter.bearer.auth.logical.cluster":"lsrc-1","value.converter.bearer.auth.identity.pool.id":"pool-1"}}`)
	c, warns, err := Parse("orders.json", data)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse: %v %v", err, warns)
	}
	want := RegistrySecurity{
		SSL:    map[string]string{"ssl.truststore.location": "/etc/ts.jks", "ssl.truststore.password": "ts-pw", "ssl.keystore.type": "PKCS12"},
		Bearer: BearerOAuth,
		OAuth: RegistryOAuth{IssuerURL: "https://idp/token", ClientID: "sink", ClientSecret: "cs", Scope: "registry",
			SubClaim: "sub", ExpiryBuffer: time.Minute},
		LogicalCluster: "lsrc-1", IdentityPoolID: "pool-1",
	}
	if !reflect.DeepEqual(c.Registry.Security, want) {
		t.Errorf("Security = %+v\nwant %+v", c.Registry.Security, want)
	}
}

func TestRegistrySASLInherit(t *testing.T) {
	data := []byte(`{"name":"orders","config":{"topics":"orders","flush.size":"10","hdfs.url":"hdfs://nn:8020",
		"bootstrap.servers":"k:9092","value.converter.schema.registry.url":"https://sr:8443",
		"value.converter.basic.auth.credentials.source":"SASL_INHERIT",
		"value.converter.sasl.jaas.config":"x.Y required username=\"u\" password=\"p\";",
		"value.converter.bearer.auth.credentials.source":""}}`)
	c, _, err := Parse("orders.json", data)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Registry
	if r.CredentialsSource != CredentialsSASLInherit || r.Security.InheritJAAS == "" || r.Security.Bearer != "" || r.UserInfo != "" {
		t.Errorf("Registry = %+v", r)
	}
}
