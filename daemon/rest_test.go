package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// scrape reads one sample of the daemon's /metrics by its series, as
// written in the text format; -1 when absent.
func scrape(t *testing.T, d *Daemon, series string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	d.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return f
		}
	}
	return -1
}

// sinkClass is the one connector class hdfs-sink is.
const sinkClass = "io.confluent.connect.hdfs.HdfsSinkConnector"

// The shapes Kafka Connect documents for its REST API (the entities of
// org.apache.kafka.connect.runtime.rest.entities), written from its
// documentation for this test.
type (
	kcServerInfo struct {
		Version        string `json:"version"`
		Commit         string `json:"commit"`
		KafkaClusterID string `json:"kafka_cluster_id"`
	}
	kcConnectorInfo struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
		Tasks  []struct {
			Connector string `json:"connector"`
			Task      int    `json:"task"`
		} `json:"tasks"`
		Type string `json:"type"`
	}
	kcState struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	}
	kcConnectorStateInfo struct {
		Name      string  `json:"name"`
		Connector kcState `json:"connector"`
		Tasks     []struct {
			ID int `json:"id"`
			kcState
		} `json:"tasks"`
		Type string `json:"type"`
	}
	kcErrorMessage struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}
	kcPluginInfo struct {
		Class   string `json:"class"`
		Type    string `json:"type"`
		Version string `json:"version"`
	}
	kcConfigInfos struct {
		Name       string   `json:"name"`
		ErrorCount int      `json:"error_count"`
		Groups     []string `json:"groups"`
		Configs    []struct {
			Definition struct {
				Name          string   `json:"name"`
				Type          string   `json:"type"`
				Required      bool     `json:"required"`
				DefaultValue  *string  `json:"default_value"`
				Importance    string   `json:"importance"`
				Documentation string   `json:"documentation"`
				Group         string   `json:"group"`
				Order         int      `json:"order"`
				Width         string   `json:"width"`
				DisplayName   string   `json:"display_name"`
				Dependents    []string `json:"dependents"`
			} `json:"definition"`
			Value struct {
				Name              string   `json:"name"`
				Value             *string  `json:"value"`
				RecommendedValues []string `json:"recommended_values"`
				Errors            []string `json:"errors"`
				Visible           bool     `json:"visible"`
			} `json:"value"`
		} `json:"configs"`
	}
)

// restClient calls a test server and decodes answers strictly: a member
// Connect does not document fails the decode (strict), except where
// hdfs-sink documents an extension (loose).
type restClient struct {
	t   *testing.T
	url string
}

func (c restClient) do(method, path, body string, wantCode int, out any, strict bool) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantCode {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, data, wantCode)
	}
	if out == nil {
		if len(bytes.TrimSpace(data)) != 0 {
			c.t.Fatalf("%s %s: body %s, want none", method, path, data)
		}
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(out); err != nil {
		c.t.Fatalf("%s %s: %s does not decode into Connect's shape: %v", method, path, data, err)
	}
}

// TestRESTContract decodes every answer of the REST API into the shape
// Kafka Connect documents for it and checks what it says.
func TestRESTContract(t *testing.T) {
	f := newDaemonFixture(t, "orders", "added")
	f.d.files.Config = f.dir
	c := f.connectorWith("orders", map[string]string{"value.converter.basic.auth.user.info": "u:secret-pw"})
	f.run([]*configs.Connector{c})
	f.produce("orders", 5)
	f.waitFor("a commit", func() bool { return f.committed("orders") == 1 })
	srv := httptest.NewServer(f.d.restAPI("127.0.0.1:8083").Handler())
	defer srv.Close()
	rc := restClient{t: t, url: srv.URL}

	var si kcServerInfo
	rc.do("GET", "/", "", 200, &si, true)
	var names []string
	rc.do("GET", "/connectors", "", 200, &names, true)
	if si.Version == "" || fmt.Sprint(names) != "[orders]" {
		t.Fatalf("server info %+v, connectors %v", si, names)
	}
	contractInfo(t, rc)
	contractStatus(t, rc)
	contractControl(t, rc, f)
	contractConfigFiles(t, rc, f)
	contractValidate(t, rc)
	contractConnect(t, rc, f)
	var e kcErrorMessage
	rc.do("GET", "/connectors/nope/status", "", 404, &e, true)
	if e.ErrorCode != 404 || !strings.Contains(e.Message, "nope") {
		t.Fatalf("404 body %+v", e)
	}
	f.d.http.ReadOnly = true
	ro := httptest.NewServer(f.d.restAPI("").Handler())
	defer ro.Close()
	restClient{t: t, url: ro.URL}.do("PUT", "/connectors/orders/pause", "", 403, &e, true)
	f.stop()
	f.wait()
}

func contractInfo(t *testing.T, rc restClient) {
	var info kcConnectorInfo
	rc.do("GET", "/connectors/orders", "", 200, &info, true)
	if info.Name != "orders" || info.Type != "sink" || len(info.Tasks) != 1 || info.Config["topics"] != "orders" {
		t.Fatalf("connector info %+v", info)
	}
	if info.Config["value.converter.basic.auth.user.info"] != secret.Hidden {
		t.Fatalf("a credential is shown: %q", info.Config["value.converter.basic.auth.user.info"])
	}
	var cfg map[string]string
	rc.do("GET", "/connectors/orders/config", "", 200, &cfg, true)
	if cfg["flush.size"] != "5" || cfg["value.converter.basic.auth.user.info"] != secret.Hidden {
		t.Fatalf("config %v", cfg)
	}
	var expanded map[string]struct {
		Info   *kcConnectorInfo      `json:"info"`
		Status *kcConnectorStateInfo `json:"status"`
	}
	rc.do("GET", "/connectors?expand=info&expand=status", "", 200, &expanded, false)
	if e := expanded["orders"]; e.Info == nil || e.Status == nil || e.Info.Name != "orders" || e.Status.Connector.State != "RUNNING" {
		t.Fatalf("expanded %+v", expanded)
	}
	var topics map[string]struct {
		Topics []string `json:"topics"`
	}
	rc.do("GET", "/connectors/orders/topics", "", 200, &topics, true)
	if fmt.Sprint(topics["orders"].Topics) != "[orders]" {
		t.Fatalf("topics %v", topics)
	}
	var plugins []kcPluginInfo
	rc.do("GET", "/connector-plugins", "", 200, &plugins, true)
	if len(plugins) != 1 || plugins[0].Class != sinkClass || plugins[0].Type != "sink" {
		t.Fatalf("plugins %+v", plugins)
	}
}

// contractStatus: Connect's shape, and the documented extension: one entry
// per owned partition.
func contractStatus(t *testing.T, rc restClient) {
	var st kcConnectorStateInfo
	rc.do("GET", "/connectors/orders/status", "", 200, &st, false)
	if st.Name != "orders" || st.Connector.State != "RUNNING" || st.Connector.WorkerID != "127.0.0.1:8083" ||
		len(st.Tasks) != 1 || st.Tasks[0].ID != 0 || st.Tasks[0].State != "RUNNING" || st.Type != "sink" {
		t.Fatalf("status %+v", st)
	}
	var ext struct {
		Partitions []struct {
			State           string `json:"state"`
			CommittedOffset int64  `json:"committed_offset"`
		} `json:"partitions"`
	}
	rc.do("GET", "/connectors/orders/status", "", 200, &ext, false)
	if len(ext.Partitions) != 1 || ext.Partitions[0].CommittedOffset != 4 || ext.Partitions[0].State == "" {
		t.Fatalf("partitions %+v", ext.Partitions)
	}
}

func contractControl(t *testing.T, rc restClient, f *daemonFixture) {
	rc.do("PUT", "/connectors/orders/pause", "", 202, nil, true)
	f.waitFor("PAUSED", func() bool { return connState(t, rc) == "PAUSED" })
	rc.do("PUT", "/connectors/orders/resume", "", 202, nil, true)
	f.waitFor("RUNNING", func() bool { return connState(t, rc) == "RUNNING" })
	before := f.d.board.get("orders").conn
	rc.do("POST", "/connectors/orders/restart", "", 204, nil, true)
	f.waitFor("a new connector", func() bool { cs := f.d.board.get("orders"); return cs.conn != nil && cs.conn != before })
	var st kcConnectorStateInfo
	rc.do("POST", "/connectors/orders/restart?includeTasks=true&onlyFailed=true", "", 202, &st, false)
	if st.Connector.State != "RUNNING" {
		t.Fatalf("onlyFailed restarted a running connector: %+v", st)
	}
}

func connState(t *testing.T, rc restClient) string {
	var st kcConnectorStateInfo
	rc.do("GET", "/connectors/orders/status", "", 200, &st, false)
	return st.Connector.State
}

func contractConfigFiles(t *testing.T, rc restClient, f *daemonFixture) {
	cfg := map[string]string{}
	for k, v := range f.connector("added").Raw {
		cfg[k] = v
	}
	body, _ := json.Marshal(cfg)
	var info kcConnectorInfo
	rc.do("PUT", "/connectors/added/config", string(body), 201, &info, true)
	f.waitFor("added running", func() bool { return f.d.board.get("added").state == "running" })
	cfg["flush.size"] = "3"
	body, _ = json.Marshal(cfg)
	rc.do("PUT", "/connectors/added/config", string(body), 200, &info, true)
	f.waitFor("the change applied", func() bool { return f.d.supervisor("added").config().FlushSize == 3 })
	var e kcErrorMessage
	rc.do("PUT", "/connectors/added/config", `{"flush.size": "zero"}`, 400, &e, true)
	if !strings.Contains(e.Message, "flush.size") {
		t.Fatalf("400 for a bad config: %+v", e)
	}
	rc.do("DELETE", "/connectors/added", "", 204, nil, true)
	f.waitFor("added removed", func() bool { return f.d.supervisor("added") == nil })
	if _, err := os.Stat(filepath.Join(f.dir, "added.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the deleted connector's file is still there: %v", err)
	}
}

func contractValidate(t *testing.T, rc restClient) {
	var ci kcConfigInfos
	body := `{"topics": "t", "hdfs.url": "hdfs://nn:8020", "flush.size": "-1", "format.class": "io.confluent.connect.hdfs.avro.AvroFormat",
		"value.converter.schema.registry.url": "http://r", "name": "v", "value.converter.basic.auth.user.info": "u:pw"}`
	rc.do("PUT", "/connector-plugins/"+sinkClass+"/config/validate", body, 200, &ci, true)
	var flushErrs []string
	for _, c := range ci.Configs {
		if c.Value.Name == "flush.size" {
			flushErrs = c.Value.Errors
		}
		if c.Value.Name == "value.converter.basic.auth.user.info" && (c.Value.Value == nil || *c.Value.Value != secret.Hidden) {
			t.Fatalf("validate shows a credential: %v", *c.Value.Value)
		}
	}
	if ci.Name != sinkClass || ci.ErrorCount < 1 || len(flushErrs) != 1 {
		t.Fatalf("validate: %+v (flush.size errors %v)", ci, flushErrs)
	}
}
