package configs

import (
	"regexp"
	"strings"
	"testing"
)

func mustRE(s string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + s + `)$`) }

func TestIsSecretKey(t *testing.T) {
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
		if got := IsSecretKey(k); got != want {
			t.Errorf("IsSecretKey(%s) = %v, want %v", k, got, want)
		}
	}
}

func TestRedactor(t *testing.T) {
	c, _ := connectorWith(t, workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081"),
		`,"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"svc:Passw0rd-x",
		"consumer.override.sasl.jaas.config":"org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"jaas-pw-1\";"`)
	r := NewRedactor(nil, c)
	in := `401 for svc:Passw0rd-x at http://svc:Passw0rd-x@reg:8081; retry with Passw0rd-x; jaas-pw-1 refused; user svc`
	got := r.Text(in)
	for _, leak := range []string{"Passw0rd-x", "jaas-pw-1"} {
		if strings.Contains(got, leak) {
			t.Errorf("Text leaks %q: %s", leak, got)
		}
	}
	if !strings.Contains(got, "user svc") {
		t.Errorf("Text hid more than secrets: %s", got)
	}
	shown := r.ShowMap(map[string]string{"sasl.jaas.config": "x", "sasl.mechanism": "PLAIN"})
	if shown["sasl.jaas.config"] != Hidden || shown["sasl.mechanism"] != "PLAIN" {
		t.Errorf("ShowMap = %v", shown)
	}
	if got := r.Show("value.converter.schema.registry.url", "http://u:pw@reg"); got != "http://[hidden]@reg" {
		t.Errorf("Show of a URL with user info = %q", got)
	}
}
