//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

// The secured listeners of testenv/secure.sh, as connector files name them.
// Data is produced and checked over the plaintext listener; only the
// daemon goes through the secured ones.

// scram is the consumer side of SASL_SSL with SCRAM-SHA-512 and a JKS trust
// store, as a Connect user writes it.
func scram(user, password string) map[string]string {
	return map[string]string{
		"consumer.override.bootstrap.servers":       itest.KafkaSASLSSLAddr,
		"consumer.override.security.protocol":       "SASL_SSL",
		"consumer.override.sasl.mechanism":          "SCRAM-SHA-512",
		"consumer.override.sasl.jaas.config":        itest.SCRAMJAAS(user, password),
		"consumer.override.ssl.truststore.location": itest.PKI("truststore.jks"),
		"consumer.override.ssl.truststore.password": itest.StorePassword,
	}
}

// mtlsPEM is SSL with a client certificate, all in PEM files, the key
// encrypted.
func mtlsPEM() map[string]string {
	return map[string]string{
		"consumer.override.bootstrap.servers":       itest.KafkaMTLSAddr,
		"consumer.override.security.protocol":       "SSL",
		"consumer.override.ssl.truststore.type":     "PEM",
		"consumer.override.ssl.truststore.location": itest.PKI("ca.pem"),
		"consumer.override.ssl.keystore.type":       "PEM",
		"consumer.override.ssl.keystore.location":   itest.PKI("client-keystore-enc.pem"),
		"consumer.override.ssl.key.password":        itest.KeyPassword,
	}
}

func oauthBearer(secret string) map[string]string {
	return map[string]string{
		"consumer.override.bootstrap.servers":                   itest.KafkaSASLSSLAddr,
		"consumer.override.security.protocol":                   "SASL_SSL",
		"consumer.override.sasl.mechanism":                      "OAUTHBEARER",
		"consumer.override.sasl.oauthbearer.token.endpoint.url": itest.OAuthURL() + "/token",
		"consumer.override.sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
		"consumer.override.sasl.jaas.config": fmt.Sprintf(`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="%s" clientSecret="%s" scope="kafka";`,
			itest.OAuthClient, secret),
		"consumer.override.ssl.truststore.type":     "PKCS12",
		"consumer.override.ssl.truststore.location": itest.PKI("truststore.p12"),
		"consumer.override.ssl.truststore.password": itest.StorePassword,
	}
}

// registryTLS reaches the registry through the TLS proxy with basic auth.
func registryTLS(user, password, truststore string) map[string]string {
	return map[string]string{
		"value.converter.schema.registry.url":                     itest.RegistryTLSURL,
		"value.converter.schema.registry.ssl.truststore.location": truststore,
		"value.converter.schema.registry.ssl.truststore.password": itest.StorePassword,
		"value.converter.basic.auth.credentials.source":           "USER_INFO",
		"value.converter.basic.auth.user.info":                    user + ":" + password,
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// secureRun produces n records, runs the daemon with extra settings until
// all are committed, stops it and reads every committed file back.
func secureRun(t *testing.T, name string, extra map[string]string, n int) (*setup, *daemon) {
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	s.produce(counts, n/2)
	d := s.start(s.connector(name, extra))
	s.produce(counts, n-n/2)
	s.waitCommitted(total(counts), 2*time.Minute)
	d.stop()
	rep := s.check(counts)
	t.Logf("%d records in %d files, every offset once", rep.Records, len(rep.Files))
	return s, d
}

// TestSecureSCRAMWithJKS: exactly once over SASL_SSL with SCRAM-SHA-512
// and a JKS trust store, and over SASL_PLAINTEXT with PLAIN.
func TestSecureSCRAMWithJKS(t *testing.T) {
	t.Parallel()
	t.Run("SASL_SSL SCRAM-SHA-512 JKS", func(t *testing.T) {
		secureRun(t, "scram", scram(itest.SASLUser, itest.SASLPassword), 3000)
	})
	t.Run("SASL_PLAINTEXT PLAIN", func(t *testing.T) {
		secureRun(t, "plain", map[string]string{
			"consumer.override.bootstrap.servers": itest.KafkaSASLPlaintextAddr,
			"consumer.override.security.protocol": "SASL_PLAINTEXT",
			"consumer.override.sasl.mechanism":    "PLAIN",
			"consumer.override.sasl.jaas.config": fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s";`,
				itest.SASLUser, itest.SASLPassword),
		}, 1000)
	})
}

// TestSecureMTLSWithPEM: exactly once over mutual TLS with PEM files (an
// encrypted PKCS#8 key).
func TestSecureMTLSWithPEM(t *testing.T) {
	t.Parallel()
	secureRun(t, "mtls", mtlsPEM(), 3000)
}

// TestSecureOAuthBearer: exactly once over SASL_SSL with OAUTHBEARER; the
// broker validates the tokens with Kafka's OIDC validator against the test
// token server, re-authenticates connections every 10 s, and the run
// outlasts a token (20 s): the daemon obtains new ones before expiry and
// nothing fails.
func TestSecureOAuthBearer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	before, err := itest.OAuthIssued(ctx, itest.OAuthClient)
	if err != nil {
		t.Fatalf("OAuth token server at %s: %v", itest.OAuthURL(), err)
	}
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	d := s.start(s.connector("oauth", oauthBearer(itest.OAuthSecret)))
	for range 8 { // 8 waves over ~40 s
		s.produce(counts, 250)
		time.Sleep(5 * time.Second)
	}
	s.waitCommitted(total(counts), 2*time.Minute)
	d.stop()
	s.check(counts)
	after, _ := itest.OAuthIssued(ctx, itest.OAuthClient)
	// The probe, the client's first token, and at least one renewal.
	if after-before < 3 {
		t.Fatalf("token server issued %d tokens during a 40 s run with 20 s tokens, want at least 3 (renewal)", after-before)
	}
	t.Logf("%d tokens issued during the run; the daemon logged %d", after-before, strings.Count(readFile(d.log), "OAuth token obtained"))
	if d.logContains("authentication failed") || strings.Count(readFile(d.log), "OAuth token obtained") < 2 {
		t.Fatalf("want renewals and no authentication failure in the log:\n%s", tail(d.log, 30))
	}
}

func readFile(p string) string { b, _ := os.ReadFile(p); return string(b) }

// TestSecureRegistry: exactly once with the registry behind TLS and basic
// auth (a PKCS12 trust store), and behind mutual TLS (a JKS key store),
// over SASL_SSL.
func TestSecureRegistry(t *testing.T) {
	t.Parallel()
	t.Run("TLS and basic auth", func(t *testing.T) {
		secureRun(t, "reg-basic", merge(scram(itest.SASLUser, itest.SASLPassword),
			registryTLS(itest.SASLUser, itest.SASLPassword, itest.PKI("truststore.p12"))), 2000)
	})
	t.Run("mutual TLS", func(t *testing.T) {
		secureRun(t, "reg-mtls", merge(scram(itest.SASLUser, itest.SASLPassword), map[string]string{
			"value.converter.schema.registry.url":                     itest.RegistryMTLSURL,
			"value.converter.schema.registry.ssl.truststore.type":     "PEM",
			"value.converter.schema.registry.ssl.truststore.location": itest.PKI("ca.pem"),
			"value.converter.schema.registry.ssl.keystore.location":   itest.PKI("client.jks"),
			"value.converter.schema.registry.ssl.keystore.password":   itest.StorePassword,
		}), 1000)
	})
}

// TestSecureDeadLetter: bad records reach the dead-letter topic through the
// SASL_SSL listener (the consumer's client produces them); the registry is
// reached with SASL_INHERIT (the consumer's SCRAM user); good records are
// committed exactly once.
func TestSecureDeadLetter(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	dlq := s.dlqTopic()
	counts := map[int32]int64{}
	s.produce(counts, 500)
	s.produceRaw(0, []byte("not avro at all"))
	s.produceRaw(0, append([]byte{0, 0, 0, 0x7f, 0x7f}, 1, 2, 3)) // unknown schema id
	reg := registryTLS("", "", itest.PKI("truststore.jks"))
	delete(reg, "value.converter.basic.auth.user.info")
	reg["value.converter.basic.auth.credentials.source"] = "SASL_INHERIT"
	d := s.start(s.connector("dlq", merge(scram(itest.SASLUser, itest.SASLPassword), reg, map[string]string{
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq, "rotate.interval.ms": "1000",
		"errors.deadletterqueue.context.headers.enable": "true", // Connect's default is false
	})))
	s.waitCommitted(500, time.Minute)
	recs := s.consume(dlq, 2)
	for i, r := range recs {
		h := map[string]string{}
		for _, kv := range r.Headers {
			h[kv.Key] = string(kv.Value)
		}
		if h["__connect.errors.topic"] != s.topic || h["__connect.errors.offset"] != fmt.Sprint(500+i) {
			t.Fatalf("DLQ record %d headers %v", i, h)
		}
	}
	d.stop()
	s.check(counts)
}

// TestSecureCrashRestart: SIGKILL at a state of the commit protocol while
// consuming over SASL_SSL, then a restart: every offset once.
func TestSecureCrashRestart(t *testing.T) {
	t.Parallel()
	for _, st := range []sink.State{sink.TempFileClosed, sink.WALAppended} {
		t.Run(st.String(), func(t *testing.T) {
			s := newSetup(t, 2)
			counts := map[int32]int64{}
			s.produce(counts, 1500)
			cfg := s.connector("crash-secure", scram(itest.SASLUser, itest.SASLPassword))
			d := s.start(cfg, fmt.Sprintf("HDFS_SINK_CRASH_AT=%s:2", st))
			err, exited := d.wait(2 * time.Minute)
			if !exited || !killedBySIGKILL(err) {
				t.Fatalf("daemon did not die at %s#2 (exited=%v err=%v)", st, exited, err)
			}
			s.produce(counts, 500)
			d2 := s.start(cfg)
			s.waitCommitted(total(counts), 2*time.Minute)
			d2.stop()
			s.check(counts)
		})
	}
}

// connectorDir writes connector files into one directory, for a daemon
// that runs several connectors.
func (s *setup) connectorDir(files ...string) string {
	s.t.Helper()
	dir := s.t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o600); err != nil {
			s.t.Fatal(err)
		}
	}
	return dir
}

// connectorStatus polls the daemon's /status until connector name is in
// state want, or within passes; it returns the last status seen.
func (d *daemon) connectorStatus(name, want string, within time.Duration) (map[string]any, bool) {
	deadline := time.Now().Add(within)
	var last map[string]any
	for time.Now().Before(deadline) {
		if d.logContains("url=http") {
			for _, c := range d.status()["connectors"].([]any) {
				if m := c.(map[string]any); m["name"] == name {
					last = m
				}
			}
			if last != nil && last["state"] == want {
				return last, true
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return last, false
}

// TestSecureFailures: each refusal stops its connector within 30 s with an
// error naming the service, the address and the reason, in /status and the
// log, without a secret; a companion connector on the plaintext listener
// goes on, so the daemon keeps serving /status. An unreachable broker is
// not a refusal: the connector keeps waiting.
func TestSecureFailures(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	s.produce(counts, 5) // the registry cases need a record to decode
	good := scram(itest.SASLUser, itest.SASLPassword)
	regURL := strings.TrimSuffix(itest.RegistryTLSURL, "/")
	tests := []struct {
		name  string
		extra map[string]string
		want  []string // all in the connector's /status error
	}{
		{"wrong password", scram(itest.SASLUser, "not-the-password"),
			[]string{"Kafka at " + itest.KafkaSASLSSLAddr + ": authentication failed (SASL_SSL SCRAM-SHA-512)"}},
		{"unknown user", scram("mallory", "not-the-password"),
			[]string{"Kafka at " + itest.KafkaSASLSSLAddr + ": authentication failed"}},
		{"untrusted CA", merge(good, map[string]string{"consumer.override.bootstrap.servers": itest.KafkaSSLAddr,
			"consumer.override.security.protocol": "SSL", "consumer.override.ssl.truststore.type": "PEM",
			"consumer.override.ssl.truststore.location": itest.PKI("other-ca.pem"), "consumer.override.ssl.truststore.password": "",
			"consumer.override.sasl.mechanism": "", "consumer.override.sasl.jaas.config": ""}),
			[]string{"Kafka at " + itest.KafkaSSLAddr + ": TLS: the server's certificate is not signed by a trusted CA"}},
		{"host name mismatch", merge(good, map[string]string{"consumer.override.bootstrap.servers": itest.KafkaBadHostAddr,
			"consumer.override.security.protocol": "SSL", "consumer.override.sasl.mechanism": "", "consumer.override.sasl.jaas.config": ""}),
			[]string{"Kafka at " + itest.KafkaBadHostAddr + ": TLS: host name mismatch"}},
		{"expired certificate", merge(good, map[string]string{"consumer.override.bootstrap.servers": itest.KafkaExpiredAddr,
			"consumer.override.security.protocol": "SSL", "consumer.override.sasl.mechanism": "", "consumer.override.sasl.jaas.config": ""}),
			[]string{"Kafka at " + itest.KafkaExpiredAddr + ": TLS: the server's certificate", "has expired"}},
		{"no client certificate", merge(mtlsPEM(), map[string]string{"consumer.override.ssl.keystore.location": "",
			"consumer.override.ssl.keystore.type": "", "consumer.override.ssl.key.password": ""}),
			[]string{"Kafka at " + itest.KafkaMTLSAddr + ": TLS: the server refused the TLS handshake"}},
		{"plaintext to a TLS listener", map[string]string{"consumer.override.bootstrap.servers": itest.KafkaSSLAddr},
			[]string{"Kafka at " + itest.KafkaSSLAddr + ": the listener speaks TLS, but security.protocol=PLAINTEXT does not"}},
		{"OAuth client secret", oauthBearer("not-the-secret"),
			[]string{"OAuth token endpoint at " + itest.OAuthURL() + "/token: the client credentials were refused: HTTP 401"}},
		{"registry password", merge(good, registryTLS(itest.SASLUser, "not-the-password", itest.PKI("truststore.jks"))),
			[]string{"schema: registry " + regURL, "refused: HTTP 401"}},
		{"registry untrusted CA", merge(good, registryTLS(itest.SASLUser, itest.SASLPassword, itest.PKI("truststore.jks")),
			map[string]string{"value.converter.schema.registry.ssl.truststore.type": "PEM",
				"value.converter.schema.registry.ssl.truststore.location": itest.PKI("other-ca.pem"),
				"value.converter.schema.registry.ssl.truststore.password": ""}),
			[]string{"schema: registry " + regURL, "TLS: the server's certificate is not signed by a trusted CA"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("refused%d", i)
			// Directories of its own: a WAL names the connector that wrote it,
			// and the registry cases claim the partition before they fail.
			failing := s.connector(name, merge(tt.extra, map[string]string{"topics.dir": name + "/topics", "logs.dir": name + "/logs"}))
			companion := s.connector(name+"-companion", map[string]string{"topics.dir": name + "-companion/topics", "logs.dir": name + "-companion/logs"})
			start := time.Now()
			d := s.start(s.connectorDir(failing, companion))
			st, failed := d.connectorStatus(name, "failed", 30*time.Second)
			if !failed {
				t.Fatalf("connector not failed within 30 s; status %v\n%s", st, tail(d.log, 30))
			}
			errText, _ := st["error"].(string)
			for _, w := range tt.want {
				if !strings.Contains(errText, w) {
					t.Errorf("status error %q\nlacks %q", errText, w)
				}
			}
			if !d.logContains("connector FAILED") || !d.logContains(tt.want[0]) {
				t.Errorf("the log does not show the failure:\n%s", tail(d.log, 20))
			}
			if comp, _ := d.connectorStatus(name+"-companion", "running", 5*time.Second); comp["state"] != "running" {
				t.Errorf("companion connector: %v", comp)
			}
			for _, secret := range []string{"not-the-password", "not-the-secret", itest.SASLPassword, itest.StorePassword, itest.KeyPassword, itest.OAuthSecret} {
				if d.logContains(secret) || strings.Contains(fmt.Sprint(st), secret) {
					t.Errorf("a secret (%s) reached the log or /status", secret)
				}
			}
			t.Logf("failed after %v: %s", time.Since(start).Round(100*time.Millisecond), errText)
			d.stop()
		})
	}
	t.Run("unreachable broker is waited for", func(t *testing.T) {
		d := s.start(s.connector("unreachable", merge(good, map[string]string{"consumer.override.bootstrap.servers": "127.0.0.1:9199"})))
		time.Sleep(12 * time.Second)
		st, _ := d.connectorStatus("unreachable", "starting", 5*time.Second)
		if st["state"] != "starting" || !d.logContains("Kafka not reachable; retrying") {
			t.Fatalf("status %v; want still starting and retrying\n%s", st, tail(d.log, 20))
		}
		d.stop()
	})
}
