package daemon

import (
	"context"
	"crypto/tls"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/internal/testpki"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

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
	c := conftest.Connector(t, dir, "tls", map[string]string{"bootstrap.servers": cluster.ListenAddrs()[0],
		"consumer.override.security.protocol": "SSL", "consumer.override.ssl.truststore.type": "PEM", "consumer.override.ssl.truststore.location": other})
	// --restart-max-attempts 0: the failure ends the run
	d := newDaemon(Options{Logger: slog.New(slog.DiscardHandler), Restart: RestartPolicy{Initial: time.Second, Attempts: 0}}, nil, wiring.ProcessMemory{})
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
