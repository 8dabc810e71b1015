package rest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

// setState gives connector name another state in the fake.
func (f *fakeConnectors) setState(name, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.conns[name]
	c.State = state
	f.conns[name] = c
}

// route is one request of a route table: what is sent, to a connector in
// which state, what the daemon answers, and what must come back.
type route struct {
	name, method, path, body string
	state                    string // orders' state; "": RUNNING
	failNext                 error
	code                     int
	calls                    string   // what the daemon was asked
	want                     []string // substrings of the body
}

func (tt route) run(t *testing.T, o Options, setup func(*fakeConnectors)) {
	t.Run(tt.name, func(t *testing.T) {
		f, srv := fakeAPI(t, o)
		if tt.state != "" {
			f.setState("orders", tt.state)
		}
		if setup != nil {
			setup(f)
		}
		f.failNext = tt.failNext
		code, body := call(t, srv, tt.method, tt.path, tt.body)
		if code != tt.code || f.called() != tt.calls {
			t.Fatalf("%s %s: %d %s, calls %q; want %d, calls %q", tt.method, tt.path, code, body, f.called(), tt.code, tt.calls)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Fatalf("%s %s: %s\nlacks %s", tt.method, tt.path, body, w)
			}
		}
		if strings.Contains(body, testSecret) {
			t.Fatalf("%s %s shows the secret: %s", tt.method, tt.path, body)
		}
	})
}

var errKafkaDown = errors.New("cannot check offset 5 against the log of topic orders partition 0: Kafka at 127.0.0.1:1: dial tcp: connection refused")

// TestConnectRoutesAgainstAFake: every route beyond the connector files,
// with Connect's status codes and shapes, and what each asks of the
// daemon.
func TestConnectRoutesAgainstAFake(t *testing.T) {
	added := conftest.Connector(t, t.TempDir(), "added", map[string]string{"value.converter.basic.auth.user.info": "u:" + testSecret})
	changed := func(f *fakeConnectors) {
		f.change = func(string) (*configs.Connector, error) { return added, nil }
	}
	refused := func(f *fakeConnectors) {
		f.change = func(string) (*configs.Connector, error) {
			return nil, &ConfigError{Messages: []string{"flush.size: not a number"}}
		}
	}
	exists := func(f *fakeConnectors) {
		f.change = func(name string) (*configs.Connector, error) {
			return nil, &ConflictError{Err: fmt.Errorf("Connector %s already exists", name)}
		}
	}
	stoppedMsg := "connector orders is RUNNING: a connector must be STOPPED before its offsets can be changed (PUT /connectors/orders/stop"
	for _, tc := range []struct {
		route
		setup func(*fakeConnectors)
	}{
		// POST /connectors
		{route{"create", "POST", "/connectors", `{"name": " added ", "config": {"flush.size": "3"}}`, "", nil, 201, "create added RUNNING",
			[]string{`"name":"added"`, `"tasks":[{"connector":"added","task":0}]`, `"type":"sink"`, secret.Hidden}}, changed},
		{route{"create stopped", "POST", "/connectors", `{"name": "added", "config": {}, "initial_state": "stopped"}`, "", nil, 201, "create added STOPPED",
			[]string{`"tasks":[]`}}, changed},
		{route{"create an existing one", "POST", "/connectors", `{"name": "orders", "config": {}}`, "", nil, 409, "create orders RUNNING",
			[]string{`{"error_code":409,"message":"Connector orders already exists"}`}}, exists},
		{route{"create a bad config", "POST", "/connectors", `{"name": "added", "config": {"flush.size": "x"}}`, "", nil, 400, "create added RUNNING",
			[]string{"flush.size: not a number"}}, refused},
		{route{"create without a name", "POST", "/connectors", `{"config": {}}`, "", nil, 400, "", []string{`"name\" must be given`}}, changed},
		{route{"create with a blank name", "POST", "/connectors", `{"name": "  ", "config": {}}`, "", nil, 400, "", []string{`"name\" must be given`}}, changed},
		{route{"create without a config", "POST", "/connectors", `{"name": "added"}`, "", nil, 400, "", []string{`"config\" must be a JSON object`}}, changed},
		{route{"create with a config list", "POST", "/connectors", `{"name": "added", "config": ["a"]}`, "", nil, 400, "", []string{`"config\" must be a JSON object`}}, changed},
		{route{"create in no state", "POST", "/connectors", `{"name": "added", "config": {}, "initial_state": "ASLEEP"}`, "", nil, 400, "",
			[]string{`initial_state \"ASLEEP\": want RUNNING, PAUSED or STOPPED`}}, changed},
		{route{"create from no JSON", "POST", "/connectors", `name=added`, "", nil, 400, "", []string{"the body must be a JSON object"}}, changed},
		// PATCH /connectors/<n>/config
		{route{"patch", "PATCH", "/connectors/orders/config", `{"flush.size": 7, "rotate.interval.ms": null}`, "", nil, 200, "patch orders",
			[]string{`"name":"added"`}}, changed},
		{route{"patch refused", "PATCH", "/connectors/orders/config", `{"flush.size": "x"}`, "", nil, 400, "patch orders", []string{"flush.size: not a number"}}, refused},
		{route{"patch an object value", "PATCH", "/connectors/orders/config", `{"flush.size": {"a": 1}}`, "", nil, 400, "",
			[]string{"config key flush.size: a value is a string, a number, a boolean or null"}}, changed},
		{route{"patch no connector", "PATCH", "/connectors/nope/config", `{}`, "", nil, 404, "", []string{"Connector nope not found"}}, changed},
		// PUT /connectors/<n>/stop
		{route{"stop", "PUT", "/connectors/orders/stop", "", "", nil, 204, "stop orders", nil}, nil},
		{route{"stop a stopped one", "PUT", "/connectors/orders/stop", "", "STOPPED", nil, 204, "stop orders", nil}, nil},
		{route{"stop no connector", "PUT", "/connectors/nope/stop", "", "", nil, 404, "", []string{"Connector nope not found"}}, nil},
		// tasks
		{route{"tasks", "GET", "/connectors/orders/tasks", "", "", nil, 200, "",
			[]string{`[{"id":{"connector":"orders","task":0},"config":{`, `"topics":"orders"`, secret.Hidden}}, nil},
		{route{"tasks of a stopped one", "GET", "/connectors/orders/tasks", "", "STOPPED", nil, 200, "", []string{"[]"}}, nil},
		{route{"task status", "GET", "/connectors/orders/tasks/0/status", "", "", nil, 200, "", []string{`{"id":0,"state":"RUNNING","worker_id":""}`}}, nil},
		{route{"failed task status", "GET", "/connectors/clicks/tasks/0/status", "", "", nil, 200, "",
			[]string{`"state":"FAILED"`, `"trace":"registry said no to ` + secret.Hidden}}, nil},
		{route{"task 1", "GET", "/connectors/orders/tasks/1/status", "", "", nil, 404, "", []string{"Task orders-1 not found"}}, nil},
		{route{"task x", "GET", "/connectors/orders/tasks/x/status", "", "", nil, 404, "", []string{"Task orders-x not found"}}, nil},
		{route{"task of a stopped one", "GET", "/connectors/orders/tasks/0/status", "", "STOPPED", nil, 404, "", []string{"Task orders-0 not found"}}, nil},
		{route{"restart task 0", "POST", "/connectors/orders/tasks/0/restart", "", "", nil, 204, "restart orders", nil}, nil},
		{route{"restart task 3", "POST", "/connectors/orders/tasks/3/restart", "", "", nil, 404, "", []string{"Task orders-3 not found"}}, nil},
		{route{"restart a task that fails", "POST", "/connectors/orders/tasks/0/restart", "", "", errDisk, 500, "", []string{"no space left"}}, nil},
		// offsets
		{route{"offsets", "GET", "/connectors/orders/offsets", "", "", nil, 200, "offsets orders",
			[]string{`{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":350}},` +
				`{"partition":{"kafka_topic":"orders","kafka_partition":1},"offset":{"kafka_offset":0}}]}`}}, withOffsets},
		{route{"no offsets", "GET", "/connectors/orders/offsets", "", "", nil, 200, "offsets orders", []string{`{"offsets":[]}`}}, nil},
		{route{"offsets unreadable", "GET", "/connectors/orders/offsets", "", "", errKafkaDown, 500, "", []string{"Kafka at 127.0.0.1:1"}}, nil},
		{route{"offsets of no connector", "GET", "/connectors/nope/offsets", "", "", nil, 404, "", []string{"Connector nope not found"}}, nil},
		{route{"alter", "PATCH", "/connectors/orders/offsets", alterBody, "STOPPED", nil, 200, "alter offsets orders",
			[]string{`{"message":"The offsets for this connector have been altered successfully"}`}}, nil},
		{route{"alter a running one", "PATCH", "/connectors/orders/offsets", alterBody, "", nil, 400, "", []string{stoppedMsg}}, nil},
		{route{"alter a paused one", "PATCH", "/connectors/orders/offsets", alterBody, "PAUSED", nil, 400, "", []string{"connector orders is PAUSED"}}, nil},
		{route{"alter refused", "PATCH", "/connectors/orders/offsets", alterBody, "STOPPED",
			&BadRequestError{errors.New(`connector "orders" topic orders partition 0: offset 5 is below the log start 9`)}, 400, "", []string{"below the log start 9"}}, nil},
		{route{"alter with Kafka down", "PATCH", "/connectors/orders/offsets", alterBody, "STOPPED", errKafkaDown, 500, "", []string{"cannot check offset 5"}}, nil},
		{route{"alter nothing", "PATCH", "/connectors/orders/offsets", `{"offsets": []}`, "STOPPED", nil, 400, "", []string{"must list the partitions"}}, nil},
		{route{"alter no JSON", "PATCH", "/connectors/orders/offsets", `[`, "STOPPED", nil, 400, "", []string{`the body must be {\"offsets\"`}}, nil},
		{route{"alter without a topic", "PATCH", "/connectors/orders/offsets", `{"offsets": [{"partition": {"kafka_partition": 0}, "offset": null}]}`, "STOPPED", nil, 400, "",
			[]string{"must have the keys 'kafka_topic' and 'kafka_partition'"}}, nil},
		{route{"alter a null partition", "PATCH", "/connectors/orders/offsets", `{"offsets": [{"partition": null, "offset": null}]}`, "STOPPED", nil, 400, "",
			[]string{"partition must not be null"}}, nil},
		{route{"alter partition -1", "PATCH", "/connectors/orders/offsets", `{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": -1}, "offset": null}]}`, "STOPPED", nil, 400, "",
			[]string{"kafka_partition -1: a partition is an integer, 0 or more"}}, nil},
		{route{"alter an offset of words", "PATCH", "/connectors/orders/offsets", `{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": {"kafka_offset": "five"}}]}`, "STOPPED", nil, 400, "",
			[]string{"kafka_offset five: an offset is an integer, 0 or more"}}, nil},
		{route{"alter a negative offset", "PATCH", "/connectors/orders/offsets", `{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": {"kafka_offset": -2}}]}`, "STOPPED", nil, 400, "",
			[]string{"kafka_offset -2: an offset is an integer, 0 or more"}}, nil},
		{route{"alter without kafka_offset", "PATCH", "/connectors/orders/offsets", `{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": {"offset": 2}}]}`, "STOPPED", nil, 400, "",
			[]string{"an offset is null or has the key 'kafka_offset'"}}, nil},
		{route{"alter twice", "PATCH", "/connectors/orders/offsets", `{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": null},` +
			`{"partition": {"kafka_topic": "orders", "kafka_partition": "0"}, "offset": null}]}`, "STOPPED", nil, 400, "", []string{"topic orders partition 0 is listed twice"}}, nil},
		{route{"reset", "DELETE", "/connectors/orders/offsets", "", "STOPPED", nil, 200, "reset offsets orders",
			[]string{`{"message":"The offsets for this connector have been reset successfully"}`}}, nil},
		{route{"reset a running one", "DELETE", "/connectors/orders/offsets", "", "", nil, 400, "", []string{stoppedMsg}}, nil},
		{route{"reset refused", "DELETE", "/connectors/orders/offsets", "", "STOPPED",
			&BadRequestError{errors.New("topic orders partition 0: cannot resume at offset 0: committed files in /topics/orders already hold offsets up to 349")}, 400, "",
			[]string{"already hold offsets up to 349"}}, nil},
		{route{"reset no connector", "DELETE", "/connectors/nope/offsets", "", "", nil, 404, "", []string{"Connector nope not found"}}, nil},
		// loggers
		{route{"loggers", "GET", "/admin/loggers", "", "", nil, 200, "",
			[]string{`{"connector.orders":{"level":"DEBUG","last_modified":null},"root":{"level":"INFO","last_modified":null}}`}}, nil},
		{route{"logger", "GET", "/admin/loggers/connector.orders", "", "", nil, 200, "", []string{`{"level":"DEBUG","last_modified":null}`}}, nil},
		{route{"no logger", "GET", "/admin/loggers/org.apache.kafka", "", "", nil, 404, "", []string{`"message":"Logger org.apache.kafka not found."`}}, nil},
		{route{"set a logger", "PUT", "/admin/loggers/connector.orders", `{"level": "trace"}`, "", nil, 200, "set connector.orders TRACE",
			[]string{`["connector.orders"]`}}, nil},
		{route{"set root", "PUT", "/admin/loggers/root", `{"level": "WARN"}`, "", nil, 200, "set root WARN", []string{`["connector.orders","root"]`}}, nil},
		{route{"set for the cluster", "PUT", "/admin/loggers/root?scope=cluster", `{"level": "WARN"}`, "", nil, 204, "set root WARN", nil}, nil},
		{route{"set no level", "PUT", "/admin/loggers/root", `{"lvl": "WARN"}`, "", nil, 400, "", []string{`the request must give the \"level\"`}}, nil},
		{route{"set a level log4j lacks", "PUT", "/admin/loggers/root", `{"level": "LOUD"}`, "", nil, 404, "", []string{"invalid log level 'LOUD'"}}, nil},
		{route{"set no logger", "PUT", "/admin/loggers/org.apache.kafka", `{"level": "WARN"}`, "", nil, 404, "", []string{"Logger org.apache.kafka not found."}}, nil},
		// health and the cluster id
		{route{"healthy", "GET", "/health", "", "", nil, 200, "", []string{`"status":"healthy"`}}, nil},
		{route{"starting", "GET", "/health", "", "", nil, 503, "", []string{`"status":"starting"`, `"message":"loop not entered"`}},
			func(f *fakeConnectors) { f.health = Health{Starting, "loop not entered"} }},
		{route{"unhealthy", "GET", "/health", "", "", nil, 500, "", []string{`"status":"unhealthy"`}},
			func(f *fakeConnectors) { f.health = Health{Unhealthy, "no answer"} }},
		{route{"cluster id", "GET", "/", "", "", nil, 200, "", []string{`"kafka_cluster_id":"kc-1"`}}, func(f *fakeConnectors) { f.clusterID = "kc-1" }},
	} {
		tc.run(t, Options{}, tc.setup)
	}
}

// alterBody moves partition 0 to offset 5 and forgets partition 1's
// (a partition may be a string of digits, as Connect accepts).
const alterBody = `{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": {"kafka_offset": 5}},
	{"partition": {"kafka_topic": "orders", "kafka_partition": "1"}, "offset": null}]}`

func withOffsets(f *fakeConnectors) {
	n0, n1 := int64(350), int64(0)
	f.offsets = []PartitionOffset{{Topic: "orders", Partition: 0, Next: &n0}, {Topic: "orders", Partition: 1, Next: &n1}}
}

// TestAlterOffsetsReachesTheDaemonParsed: what a PATCH of offsets asks of
// the daemon, entry by entry.
func TestAlterOffsetsReachesTheDaemonParsed(t *testing.T) {
	f, srv := fakeAPI(t, Options{})
	f.setState("orders", "STOPPED")
	if code, body := call(t, srv, "PATCH", "/connectors/orders/offsets", alterBody); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if len(f.altered) != 2 {
		t.Fatalf("the daemon was given %d offsets, want 2", len(f.altered))
	}
	got := fmt.Sprintf("%s %d %d %s %d %v", f.altered[0].Topic, f.altered[0].Partition, *f.altered[0].Next, f.altered[1].Topic, f.altered[1].Partition, f.altered[1].Next == nil)
	if got != "orders 0 5 orders 1 true" {
		t.Fatalf("the daemon was given %s", got)
	}
}

// TestCreateAndPatchReachTheDaemon: POST hands over the config object as
// sent, with its Location; PATCH the keys with null for a removal.
func TestCreateAndPatchReachTheDaemon(t *testing.T) {
	added := conftest.Connector(t, t.TempDir(), "added", nil)
	f, srv := fakeAPI(t, Options{})
	f.change = func(string) (*configs.Connector, error) { return added, nil }
	req, _ := http.NewRequest("POST", srv.URL+"/connectors", strings.NewReader(`{"name": "added", "config": {"flush.size": "3", "topics": "a"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 || resp.Header.Get("Location") != "/connectors/added" || f.body != `{"flush.size": "3", "topics": "a"}` {
		t.Fatalf("%d, Location %q, the daemon read %q", resp.StatusCode, resp.Header.Get("Location"), f.body)
	}
	if code, body := call(t, srv, "PATCH", "/connectors/orders/config", `{"flush.size": 7, "topics": null, "hive.integration": true}`); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if f.patch["topics"] != nil || *f.patch["flush.size"] != "7" || *f.patch["hive.integration"] != "true" || len(f.patch) != 3 {
		t.Fatalf("the daemon was given %v", f.patch)
	}
}

// TestReadOnlyRefusesTheNewChanges: every new route that changes
// something is 403 in read-only mode and never reaches the daemon; the
// new reads still answer.
func TestReadOnlyRefusesTheNewChanges(t *testing.T) {
	f, srv := fakeAPI(t, Options{ReadOnly: true})
	f.setState("orders", "STOPPED")
	for _, r := range [][2]string{{"POST", "/connectors"}, {"PATCH", "/connectors/orders/config"}, {"PUT", "/connectors/orders/stop"},
		{"POST", "/connectors/orders/tasks/0/restart"}, {"PATCH", "/connectors/orders/offsets"}, {"DELETE", "/connectors/orders/offsets"},
		{"PUT", "/admin/loggers/root"}} {
		if code, body := call(t, srv, r[0], r[1], `{"level": "DEBUG"}`); code != 403 || !strings.Contains(body, "read-only") {
			t.Errorf("%s %s: %d %s, want 403", r[0], r[1], code, body)
		}
	}
	for _, p := range []string{"/connectors/orders/offsets", "/connectors/orders/tasks", "/admin/loggers", "/health"} {
		if code, body := call(t, srv, "GET", p, ""); code != 200 {
			t.Errorf("GET %s: %d %s", p, code, body)
		}
	}
	if c := f.called(); c != "offsets orders" {
		t.Fatalf("the daemon was asked %q", c)
	}
}
