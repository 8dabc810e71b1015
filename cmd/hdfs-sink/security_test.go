package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

const scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="sink" password="hunter2";`

// TestCheckRefusesSecuritySettings: a security setting that cannot be
// honoured is a check error naming it where the file has it, never a
// warning and never a plaintext connection; secrets stay hidden.
func TestCheckRefusesSecuritySettings(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"GSSAPI by default", map[string]string{"consumer.override.security.protocol": "SASL_SSL", "consumer.override.sasl.jaas.config": scramJAAS},
			`consumer.override.sasl.jaas.config = "[hidden]": sasl.mechanism GSSAPI needs the login module com.sun.security.auth.module.Krb5LoginModule`},
		{"worker-level consumer key", map[string]string{"consumer.security.protocol": "SSL", "consumer.ssl.truststore.location": "/nonexistent.jks", "consumer.ssl.truststore.password": "hunter2"},
			`consumer.ssl.truststore.location = "/nonexistent.jks": cannot read the trust store`},
		{"bad protocol", map[string]string{"consumer.override.security.protocol": "SASL_PLAIN"},
			`consumer.override.security.protocol = "SASL_PLAIN": must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL`},
		{"truststore without TLS", map[string]string{"consumer.override.ssl.truststore.location": "/ts.jks"},
			`consumer.override.ssl.truststore.location = "/ts.jks": is set, but security.protocol=PLAINTEXT (the default) does not use it`},
		{"registry store", map[string]string{"value.converter.schema.registry.url": "https://sr:8443",
			"value.converter.schema.registry.ssl.truststore.type": "JCEKS", "value.converter.schema.registry.ssl.truststore.location": "/x"},
			`value.converter.schema.registry.ssl.truststore.type = "JCEKS": must be JKS, PKCS12 or PEM`},
		{"DLQ producer with other credentials", map[string]string{"consumer.override.security.protocol": "SASL_SSL",
			"producer.override.security.protocol": "SSL"},
			`producer.override.security.protocol: differs from the consumer's security.protocol: the dead-letter producer shares the consumer's client`},
		{"SASL_INHERIT without SASL", map[string]string{"value.converter.basic.auth.credentials.source": "SASL_INHERIT"},
			`value.converter.basic.auth.credentials.source = "SASL_INHERIT": needs a PLAIN or SCRAM sasl.jaas.config`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := conftest.Connector(t, dir, "sec", tt.extra)
			var out, errOut bytes.Buffer
			code := dispatch([]string{"check", "--config", c.Source}, &out, &errOut)
			if code != 1 || !strings.Contains(errOut.String(), `connector "sec" (`+c.Source+`): `+tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant: %s", code, errOut.String(), tt.want)
			}
			if strings.Contains(errOut.String(), "hunter2") || strings.Contains(errOut.String(), "warning") {
				t.Errorf("stderr shows a secret or a warning:\n%s", errOut.String())
			}
		})
	}
}
