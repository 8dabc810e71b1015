package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// apiDo makes one request of the daemon's REST API with a body.
func apiDo(d *Daemon, method, path, body string) (int, string) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Host = "localhost:8083" // httptest's example.com is a foreign name to the browser guards
	d.restAPI("").Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func (f *daemonFixture) connectState(name string) string {
	c, ok := f.d.Connector(name)
	if !ok {
		return ""
	}
	return c.State
}

// groupMembers counts the members of connector c's consumer group.
func (f *daemonFixture) groupMembers(c *configs.Connector) int {
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	groups, err := kadm.NewClient(cl).DescribeGroups(context.Background(), c.Consumer.GroupID)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(groups[c.Consumer.GroupID].Members)
}

// finalFile reports whether topic's partition 0 has a committed file of
// offsets from to to.
func (f *daemonFixture) finalFile(topic string, from, to int64) bool {
	found := false
	suffix := fmt.Sprintf("+0+%010d+%010d.avro", from, to)
	_ = filepath.WalkDir(filepath.Join(f.dir, topic, "topics"), func(p string, e fs.DirEntry, err error) error {
		found = found || (err == nil && !strings.Contains(p, "+tmp") && strings.HasSuffix(p, suffix))
		return nil
	})
	return found
}

// TestStopCommitsReleasesAndWaits: PUT …/stop commits what the connector
// holds, leaves its group and runs nothing until a resume (or a pause,
// which starts it paused); a restart leaves it stopped; /readyz does not
// count it, as a paused one; its task is gone from its status.
func TestStopCommitsReleasesAndWaits(t *testing.T) {
	f := newDaemonFixture(t, "orders")
	c := f.connector("orders")
	f.run([]*configs.Connector{c})
	f.produce("orders", 5)
	f.waitFor("a commit", func() bool { return f.committed("orders") == 1 })
	f.produce("orders", 3) // held in an open file: flush.size is 5
	f.waitFor("records held", func() bool { cs := f.d.board.get("orders"); return cs.conn != nil && cs.conn.Stats.Records.Load() == 8 })
	if code, body := apiDo(f.d, "PUT", "/connectors/orders/stop", ""); code != http.StatusNoContent {
		t.Fatalf("stop: %d %s", code, body)
	}
	f.waitFor("STOPPED", func() bool { return f.connectState("orders") == "STOPPED" })
	if f.committed("orders") != 2 || !f.finalFile("orders", 5, 7) {
		t.Fatalf("the held records were not committed on stop: %d files", f.committed("orders"))
	}
	if n := f.groupMembers(c); n != 0 || f.d.board.get("orders").conn != nil || len(f.d.metrics.Partitions("orders")) != 0 {
		t.Fatalf("a stopped connector still has %d group members (connector %v, partitions %v)", n, f.d.board.get("orders").conn, f.d.metrics.Partitions("orders"))
	}
	if reasons := f.d.NotReady(); len(reasons) != 0 {
		t.Fatalf("a stopped connector makes the daemon not ready: %v", reasons)
	}
	if code, body := apiDo(f.d, "GET", "/connectors/orders/status", ""); code != 200 || !strings.Contains(body, `"tasks":[]`) {
		t.Fatalf("status of a stopped connector: %d %s", code, body)
	}
	if err := f.d.Restart("orders"); err != nil || f.connectState("orders") != "STOPPED" {
		t.Fatalf("restart of a stopped connector: %v, %s", err, f.connectState("orders"))
	}
	f.produce("orders", 5)
	if err := f.d.Pause("orders"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("PAUSED from STOPPED", func() bool { return f.connectState("orders") == "PAUSED" })
	if err := f.d.Resume("orders"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the records sent while stopped committed", func() bool { return f.finalFile("orders", 8, 12) })
	if st := f.connectState("orders"); st != "RUNNING" {
		t.Fatalf("after resume: %s", st)
	}
	f.stop()
	f.wait()
}

// TestOffsetsRoutesMoveAStoppedConnector: GET …/offsets shows where the
// partition resumes; PATCH and DELETE are refused while it runs, refuse a
// topic it does not consume, an offset outside the log and one committed
// files hold, and move it once stopped; after a resume it writes from
// there on, exactly once.
func TestOffsetsRoutesMoveAStoppedConnector(t *testing.T) {
	f := newDaemonFixture(t, "orders")
	f.run([]*configs.Connector{f.connector("orders")})
	f.produce("orders", 10)
	f.waitFor("offsets 0-9 committed", func() bool { return f.committed("orders") == 2 })
	want := `{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":10}}]}`
	if code, body := apiDo(f.d, "GET", "/connectors/orders/offsets", ""); code != 200 || strings.TrimSpace(body) != want {
		t.Fatalf("GET offsets: %d %s", code, body)
	}
	to := func(n int) string {
		return fmt.Sprintf(`{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": {"kafka_offset": %d}}]}`, n)
	}
	if code, body := apiDo(f.d, "PATCH", "/connectors/orders/offsets", to(15)); code != 400 || !strings.Contains(body, "must be STOPPED") {
		t.Fatalf("PATCH while running: %d %s", code, body)
	}
	if err := f.d.Pause("orders"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("PAUSED", func() bool { return f.connectState("orders") == "PAUSED" })
	if code, body := apiDo(f.d, "DELETE", "/connectors/orders/offsets", ""); code != 400 || !strings.Contains(body, "must be STOPPED") {
		t.Fatalf("DELETE while paused: %d %s", code, body)
	}
	if err := f.d.Stop("orders"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("STOPPED", func() bool { return f.connectState("orders") == "STOPPED" })
	f.produce("orders", 10) // offsets 10-19, while stopped
	for _, tt := range []struct{ body, says string }{
		{to(3), "cannot resume at offset 3: committed files"},
		{to(21), "offset 21 is past the log end 20"},
		{`{"offsets": [{"partition": {"kafka_topic": "payments", "kafka_partition": 0}, "offset": {"kafka_offset": 0}}]}`, "does not consume this topic"},
		{`{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 4}, "offset": {"kafka_offset": 0}}]}`, "has no such partition"},
	} {
		if code, body := apiDo(f.d, "PATCH", "/connectors/orders/offsets", tt.body); code != 400 || !strings.Contains(body, tt.says) {
			t.Errorf("PATCH %s: %d %s, want 400 saying %q", tt.body, code, body, tt.says)
		}
	}
	if code, body := apiDo(f.d, "DELETE", "/connectors/orders/offsets", ""); code != 400 || !strings.Contains(body, "committed files") {
		t.Fatalf("DELETE over committed files: %d %s", code, body)
	}
	if code, body := apiDo(f.d, "PATCH", "/connectors/orders/offsets", to(15)); code != 200 || !strings.Contains(body, "altered successfully") {
		t.Fatalf("PATCH to 15: %d %s", code, body)
	}
	if code, body := apiDo(f.d, "GET", "/connectors/orders/offsets", ""); code != 200 || !strings.Contains(body, `"offset":{"kafka_offset":15}`) {
		t.Fatalf("GET after the PATCH: %d %s", code, body)
	}
	if err := f.d.Resume("orders"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("offsets 15-19 committed", func() bool { return f.finalFile("orders", 15, 19) })
	f.stop()
	f.wait()
	if n := f.committed("orders"); n != 3 {
		t.Fatalf("%d committed files, want 3: 0-4, 5-9 and 15-19 (10-14 skipped by the PATCH)", n)
	}
}

// TestDeleteOffsetsAfterMovingTheFiles: DELETE …/offsets, once the
// committed files are out of topics.dir, makes the partition start where
// consumer.auto.offset.reset says (the log start), as `offsets reset --to
// 0` does for a re-created topic.
func TestDeleteOffsetsAfterMovingTheFiles(t *testing.T) {
	f := newDaemonFixture(t, "orders")
	f.run([]*configs.Connector{f.connector("orders")})
	f.produce("orders", 5)
	f.waitFor("a commit", func() bool { return f.committed("orders") == 1 })
	if err := f.d.Stop("orders"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("STOPPED", func() bool { return f.connectState("orders") == "STOPPED" })
	if err := os.Rename(filepath.Join(f.dir, "orders", "topics"), filepath.Join(f.dir, "orders", "archive")); err != nil {
		t.Fatal(err)
	}
	if code, body := apiDo(f.d, "DELETE", "/connectors/orders/offsets", ""); code != 200 || !strings.Contains(body, "reset successfully") {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, body := apiDo(f.d, "GET", "/connectors/orders/offsets", ""); code != 200 || strings.TrimSpace(body) != `{"offsets":[]}` {
		t.Fatalf("GET after DELETE: %d %s", code, body)
	}
	if err := f.d.Resume("orders"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("offsets 0-4 written again", func() bool { return f.finalFile("orders", 0, 4) })
	f.stop()
	f.wait()
}

// TestOffsetsChangeHoldsTheConnectorStopped: a resume asked while an
// offsets change runs waits for it; a change is refused while the last
// run is still ending.
func TestOffsetsChangeHoldsTheConnectorStopped(t *testing.T) {
	s := newSupervisor(&configs.Connector{Name: "orders"}, nil, DefaultRestart, newStatusBoard(), testLogger(t), targetRunning)
	if _, err := s.hold(); err != errNotHalted {
		t.Fatalf("hold of a running connector: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.setTarget(targetStopped)
	waited := make(chan bool)
	go func() { waited <- s.waitWhileStopped(ctx) }()
	waitUntil(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.halted })
	release, err := s.hold()
	if err != nil {
		t.Fatal(err)
	}
	s.setTarget(targetRunning)
	select {
	case <-waited:
		t.Fatal("the connector started while its offsets were being changed")
	default:
	}
	release()
	if !<-waited {
		t.Fatal("the loop did not go on after the change")
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// TestCreateAndPatchConnectors: POST creates a connector in its initial
// state and is 409 for one that exists (running or only written); PATCH
// changes the keys given in the file as written, removes those set to
// null, and is 404 for no connector.
func TestCreateAndPatchConnectors(t *testing.T) {
	f := newDaemonFixture(t, "orders", "added")
	f.d.files.Config = f.dir
	f.run([]*configs.Connector{f.connector("orders")})
	cfg := map[string]string{}
	for k, v := range f.connector("added").Raw {
		cfg[k] = v
	}
	if err := os.Remove(filepath.Join(f.dir, "added.json")); err != nil {
		t.Fatal(err)
	}
	cfg["rotate.interval.ms"] = "60000"
	body, _ := json.Marshal(map[string]any{"name": "added", "config": cfg, "initial_state": "STOPPED"})
	if code, out := apiDo(f.d, "POST", "/connectors", string(body)); code != 201 || !strings.Contains(out, `"tasks":[]`) {
		t.Fatalf("POST: %d %s", code, out)
	}
	f.waitFor("added STOPPED", func() bool { return f.connectState("added") == "STOPPED" })
	for _, again := range []string{string(body), `{"name": "orders", "config": {}}`} {
		if code, out := apiDo(f.d, "POST", "/connectors", again); code != 409 || !strings.Contains(out, "already exists") {
			t.Fatalf("POST of an existing connector: %d %s", code, out)
		}
	}
	if code, out := apiDo(f.d, "PATCH", "/connectors/added/config", `{"flush.size": 3, "rotate.interval.ms": null}`); code != 200 || !strings.Contains(out, `"flush.size":"3"`) {
		t.Fatalf("PATCH: %d %s", code, out)
	}
	f.waitFor("the patch applied", func() bool { c := f.d.supervisor("added").config(); return c.FlushSize == 3 })
	written, err := os.ReadFile(filepath.Join(f.dir, "added.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(written), "rotate.interval.ms") || !strings.Contains(string(written), `"flush.size": "3"`) {
		t.Fatalf("the file after the PATCH:\n%s", written)
	}
	if st := f.connectState("added"); st != "STOPPED" {
		t.Fatalf("a patched stopped connector is %s, want STOPPED", st)
	}
	for _, tt := range []struct {
		path, body string
		code       int
		says       string
	}{
		{"/connectors/nope/config", `{"flush.size": "3"}`, 404, "Connector nope not found"},
		{"/connectors/added/config", `{"name": "other"}`, 400, "the config's name other is not the connector's name added"},
		{"/connectors/added/config", `{"flush.size": "zero"}`, 400, "flush.size"},
	} {
		if code, out := apiDo(f.d, "PATCH", tt.path, tt.body); code != tt.code || !strings.Contains(out, tt.says) {
			t.Errorf("PATCH %s %s: %d %s, want %d saying %q", tt.path, tt.body, code, out, tt.code, tt.says)
		}
	}
	f.stop()
	f.wait()
}

// TestHealthFollowsTheLoop: starting before the daemon's loop runs,
// healthy while it answers, unhealthy when it does not or once it shuts
// down.
func TestHealthFollowsTheLoop(t *testing.T) {
	f := newDaemonFixture(t, "orders")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if h := f.d.Health(ctx); h.Status != rest.Starting {
		t.Fatalf("before Run: %+v", h)
	}
	loopless, stopLoopless := context.WithCancel(context.Background())
	f.d.mu.Lock()
	f.d.runCtx = loopless // as if the loop were stuck
	f.d.mu.Unlock()
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if h := f.d.Health(short); h.Status != rest.Unhealthy || !strings.Contains(h.Message, "did not answer") {
		t.Fatalf("a loop that does not answer: %+v", h)
	}
	stopLoopless()
	if h := f.d.Health(ctx); h.Status != rest.Unhealthy || !strings.Contains(h.Message, "shutting down") {
		t.Fatalf("after the loop's context ended: %+v", h)
	}
	f.run([]*configs.Connector{f.connector("orders")})
	f.waitFor("healthy with the loop running", func() bool { return f.d.Health(ctx).Status == rest.Healthy })
	if code, body := apiDo(f.d, "GET", "/health", ""); code != 200 || !strings.Contains(body, `"status":"healthy"`) {
		t.Fatalf("GET /health: %d %s", code, body)
	}
	f.stop()
	f.wait()
}

// TestKafkaClusterIDOnceKnown: GET / names the cluster once the connector
// reached it; not while a connector's cluster is unknown, nor when two
// connectors read different clusters.
func TestKafkaClusterIDOnceKnown(t *testing.T) {
	f := newDaemonFixture(t, "orders")
	c := f.connector("orders")
	if code, body := apiDo(f.d, "GET", "/", ""); code != 200 || strings.Contains(body, "kafka_cluster_id") {
		t.Fatalf("before any connector ran: %d %s", code, body)
	}
	f.run([]*configs.Connector{c})
	f.waitFor("the cluster id", func() bool { return f.d.KafkaClusterID() != "" })
	id := f.d.KafkaClusterID()
	if code, body := apiDo(f.d, "GET", "/", ""); code != 200 || !strings.Contains(body, `"kafka_cluster_id":"`+id+`"`) {
		t.Fatalf("GET /: %d %s", code, body)
	}
	other := *c
	other.Name, other.Consumer.BootstrapServers = "other", []string{"127.0.0.1:1"}
	f.d.mu.Lock()
	f.d.sups["other"] = newSupervisor(&other, nil, DefaultRestart, f.d.board, f.d.log, targetStopped)
	f.d.mu.Unlock()
	if got := f.d.KafkaClusterID(); got != "" {
		t.Fatalf("a connector whose cluster is unknown: %q", got)
	}
	f.d.mu.Lock()
	f.d.clusterIDs["127.0.0.1:1"] = "another-cluster"
	f.d.mu.Unlock()
	if got := f.d.KafkaClusterID(); got != "" {
		t.Fatalf("two clusters: %q", got)
	}
	f.d.mu.Lock()
	delete(f.d.sups, "other")
	f.d.mu.Unlock()
	f.stop()
	f.wait()
}

// removeFile removes a file of the fixture's directory.
func (f *daemonFixture) removeFile(name string) {
	if err := os.Remove(filepath.Join(f.dir, name)); err != nil {
		f.t.Fatal(err)
	}
}

// TestPublishedConfigsUseTheWorker: a connector created (and patched)
// over REST without bootstrap.servers, which the worker file sets, is
// taken as run takes such a file, not refused for the missing key.
func TestPublishedConfigsUseTheWorker(t *testing.T) {
	f := newDaemonFixture(t, "orders")
	f.d.files.Config = f.dir
	worker := filepath.Join(t.TempDir(), "worker.properties")
	if err := os.WriteFile(worker, []byte("bootstrap.servers="+strings.Join(f.brokers, ",")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, _, err := configs.LoadWorker(worker)
	if err != nil {
		t.Fatal(err)
	}
	f.d.files.Worker = worker
	f.d.board.setLoaded(wiring.Loaded{Worker: w})
	cfg := map[string]string{}
	for k, v := range f.connector("orders").Raw {
		cfg[k] = v
	}
	f.removeFile("orders.json")
	delete(cfg, "bootstrap.servers")
	f.run(nil)
	body, _ := json.Marshal(map[string]any{"name": "orders", "config": cfg})
	if code, out := apiDo(f.d, "POST", "/connectors", string(body)); code != 201 {
		t.Fatalf("POST of a config the worker completes: %d %s", code, out)
	}
	f.waitFor("orders running", func() bool { return f.connectState("orders") == "RUNNING" })
	if code, out := apiDo(f.d, "PATCH", "/connectors/orders/config", `{"flush.size": "3"}`); code != 200 {
		t.Fatalf("PATCH of a config the worker completes: %d %s", code, out)
	}
	f.produce("orders", 3)
	f.waitFor("a commit of 3 records", func() bool { return f.finalFile("orders", 0, 2) })
	f.stop()
	f.wait()
}

// TestAlterOffsetsChecksEveryPartitionFirst: a PATCH whose second
// partition is refused (committed files hold its offset) moves none,
// not the first one either.
func TestAlterOffsetsChecksEveryPartitionFirst(t *testing.T) {
	f := newDaemonFixture(t, "pairs")
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreatePartitions(context.Background(), 1, "pairs"); err != nil {
		t.Fatal(err)
	}
	produce := func() {
		sent, err := demodata.ProduceFrom(context.Background(), f.brokers, f.id, "pairs", 2, 20, f.sent["pairs"])
		if err != nil {
			t.Fatal(err)
		}
		f.sent["pairs"] = sent
	}
	f.run([]*configs.Connector{f.connector("pairs")})
	produce() // offsets 0-9 of each partition
	f.waitFor("0-9 of both partitions committed", func() bool { return f.committed("pairs") == 4 })
	if err := f.d.Stop("pairs"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("STOPPED", func() bool { return f.connectState("pairs") == "STOPPED" })
	produce() // 10-19 of each
	body := `{"offsets": [{"partition": {"kafka_topic": "pairs", "kafka_partition": 0}, "offset": {"kafka_offset": 15}},
		{"partition": {"kafka_topic": "pairs", "kafka_partition": 1}, "offset": {"kafka_offset": 3}}]}`
	if code, out := apiDo(f.d, "PATCH", "/connectors/pairs/offsets", body); code != 400 || !strings.Contains(out, "partition 1: cannot resume at offset 3") {
		t.Fatalf("PATCH with a refused partition: %d %s", code, out)
	}
	want := `{"offsets":[{"partition":{"kafka_topic":"pairs","kafka_partition":0},"offset":{"kafka_offset":10}},` +
		`{"partition":{"kafka_topic":"pairs","kafka_partition":1},"offset":{"kafka_offset":10}}]}`
	if code, out := apiDo(f.d, "GET", "/connectors/pairs/offsets", ""); code != 200 || strings.TrimSpace(out) != want {
		t.Fatalf("after a refused PATCH, a partition moved: %d %s", code, out)
	}
	f.stop()
	f.wait()
}
