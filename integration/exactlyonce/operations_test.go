//go:build integration

package exactlyonce

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
)

// ops are the run flags of these tests: quick health checks and restarts.
var ops = []string{"--health-interval", "1s", "--restart-backoff", "500ms", "--restart-backoff-max", "2s", "--watch-interval", "0"}

var restURL = regexp.MustCompile(`url=(http://\S+)/status`)

// api is the daemon's REST base URL, from its log (waited for: the daemon
// may still be loading its files).
func (d *daemon) api() string {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(d.log)
		if m := restURL.FindSubmatch(b); m != nil {
			return string(m[1])
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("no REST endpoint in the daemon log")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// call sends a request to the daemon's API and decodes the answer into out
// (nil: ignored); it returns the status code.
func (d *daemon) call(method, path string, out any) int {
	d.t.Helper()
	req, err := http.NewRequest(method, d.api()+path, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			d.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// connectStatus is what these tests read of GET /connectors/<n>/status.
type connectStatus struct {
	Connector struct {
		State string `json:"state"`
		Trace string `json:"trace"`
	} `json:"connector"`
	Restarts   int `json:"restarts"`
	Partitions []struct {
		Partition       int32  `json:"partition"`
		State           string `json:"state"`
		CommittedOffset int64  `json:"committed_offset"`
		Lag             int64  `json:"lag"`
	} `json:"partitions"`
}

func (d *daemon) connStatus(name string) connectStatus {
	var st connectStatus
	d.call("GET", "/connectors/"+name+"/status", &st)
	return st
}

func (st connectStatus) lag() int64 {
	var n int64
	for _, p := range st.Partitions {
		n += max(p.Lag, 0)
	}
	return n
}

func until(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s never happened", within, what)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func (s *setup) committedNow() int64 {
	n, _ := verify.CountByNames(context.Background(), s.fs, s.topicsDir(), s.topic)
	return n
}

// prometheus is a Prometheus server from Debian's package scraping target.
type prometheus struct {
	t   *testing.T
	url string
}

func startPrometheus(t *testing.T, target string) *prometheus {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is not installed (testenv/testenv.sh up installs Debian's package)")
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: hdfs-sink\n    static_configs:\n      - targets: ['%s']\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	logf, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
	p := &prometheus{t: t, url: "http://" + addr}
	until(t, "Prometheus ready", time.Minute, func() bool {
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	return p
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// query asks Prometheus's HTTP API for an instant vector's one value; NaN
// style absence is -1.
func (p *prometheus) query(q string) float64 {
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || len(doc.Data.Result) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(fmt.Sprint(doc.Data.Result[0].Value[1]), 64)
	return v
}

func (p *prometheus) waitFor(q string, want float64) {
	p.t.Helper()
	until(p.t, fmt.Sprintf("Prometheus: %s == %v (last %v)", q, want, p.query(q)), 90*time.Second, func() bool { return p.query(q) == want })
}

// TestPrometheusScrapesPauseAndResume: Prometheus scrapes the daemon and
// sees the records written, the state gauge and lag; pausing through the
// REST API stops fetching and committing while lag grows (in Prometheus
// and in the status), resuming commits the rest exactly once. promtool
// accepts the exposition and the rule file.
func TestPrometheusScrapesPauseAndResume(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	s.produce(counts, 1000)
	d := s.startWith(s.connector("prom", map[string]string{"flush.size": "100", "rotate.interval.ms": "1000"}), ops)
	p := startPrometheus(t, strings.TrimPrefix(d.api(), "http://"))
	s.waitCommitted(1000, 2*time.Minute)
	p.waitFor(`sum(hdfs_sink_records_committed_total{connector="prom"})`, 1000)
	p.waitFor(`sum(hdfs_sink_partition_lag_records{connector="prom"})`, 0)
	p.waitFor(`count(hdfs_sink_partition_state{connector="prom",state="WRITE_STARTED"} == 1)`, 2)
	p.waitFor(`hdfs_sink_connector_state{connector="prom",state="RUNNING"}`, 1)

	if code := d.call("PUT", "/connectors/prom/pause", nil); code != 202 {
		t.Fatalf("pause: %d", code)
	}
	until(t, "PAUSED", 30*time.Second, func() bool { return d.connStatus("prom").Connector.State == "PAUSED" })
	s.produce(counts, 400)
	p.waitFor(`sum(hdfs_sink_partition_lag_records{connector="prom"})`, 400)
	p.waitFor(`hdfs_sink_connector_state{connector="prom",state="PAUSED"}`, 1)
	time.Sleep(3 * time.Second) // three rotation intervals
	if got := s.committedNow(); got != 1000 {
		t.Fatalf("%d records committed while paused, want 1000", got)
	}
	if lag := d.connStatus("prom").lag(); lag != 400 {
		t.Fatalf("status lag while paused: %d, want 400", lag)
	}
	if code := d.call("PUT", "/connectors/prom/resume", nil); code != 202 {
		t.Fatalf("resume: %d", code)
	}
	s.waitCommitted(1400, 2*time.Minute)
	p.waitFor(`sum(hdfs_sink_partition_lag_records{connector="prom"})`, 0)
	promtoolChecks(t, d)
	d.stop()
	s.check(counts)
}

// promtoolChecks runs promtool check metrics on the daemon's exposition
// and promtool check rules on the repository's rule file.
func promtoolChecks(t *testing.T, d *daemon) {
	resp, err := http.Get(d.api() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lint := exec.Command("promtool", "check", "metrics")
	lint.Stdin = bytes.NewReader(body)
	if out, err := lint.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	rules := filepath.Join(itest.RepoRoot(), "deploy", "prometheus", "hdfs-sink-rules.yml")
	if out, err := exec.Command("promtool", "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// TestRestartThroughAPIMidStream: the connector is restarted through the
// REST API three times while records are produced: every offset exactly
// once.
func TestRestartThroughAPIMidStream(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 3)
	counts := map[int32]int64{}
	d := s.startWith(s.connector("restarted", map[string]string{"flush.size": "150", "rotate.interval.ms": "1000"}), ops)
	for i := 0; i < 3; i++ {
		s.produce(counts, 900)
		time.Sleep(time.Duration(500+700*i) * time.Millisecond)
		if code := d.call("POST", "/connectors/restarted/restart", nil); code != 204 {
			t.Fatalf("restart: %d", code)
		}
	}
	s.produce(counts, 300)
	s.waitCommitted(total(counts), 2*time.Minute)
	d.stop()
	s.check(counts)
	if n := strings.Count(readLog(d), "connector restart requested through the REST API"); n != 3 {
		t.Fatalf("%d restarts logged, want 3", n)
	}
}

func readLog(d *daemon) string {
	b, _ := os.ReadFile(d.log)
	return string(b)
}

// TestFailingConnectorRestartedWhileOtherCommits: a connector stopped by a
// bad record (errors.tolerance=none) is restarted by the policy with a
// growing backoff, visible in its status and metrics, while the other
// connector of the daemon commits everything exactly once.
func TestFailingConnectorRestartedWhileOtherCommits(t *testing.T) {
	t.Parallel()
	good, bad := newSetup(t, 2), newSetup(t, 1)
	dir := t.TempDir()
	good.connectorIn(dir, "good", nil)
	bad.connectorIn(dir, "bad", nil)
	counts, badCounts := map[int32]int64{}, map[int32]int64{}
	bad.produce(badCounts, 10)
	bad.produceRaw(0, []byte("not avro"))
	d := good.startWith(dir, ops)
	until(t, "two restarts", time.Minute, func() bool { return d.connStatus("bad").Restarts >= 2 })
	for i := 0; i < 3; i++ {
		good.produce(counts, 500)
		time.Sleep(time.Second)
	}
	good.waitCommitted(total(counts), 2*time.Minute)
	// The bad connector cycles: FAILED with the reason during each backoff,
	// then RUNNING (no trace, as Connect shows a restarted connector) until
	// it meets the bad record again. A single sample may land in either.
	until(t, "the failing connector's status says why", time.Minute, func() bool {
		st := d.connStatus("bad")
		return st.Connector.State == "FAILED" && strings.Contains(st.Connector.Trace, "bad record")
	})
	if got := metricValue(t, d, `hdfs_sink_connector_restarts_total{connector="bad"}`); got < 2 {
		t.Fatalf("connector_restarts_total %v, want >= 2", got)
	}
	d.stop()
	good.check(counts)
}

// metricValue reads one sample from the daemon's /metrics.
func metricValue(t *testing.T, d *daemon, series string) float64 {
	resp, err := http.Get(d.api() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// TestPanicInOneConnector: HDFS_SINK_PANIC_AT makes one connector panic in
// a partition worker right after its first commit's renames. The panic is
// logged with its stack, that connector restarts, the other never stops,
// and both topics are on HDFS exactly once.
func TestPanicInOneConnector(t *testing.T) {
	t.Parallel()
	calm, panicky := newSetup(t, 2), newSetup(t, 2)
	dir := t.TempDir()
	calm.connectorIn(dir, "calm", nil)
	panicky.connectorIn(dir, "panicky", nil)
	counts, pcounts := map[int32]int64{}, map[int32]int64{}
	calm.produce(counts, 1000)
	panicky.produce(pcounts, 1000)
	d := calm.startWith(dir, ops, "HDFS_SINK_PANIC_AT=panicky/FILE_COMMITTED")
	calm.waitCommitted(1000, 2*time.Minute)
	panicky.waitCommitted(1000, 2*time.Minute)
	log := readLog(d)
	if !strings.Contains(log, "PANIC in connector") || !strings.Contains(log, "goroutine") || strings.Count(log, `msg="connector starting" connector=calm`) != 1 {
		t.Fatalf("the panic is not logged with its stack, or the calm connector restarted:\n%s", tail(d.log, 40))
	}
	if st := d.connStatus("panicky"); st.Restarts != 1 {
		t.Fatalf("panicky restarts %d, want 1", st.Restarts)
	}
	d.stop()
	calm.check(counts)
	panicky.check(pcounts)
}

// TestSIGHUPReload: with four connector files, one is added, one removed,
// one changed, then SIGHUP: the added one starts, the removed one commits
// what it held and leaves, the changed one restarts with its new file,
// the fourth is left alone; every topic is on HDFS exactly once.
func TestSIGHUPReload(t *testing.T) {
	t.Parallel()
	kept, removed, changed, added := newSetup(t, 1), newSetup(t, 1), newSetup(t, 1), newSetup(t, 1)
	dir := t.TempDir()
	slow := map[string]string{"flush.size": "100000", "rotate.interval.ms": "-1"} // commit only on release
	kept.connectorIn(dir, "kept", nil)
	removed.connectorIn(dir, "removed", slow)
	changed.connectorIn(dir, "changed", slow)
	c := map[*setup]map[int32]int64{kept: {}, removed: {}, changed: {}, added: {}}
	for _, s := range []*setup{kept, removed, changed} {
		s.produce(c[s], 300)
	}
	d := kept.startWith(dir, ops)
	kept.waitCommitted(300, 2*time.Minute)
	until(t, "removed and changed hold their records in open files", time.Minute, func() bool {
		return written(t, d, "removed", removed) == 300 && written(t, d, "changed", changed) == 300
	})
	added.connectorIn(dir, "added", nil)
	if err := os.Remove(filepath.Join(dir, "removed.json")); err != nil {
		t.Fatal(err)
	}
	removed.noVerify = true // its file is gone: hdfs-sink verify has no connector to load
	changed.connectorIn(dir, "changed", map[string]string{"flush.size": "100"})
	d.signal(syscall.SIGHUP)
	until(t, "the connectors after the reload", time.Minute, func() bool {
		var names []string
		d.call("GET", "/connectors", &names)
		return fmt.Sprint(names) == "[added changed kept]"
	})
	removed.waitCommitted(300, time.Minute) // committed on its way out
	added.produce(c[added], 300)
	changed.produce(c[changed], 100)
	for _, s := range []*setup{kept, changed, added} {
		s.waitCommitted(total(c[s]), 2*time.Minute)
	}
	if n := strings.Count(readLog(d), `msg="connector starting" connector=kept`); n != 1 {
		t.Fatalf("the unchanged connector started %d times, want 1", n)
	}
	d.stop()
	for s, counts := range c {
		s.check(counts)
	}
}

// written is records_written_total of partition 0 of s's topic.
func written(t *testing.T, d *daemon, name string, s *setup) float64 {
	return metricValue(t, d, fmt.Sprintf(`hdfs_sink_records_written_total{connector=%q,partition="0",topic=%q}`, name, s.topic))
}

// TestReadinessThroughOutages: /readyz and `hdfs-sink health` are 503 / 1
// with the reason while Kafka is stopped and while the NameNode is
// stopped, and 200 / 0 once each is back; the data is on HDFS exactly once.
func TestReadinessThroughOutages(t *testing.T) {
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	s.produce(counts, 200)
	d := s.startWith(s.connector("ready", nil), ops)
	addr := strings.TrimPrefix(d.api(), "http://")
	until(t, "ready", time.Minute, func() bool { ok, _ := health(t, addr); return ok })
	s.waitCommitted(200, 2*time.Minute)
	startOnCleanup(t, "kafka", "namenode")
	for _, svc := range []struct{ name, reason string }{{"kafka", "kafka unreachable"}, {"namenode", "store unreachable"}} {
		testenv(t, "stop", svc.name)
		until(t, "not ready naming "+svc.reason, 2*time.Minute, func() bool { ok, out := health(t, addr); return !ok && strings.Contains(out, svc.reason) })
		testenv(t, "start", svc.name)
		until(t, "ready again after "+svc.name, 3*time.Minute, func() bool { ok, _ := health(t, addr); return ok })
	}
	s.produce(counts, 200)
	s.waitCommitted(400, 3*time.Minute)
	d.stop()
	s.check(counts)
}

// health runs `hdfs-sink health` as a container probe would.
func health(t *testing.T, addr string) (bool, string) {
	out, err := exec.Command(binary(t), "health", "--addr", addr).CombinedOutput()
	return err == nil, string(out)
}

// TestKafkaDownFromStartIsVisible: Kafka is stopped before the daemon
// starts. The connector never runs, and yet dependency_up for Kafka is 0,
// its Kafka client counts connection errors and /readyz (hdfs-sink health)
// names the outage; once Kafka is started, dependency_up is 1, the daemon
// is ready and the records are on HDFS exactly once. SIGTERM then logs the
// graceful shutdown with the signal.
func TestKafkaDownFromStartIsVisible(t *testing.T) {
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	s.produce(counts, 200)
	startOnCleanup(t, "kafka")
	testenv(t, "stop", "kafka")
	d := s.startWith(s.connector("early", nil), ops)
	addr := strings.TrimPrefix(d.api(), "http://")
	up := `hdfs_sink_dependency_up{connector="early",dependency="kafka"}`
	until(t, "dependency_up 0 and /readyz naming Kafka", 2*time.Minute, func() bool {
		ok, out := health(t, addr)
		return metricValue(t, d, up) == 0 && !ok && strings.Contains(out, "connector early: kafka unreachable: ")
	})
	if st := d.connStatus("early"); st.Connector.State != "UNASSIGNED" {
		t.Fatalf("state %q during the outage, want UNASSIGNED", st.Connector.State)
	}
	if !strings.Contains(scrapeText(t, d), `hdfs_sink_kafka_connect_errors_total{connector="early",`) {
		t.Fatal("no Kafka client series during the outage")
	}
	testenv(t, "start", "kafka")
	until(t, "dependency_up 1 and ready", 3*time.Minute, func() bool {
		ok, _ := health(t, addr)
		return metricValue(t, d, up) == 1 && ok
	})
	s.waitCommitted(200, 2*time.Minute)
	d.stop()
	if log := readLog(d); !strings.Contains(log, `msg="graceful shutdown started: connectors commit their open files and leave their groups" cause="SIGTERM received" timeout=`) {
		t.Fatalf("no shutdown line naming SIGTERM in the log:\n%s", tail(d.log, 20))
	}
	s.check(counts)
}

// scrapeText is the daemon's whole /metrics.
func scrapeText(t *testing.T, d *daemon) string {
	resp, err := http.Get(d.api() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
