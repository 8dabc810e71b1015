package wiring

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
)

const scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="sink" password="hunter2";`

// TestCheckAcceptsSecuritySettings: keys at every level, stores read.
func TestCheckAcceptsSecuritySettings(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "ca")
	jks := testpki.Write(t, dir, "ts.jks", ca.TrustJKS(t, "trustpw"))
	pemCA := testpki.Write(t, dir, "ca.pem", testpki.CertPEM(ca.Cert))
	c := conftest.Connector(t, dir, "sec", map[string]string{
		"consumer.override.security.protocol": "SASL_SSL", "consumer.override.sasl.mechanism": "SCRAM-SHA-512", "consumer.override.sasl.jaas.config": scramJAAS,
		"consumer.override.ssl.truststore.location": jks, "consumer.override.ssl.truststore.password": "trustpw",
		"value.converter.schema.registry.url":                 "https://sr:8443",
		"value.converter.schema.registry.ssl.truststore.type": "PEM", "value.converter.schema.registry.ssl.truststore.location": pemCA,
		"value.converter.basic.auth.credentials.source": "SASL_INHERIT",
		"producer.override.security.protocol":           "SASL_SSL", // the same as the consumer's: fine
	})
	var out, errOut bytes.Buffer
	if !Check(Files{Config: c.Source}, &out, &errOut) || errOut.Len() != 0 {
		t.Fatalf("refused, stderr:\n%s", errOut.String())
	}
	cfg, err := registryConfig(c, slog.New(slog.DiscardHandler))
	if err != nil || cfg.Username != "sink" || cfg.Password != "hunter2" || cfg.TLS == nil {
		t.Fatalf("registry config: user %q, TLS %v, %v", cfg.Username, cfg.TLS != nil, err)
	}
}

// TestSecurityKeysAreNotIgnored: consumer overrides that are security keys
// are applied by kafkaclient, not logged as ignored.
func TestSecurityKeysAreNotIgnored(t *testing.T) {
	var logs bytes.Buffer
	kafkaOverrides(map[string]string{"security.protocol": "SSL", "ssl.truststore.location": "/x", "fetch.min.bytes": "1"},
		slog.New(slog.NewTextHandler(&logs, nil)))
	if strings.Contains(logs.String(), "security") || strings.Contains(logs.String(), "ssl.") || !strings.Contains(logs.String(), "fetch.min.bytes") {
		t.Fatalf("log:\n%s", logs.String())
	}
}
