package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
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
			c := loadConnector(t, dir, "sec", tt.extra)
			var out, errOut bytes.Buffer
			code := run([]string{"check", "--config", c.Source}, &out, &errOut)
			if code != 1 || !strings.Contains(errOut.String(), `connector "sec" (`+c.Source+`): `+tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant: %s", code, errOut.String(), tt.want)
			}
			if strings.Contains(errOut.String(), "hunter2") || strings.Contains(errOut.String(), "warning") {
				t.Errorf("stderr shows a secret or a warning:\n%s", errOut.String())
			}
		})
	}
}

// TestCheckAcceptsSecuritySettings: keys at every level, stores read.
func TestCheckAcceptsSecuritySettings(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "ca")
	jks := testpki.Write(t, dir, "ts.jks", ca.TrustJKS(t, "trustpw"))
	pemCA := testpki.Write(t, dir, "ca.pem", testpki.CertPEM(ca.Cert))
	c := loadConnector(t, dir, "sec", map[string]string{
		"consumer.override.security.protocol": "SASL_SSL", "consumer.override.sasl.mechanism": "SCRAM-SHA-512", "consumer.override.sasl.jaas.config": scramJAAS,
		"consumer.override.ssl.truststore.location": jks, "consumer.override.ssl.truststore.password": "trustpw",
		"value.converter.schema.registry.url":                 "https://sr:8443",
		"value.converter.schema.registry.ssl.truststore.type": "PEM", "value.converter.schema.registry.ssl.truststore.location": pemCA,
		"value.converter.basic.auth.credentials.source": "SASL_INHERIT",
		"producer.override.security.protocol":           "SASL_SSL", // the same as the consumer's: fine
	})
	var out, errOut bytes.Buffer
	if code := run([]string{"check", "--config", c.Source}, &out, &errOut); code != 0 || errOut.Len() != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut.String())
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

// TestDaemonStopsConnectorOnTLSRefusal: a broker whose certificate the
// connector does not trust fails the connector within seconds, with the
// broker's address and the reason in its status; the daemon exits 1.
func TestDaemonStopsConnectorOnTLSRefusal(t *testing.T) {
	ca := testpki.NewCA(t, "ca")
	leaf := ca.Issue(t, testpki.LeafOpts{Name: "broker", IPs: []string{"127.0.0.1"}})
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(&tls.Config{Certificates: []tls.Certificate{leaf.TLS()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	dir := t.TempDir()
	other := testpki.Write(t, dir, "other.pem", testpki.CertPEM(testpki.NewCA(t, "other").Cert))
	c := loadConnector(t, dir, "tls", map[string]string{"bootstrap.servers": cluster.ListenAddrs()[0],
		"consumer.override.security.protocol": "SSL", "consumer.override.ssl.truststore.type": "PEM", "consumer.override.ssl.truststore.location": other})
	d := newDaemon(nil, processMemory{}, newStatusBoard(), slog.New(slog.DiscardHandler))
	d.restart.attempts = 0 // --restart-max-attempts 0: the failure ends the run
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	if code := d.runConnectors(ctx, []*configs.Connector{c}); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	st := d.board.snapshot()[0]
	want := `connector "tls": Kafka at ` + cluster.ListenAddrs()[0] + `: TLS: the server's certificate is not signed by a trusted CA`
	if st.State != "failed" || !strings.Contains(st.Error, want) {
		t.Fatalf("status %+v\nwant failed with %q", st, want)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %v", took)
	}
}
