package daemon

import (
	"encoding/json"
	"strings"
	"testing"
)

// More of the shapes Kafka Connect documents for its REST API, written
// from its documentation for this test: KIP-875's offsets, tasks,
// KIP-495's loggers, KIP-1017's worker status, the message of an offsets
// change.
type (
	kcConnectorOffsets struct {
		Offsets []struct {
			Partition struct {
				Topic     string `json:"kafka_topic"`
				Partition int    `json:"kafka_partition"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"kafka_offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	kcTaskInfo struct {
		ID struct {
			Connector string `json:"connector"`
			Task      int    `json:"task"`
		} `json:"id"`
		Config map[string]string `json:"config"`
	}
	kcTaskState struct {
		ID int `json:"id"`
		kcState
	}
	kcLoggerLevel struct {
		Level        string `json:"level"`
		LastModified *int64 `json:"last_modified"`
	}
	kcWorkerStatus struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	kcMessage struct {
		Message string `json:"message"`
	}
)

// contractConnect: the routes beyond the connector files, on a running
// daemon whose connector orders has committed offsets 0-4.
func contractConnect(t *testing.T, rc restClient, f *daemonFixture) {
	f.waitFor("the cluster id", func() bool { return f.d.KafkaClusterID() != "" })
	var si kcServerInfo
	rc.do("GET", "/", "", 200, &si, true)
	var ws kcWorkerStatus
	rc.do("GET", "/health", "", 200, &ws, true)
	if si.KafkaClusterID == "" || ws.Status != "healthy" {
		t.Fatalf("server info %+v, health %+v", si, ws)
	}
	contractTasks(t, rc)
	contractLoggers(t, rc)
	contractOffsets(t, rc, f)
	contractCreate(t, rc, f)
}

func contractTasks(t *testing.T, rc restClient) {
	var tasks []kcTaskInfo
	rc.do("GET", "/connectors/orders/tasks", "", 200, &tasks, true)
	var ts kcTaskState
	rc.do("GET", "/connectors/orders/tasks/0/status", "", 200, &ts, true)
	if len(tasks) != 1 || tasks[0].ID.Connector != "orders" || tasks[0].ID.Task != 0 || tasks[0].Config["topics"] != "orders" || ts.State != "RUNNING" {
		t.Fatalf("tasks %+v, task 0 %+v", tasks, ts)
	}
	var e kcErrorMessage
	rc.do("GET", "/connectors/orders/tasks/1/status", "", 404, &e, true)
	rc.do("POST", "/connectors/orders/tasks/0/restart", "", 204, nil, true)
}

func contractLoggers(t *testing.T, rc restClient) {
	var all map[string]kcLoggerLevel
	rc.do("GET", "/admin/loggers", "", 200, &all, true)
	var changed []string
	rc.do("PUT", "/admin/loggers/connector.orders", `{"level": "DEBUG"}`, 200, &changed, true)
	var one kcLoggerLevel
	rc.do("GET", "/admin/loggers/connector.orders", "", 200, &one, true)
	if _, ok := all["root"]; !ok || len(changed) != 1 || one.Level != "DEBUG" || one.LastModified == nil {
		t.Fatalf("loggers %+v, changed %v, connector.orders %+v", all, changed, one)
	}
	rc.do("PUT", "/admin/loggers/root?scope=cluster", `{"level": "WARN"}`, 204, nil, true)
	var e kcErrorMessage
	rc.do("GET", "/admin/loggers/org.apache.kafka.connect", "", 404, &e, true)
	rc.do("PUT", "/admin/loggers/root", `{"level": "LOUDEST"}`, 404, &e, true)
}

func contractOffsets(t *testing.T, rc restClient, f *daemonFixture) {
	var offs kcConnectorOffsets
	rc.do("GET", "/connectors/orders/offsets", "", 200, &offs, true)
	if len(offs.Offsets) != 1 || offs.Offsets[0].Partition.Topic != "orders" || offs.Offsets[0].Offset.Offset != 5 {
		t.Fatalf("offsets %+v", offs)
	}
	body := `{"offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]}`
	var e kcErrorMessage
	rc.do("PATCH", "/connectors/orders/offsets", body, 400, &e, true)
	rc.do("PUT", "/connectors/orders/stop", "", 204, nil, true)
	f.waitFor("STOPPED", func() bool { return connState(t, rc) == "STOPPED" })
	var st kcConnectorStateInfo
	rc.do("GET", "/connectors/orders/status", "", 200, &st, false)
	var info kcConnectorInfo
	rc.do("GET", "/connectors/orders", "", 200, &info, true)
	var tasks []kcTaskInfo
	rc.do("GET", "/connectors/orders/tasks", "", 200, &tasks, true)
	if len(st.Tasks) != 0 || len(info.Tasks) != 0 || len(tasks) != 0 {
		t.Fatalf("a stopped connector's tasks: status %+v, info %+v, tasks %+v", st.Tasks, info.Tasks, tasks)
	}
	var msg kcMessage
	rc.do("PATCH", "/connectors/orders/offsets", body, 200, &msg, true)
	rc.do("DELETE", "/connectors/orders/offsets", "", 400, &e, true) // committed files hold 0-4
	if !strings.Contains(msg.Message, "altered") || !strings.Contains(e.Message, "committed files") {
		t.Fatalf("PATCH %+v, DELETE %+v", msg, e)
	}
	rc.do("PUT", "/connectors/orders/resume", "", 202, nil, true)
	f.waitFor("RUNNING", func() bool { return connState(t, rc) == "RUNNING" })
}

func contractCreate(t *testing.T, rc restClient, f *daemonFixture) {
	cfg := map[string]string{}
	for k, v := range f.connector("added").Raw {
		cfg[k] = v
	}
	f.removeFile("added.json")
	body, _ := json.Marshal(map[string]any{"name": "added", "config": cfg, "initial_state": "PAUSED"})
	var info kcConnectorInfo
	rc.do("POST", "/connectors", string(body), 201, &info, true)
	f.waitFor("added PAUSED", func() bool { c, ok := f.d.Connector("added"); return ok && c.State == "PAUSED" })
	var e kcErrorMessage
	rc.do("POST", "/connectors", string(body), 409, &e, true)
	rc.do("PATCH", "/connectors/added/config", `{"flush.size": "4"}`, 200, &info, true)
	if info.Name != "added" || info.Config["flush.size"] != "4" {
		t.Fatalf("PATCH answered %+v", info)
	}
	rc.do("DELETE", "/connectors/added", "", 204, nil, true)
	f.waitFor("added removed", func() bool { return f.d.supervisor("added") == nil })
}
