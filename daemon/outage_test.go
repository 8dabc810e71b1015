package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// closedPort is a port of 127.0.0.1 nothing listens on: connections to it
// are refused until something does.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// exposition is the daemon's whole /metrics text.
func exposition(d *Daemon) string {
	rec := httptest.NewRecorder()
	d.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// TestKafkaDownFromStartIsVisible: a connector whose Kafka refuses every
// connection from the start never runs, and yet, from the first attempt,
// dependency_up{dependency="kafka"} is 0, its Kafka client counts the
// connection errors and /readyz names the refusal. Once Kafka listens the
// connector runs and dependency_up is 1.
func TestKafkaDownFromStartIsVisible(t *testing.T) {
	f := newDaemonFixture(t, "early")
	port := closedPort(t)
	f.brokers = []string{fmt.Sprintf("127.0.0.1:%d", port)}
	f.run([]*configs.Connector{f.connector("early")})
	up := `hdfs_sink_dependency_up{connector="early",dependency="kafka"}`
	f.waitFor("dependency_up 0 for Kafka", func() bool { return scrape(t, f.d, up) == 0 })
	if got := readyz(f.d); !strings.Contains(got, "connector early: kafka unreachable: ") || !strings.Contains(got, "connection refused") {
		t.Fatalf("/readyz during the outage = %q, want the Kafka refusal", got)
	}
	out := exposition(f.d)
	if !strings.Contains(out, `hdfs_sink_kafka_connect_errors_total{connector="early",`) {
		t.Fatalf("no Kafka client series during the outage:\n%s", out)
	}
	if v := scrape(t, f.d, `hdfs_sink_connector_state{connector="early",state="UNASSIGNED"}`); v != 1 {
		t.Fatalf("connector_state UNASSIGNED = %v during the outage, want 1", v)
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(1, "early"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	f.waitFor("dependency_up 1 and running once Kafka listens", func() bool {
		return scrape(t, f.d, up) == 1 && f.state("early") == "running"
	})
	f.stop()
	f.wait()
}

// TestShippedAlertsFireForAnOutageFromStart: the series the daemon exports
// while Kafka, or the store, is down from the start, held for 12 minutes,
// fire HdfsSinkDependencyDown of deploy/prometheus/hdfs-sink-rules.yml
// (promtool test rules), and HdfsSinkConnectorFailed does not: the
// connector is waiting, not failing.
func TestShippedAlertsFireForAnOutageFromStart(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is needed to test the alert rules (Debian package prometheus; make unit installs it): %v", err)
	}
	rules, err := filepath.Abs("../deploy/prometheus/hdfs-sink-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range []string{depKafka, depStore} {
		t.Run(dep, func(t *testing.T) {
			series := outageFromStart(t, dep)
			test := rulesTest(rules, series, "down", dep)
			path := filepath.Join(t.TempDir(), "outage.test.yml")
			if err := os.WriteFile(path, []byte(test), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(promtool, "test", "rules", path).CombinedOutput(); err != nil {
				t.Fatalf("promtool test rules: %v\n%s\ntest file:\n%s", err, out, test)
			}
		})
	}
}

// outageFromStart runs connector "down" with dep unreachable from the
// start and returns every hdfs_sink_ sample of /metrics once the daemon
// says so, as "name{labels} value" lines.
func outageFromStart(t *testing.T, dep string) []string {
	f := newDaemonFixture(t, "down")
	switch dep {
	case depKafka:
		f.brokers = []string{fmt.Sprintf("127.0.0.1:%d", closedPort(t))}
	case depStore:
		f.d.openStore = func(*configs.Connector) (storage.FS, error) {
			return nil, errors.New("connect to HDFS hdfs://nn:8020: connection refused")
		}
	}
	f.run([]*configs.Connector{f.connector("down")})
	up := fmt.Sprintf(`hdfs_sink_dependency_up{connector="down",dependency=%q}`, dep)
	f.waitFor(up+" 0", func() bool { return scrape(t, f.d, up) == 0 })
	var samples []string
	for line := range strings.Lines(exposition(f.d)) {
		if strings.HasPrefix(line, "hdfs_sink_") {
			samples = append(samples, strings.TrimSpace(line))
		}
	}
	f.stop()
	f.wait()
	return samples
}

// rulesTest is a promtool rule test that holds samples for 12 minutes and
// expects, at 6 minutes (the rule's 5 of "for" passed), connector's
// HdfsSinkDependencyDown for dep and no HdfsSinkConnectorFailed.
func rulesTest(rules string, samples []string, connector, dep string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rule_files:\n  - %q\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n", rules)
	for _, s := range samples {
		i := strings.LastIndexByte(s, ' ')
		fmt.Fprintf(&b, "      - series: %q\n        values: '%s+0x12'\n", s[:i], s[i+1:])
	}
	fmt.Fprintf(&b, `    alert_rule_test:
      - eval_time: 6m
        alertname: HdfsSinkDependencyDown
        exp_alerts:
          - exp_labels: {severity: critical, connector: %[1]s, dependency: %[2]s}
            exp_annotations:
              summary: "connector %[1]s cannot reach %[2]s"
              description: "/readyz says why. See docs/operations.md, 'Not ready'."
      - eval_time: 6m
        alertname: HdfsSinkConnectorFailed
        exp_alerts: []
`, connector, dep)
	return b.String()
}
