package wiring

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
	"github.com/hdfs-sink/hdfs-sink/schema"
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

// TestRegistryOAuthRefusalIsFinal: a token endpoint that refuses the
// registry client's credentials is a refusal of the registry
// (schema.ErrRegistryRefused), which no retry fixes; an endpoint that is
// down is not.
func TestRegistryOAuthRefusalIsFinal(t *testing.T) {
	for _, tt := range []struct {
		status  int
		refused bool
	}{{401, true}, {503, false}} {
		idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tt.status) }))
		c := conftest.Connector(t, t.TempDir(), "oauth", map[string]string{
			"value.converter.bearer.auth.credentials.source":  "OAUTHBEARER",
			"value.converter.bearer.auth.issuer.endpoint.url": idp.URL + "/token",
			"value.converter.bearer.auth.client.id":           "sink", "value.converter.bearer.auth.client.secret": "cs",
		})
		cfg, err := registryConfig(c, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = cfg.BearerToken(ctx)
		cancel()
		idp.Close()
		if err == nil || errors.Is(err, schema.ErrRegistryRefused) != tt.refused {
			t.Errorf("HTTP %d: %v; want refused %v", tt.status, err, tt.refused)
		}
	}
}
