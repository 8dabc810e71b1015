package kafkaclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// broker is a kfake cluster over TLS: mutual TLS when mtls, else with
// SASL users alice (SCRAM-SHA-512) and bob (PLAIN).
func broker(t *testing.T, cert *testpki.Leaf, mtls bool) string {
	t.Helper()
	cfg := &tls.Config{Certificates: []tls.Certificate{cert.TLS()}}
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.TLS(cfg), kfake.SeedTopics(1, "t")}
	if mtls {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, cert.CA.Pool()
	} else {
		opts = append(opts, kfake.EnableSASL(),
			kfake.Superuser("SCRAM-SHA-512", "alice", "alice-secret"), kfake.Superuser("PLAIN", "bob", "bob-secret"))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// TestAgainstTLSAndSASL: with kfake's TLS and SASL, the right settings
// produce and consume, and each wrong one (kfake drops the connection on a
// wrong password where Kafka answers SASL_AUTHENTICATION_FAILED, so that
// case is TestBrokerRefusals' and the real-service tests') is an *AuthError naming the
// broker and the reason, within seconds (never an endless retry).
func TestAgainstTLSAndSASL(t *testing.T) {
	ca := testpki.NewCA(t, "ca")
	dir := t.TempDir()
	good := ca.Issue(t, testpki.LeafOpts{Name: "broker", IPs: []string{"127.0.0.1"}})
	expired := ca.Issue(t, testpki.LeafOpts{Name: "broker", IPs: []string{"127.0.0.1"}, Expired: true})
	client := ca.Issue(t, testpki.LeafOpts{Name: "sink", Client: true})
	jks := testpki.Write(t, dir, "ts.jks", ca.TrustJKS(t, "trustpw"))
	otherCA := testpki.Write(t, dir, "other.pem", testpki.CertPEM(testpki.NewCA(t, "other").Cert))
	keyPEM := testpki.Write(t, dir, "client.pem", append(client.KeyPEM(t, ""), testpki.CertPEM(client.Cert, ca.Cert)...))
	addr, mtlsAddr, oldAddr := broker(t, good, false), broker(t, good, true), broker(t, expired, false)
	_, port, _ := net.SplitHostPort(addr)

	scram := func(user, pass string) Props {
		return Props{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
			"ssl.truststore.location": jks, "ssl.truststore.password": "trustpw",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="` + user + `" password="` + pass + `";`}
	}
	mtls := Props{"security.protocol": "SSL", "ssl.truststore.location": jks, "ssl.truststore.password": "trustpw",
		"ssl.keystore.type": "PEM", "ssl.keystore.location": keyPEM}
	plainBob := scram("bob", "bob-secret")
	plainBob["sasl.mechanism"] = "PLAIN"
	plainBob["sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="bob-secret";`
	tests := []struct {
		name  string
		addr  string
		props Props
		want  string // "" = works
	}{
		{"SCRAM over TLS with JKS", addr, scram("alice", "alice-secret"), ""},
		{"PLAIN over TLS", addr, plainBob, ""},
		{"mutual TLS with PEM", mtlsAddr, mtls, ""},
		{"untrusted CA", addr, with(scram("alice", "alice-secret"), "ssl.truststore.type", "PEM", "ssl.truststore.location", otherCA, "ssl.truststore.password", ""),
			"Kafka at " + addr + ": TLS: the server's certificate is not signed by a trusted CA"},
		{"host name mismatch", "localhost:" + port, scram("alice", "alice-secret"), "Kafka at localhost:" + port + ": TLS: host name mismatch"},
		{"expired certificate", oldAddr, scram("alice", "alice-secret"), "has expired"},
		{"no client certificate", mtlsAddr, with(mtls, "ssl.keystore.location", "", "ssl.keystore.type", ""), "Kafka at " + mtlsAddr + ": TLS: the server refused the TLS handshake"},
		// Go's TLS server (kfake) hangs up; Java's answers with an alert,
		// which TestPlaintextToJavaTLSListener covers.
		{"plaintext to a TLS listener", addr, Props{}, "closes every connection at once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.props, tlsprops.Prefix("consumer."))
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			s.Opts(slog.New(slog.NewTextHandler(&logs, nil)))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			err = s.WaitReady(ctx, []string{tt.addr})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("WaitReady: %v", err)
				}
				roundTrip(t, s, tt.addr)
				return
			}
			var ae *AuthError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("WaitReady: %v (%T)\nwant an *AuthError containing %q", err, err, tt.want)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %v to give up", took)
			}
			for _, secret := range []string{"alice-secret", "trustpw", "wrong-secret"} {
				if strings.Contains(err.Error()+logs.String(), secret) {
					t.Errorf("a secret reached the error or the log")
				}
			}
		})
	}
}

func with(p Props, kv ...string) Props {
	out := Props{}
	for k, v := range p {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// roundTrip produces and consumes one record with s's security.
func roundTrip(t *testing.T, s *Security, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(append(s.Opts(slog.New(slog.DiscardHandler)), kgo.SeedBrokers(addr),
		kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if recs := cl.PollFetches(ctx).Records(); len(recs) == 0 {
		t.Fatalf("consumed nothing")
	}
}

// TestWaitReadyWaitsOutOutages: a broker that is not there is waited for
// (with a warning per attempt), never taken for a refusal.
func TestWaitReadyWaitsOutOutages(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	s, _ := Parse(Props{}, tlsprops.Prefix(""))
	var logs bytes.Buffer
	s.Opts(slog.New(slog.NewTextHandler(&logs, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	err = s.WaitReady(ctx, []string{addr})
	var ae *AuthError
	if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "never became reachable") {
		t.Fatalf("WaitReady: %v", err)
	}
	if !strings.Contains(logs.String(), "Kafka not reachable; retrying") {
		t.Fatalf("no retry warning in the log:\n%s", logs.String())
	}
}

// TestBrokerRefusals: the error codes with which a broker refuses the
// credentials or access are *AuthErrors naming the broker last dialled.
func TestBrokerRefusals(t *testing.T) {
	s, err := Parse(Props{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": scramJAAS}, tlsprops.Prefix(""))
	if err != nil {
		t.Fatal(err)
	}
	s.last.Store("10.0.0.1:9096")
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("Authentication failed due to invalid credentials: %w", kerr.SaslAuthenticationFailed),
			"Kafka at 10.0.0.1:9096: authentication failed (SASL_SSL SCRAM-SHA-512): Authentication failed due to invalid credentials"},
		{kerr.UnsupportedSaslMechanism, "the listener does not offer sasl.mechanism SCRAM-SHA-512"},
		{kerr.GroupAuthorizationFailed, "not authorized: GROUP_AUTHORIZATION_FAILED"},
		{kerr.TopicAuthorizationFailed, "not authorized: TOPIC_AUTHORIZATION_FAILED"},
	}
	for _, tt := range tests {
		if ae := s.Fatal(fmt.Errorf("%w", tt.err)); ae == nil || !strings.Contains(ae.Error(), tt.want) {
			t.Errorf("Fatal(%v) = %v, want %q", tt.err, ae, tt.want)
		}
	}
	for _, passing := range []error{io.EOF, kerr.NotCoordinator, kerr.RequestTimedOut, context.DeadlineExceeded} {
		if ae := s.Fatal(passing); ae != nil {
			t.Errorf("Fatal(%v) = %v, want nil (worth a retry)", passing, ae)
		}
	}
}

// TestPlaintextToJavaTLSListener: a Java TLS listener answers a plaintext
// request with a TLS alert record, which is a refusal, not an outage.
func TestPlaintextToJavaTLSListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Read(make([]byte, 512))
			c.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50}) // alert: fatal, internal_error
			c.Close()
		}
	}()
	s, _ := Parse(Props{}, nil)
	s.Opts(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = s.WaitReady(ctx, []string{ln.Addr().String()})
	want := "Kafka at " + ln.Addr().String() + ": the listener speaks TLS, but security.protocol=PLAINTEXT does not"
	if ae := s.Fatal(err); ae == nil || !strings.Contains(ae.Error(), want) {
		t.Fatalf("WaitReady: %v\nwant %q", err, want)
	}
}
