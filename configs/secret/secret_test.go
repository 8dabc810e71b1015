package secret

import (
	"testing"
)

import ()

func TestIsKey(t *testing.T) {
	for k, want := range map[string]bool{
		"ssl.truststore.password":                              true,
		"consumer.override.sasl.jaas.config":                   true,
		"value.converter.basic.auth.user.info":                 true,
		"value.converter.schema.registry.basic.auth.user.info": true,
		"sasl.oauthbearer.client.credentials.client.secret":    true,
		"value.converter.bearer.auth.token":                    true,
		"ssl.keystore.key":                                     true,
		"confluent.license":                                    true,
		"bootstrap.servers":                                    false,
		"sasl.mechanism":                                       false,
		"value.converter.schema.registry.url":                  false,
		"sasl.oauthbearer.token.endpoint.url":                  false,
		"hdfs.url":                                             false,
	} {
		if got := IsKey(k); got != want {
			t.Errorf("IsKey(%s) = %v, want %v", k, got, want)
		}
	}
}
