package configs

import (
	"strings"
	"testing"
)

// TestWeakSecurityWarnings: settings that work but weaken security are
// each one warning naming the connector and the key (and where a worker
// key came from); their secure counterparts draw none.
func TestWeakSecurityWarnings(t *testing.T) {
	const base = "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=https://w:8081"
	const jaas = `"consumer.override.sasl.jaas.config":"org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";"`
	for _, tc := range []struct {
		name, worker, extra string
		want                string // "" for no warning about security
	}{
		{"TLS without host check", "", `,"consumer.override.security.protocol":"SSL","consumer.override.ssl.endpoint.identification.algorithm":""`,
			`connector "c": consumer.override.ssl.endpoint.identification.algorithm: empty: the broker's certificate is not checked against its host name`},
		{"TLS without host check, from the worker", "\nconsumer.security.protocol=SASL_SSL\nconsumer.sasl.mechanism=SCRAM-SHA-512\nconsumer.ssl.endpoint.identification.algorithm=", "",
			`connector "c": consumer.ssl.endpoint.identification.algorithm: empty: the broker's certificate is not checked against its host name, so any certificate the trust store accepts can stand in for the broker (set https, the default) (set in worker w.properties)`},
		{"TLS with host check", "", `,"consumer.override.security.protocol":"SSL","consumer.override.ssl.endpoint.identification.algorithm":"https"`, ""},
		{"SASL PLAIN over plaintext", "", `,"consumer.override.security.protocol":"SASL_PLAINTEXT","consumer.override.sasl.mechanism":"PLAIN",` + jaas,
			`connector "c": consumer.override.sasl.mechanism: PLAIN over SASL_PLAINTEXT sends the password in clear`},
		{"OAUTHBEARER over plaintext", "", `,"consumer.override.security.protocol":"SASL_PLAINTEXT","consumer.override.sasl.mechanism":"OAUTHBEARER"`,
			`connector "c": consumer.override.sasl.mechanism: OAUTHBEARER over SASL_PLAINTEXT sends the bearer token in clear`},
		{"SASL PLAIN over TLS", "", `,"consumer.override.security.protocol":"SASL_SSL","consumer.override.sasl.mechanism":"PLAIN",` + jaas, ""},
		{"SCRAM over plaintext", "", `,"consumer.override.security.protocol":"SASL_PLAINTEXT","consumer.override.sasl.mechanism":"SCRAM-SHA-256"`, ""},
		{"registry basic auth over http", "", `,"value.converter.schema.registry.url":"http://r:8081,https://r2:8081",
			"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"svc:pw"`,
			`connector "c": value.converter.schema.registry.url: http://r:8081 is plain http: the basic auth password (value.converter.basic.auth.user.info) goes in clear`},
		{"registry bearer token over http", "", `,"value.converter.schema.registry.url":"http://r:8081",
			"value.converter.bearer.auth.credentials.source":"STATIC_TOKEN","value.converter.bearer.auth.token":"tok"`,
			`connector "c": value.converter.schema.registry.url: http://r:8081 is plain http: the bearer token (value.converter.bearer.auth.*) goes in clear`},
		{"registry basic auth over https", "", `,"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"svc:pw"`, ""},
		{"registry over http without credentials", "", `,"value.converter.schema.registry.url":"http://r:8081"`, ""},
		{"registry TLS without host check", "", `,"value.converter.schema.registry.ssl.endpoint.identification.algorithm":""`,
			`connector "c": value.converter.schema.registry.ssl.endpoint.identification.algorithm: empty: the registry's certificate is not checked against its host name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warns := connectorWith(t, workerOf(t, base+tc.worker), tc.extra)
			got := strings.Join(warnStrings(warns), "\n")
			if tc.want == "" && (strings.Contains(got, "in clear") || strings.Contains(got, "host name")) {
				t.Errorf("a secure setting drew a warning:\n%s", got)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("warnings lack %q:\n%s", tc.want, got)
			}
			if strings.Count(got, "in clear")+strings.Count(got, "host name") > 1 {
				t.Errorf("more than one line for one setting:\n%s", got)
			}
		})
	}
}
