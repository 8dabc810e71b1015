package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// restAPI answers the Kafka Connect REST API where its concepts match
// hdfs-sink's (docs/operations.md lists what is and is not there). One
// hdfs-sink connector is one Connect connector with one task, task 0: the
// consumer group that writes every partition; the per-partition detail
// Connect has no place for is an extra "partitions" member of /status.
type restAPI struct {
	d        *daemon
	readOnly bool
	workerID string // host:port of the listener, Connect's worker_id
	log      *slog.Logger
}

// routes is every endpoint; only /healthz and /readyz skip authentication:
// probes carry no credentials and learn nothing secret there.
func (a *restAPI) routes(u users) http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("GET /{$}", a.serverInfo)
	api.HandleFunc("GET /connectors", a.list)
	api.HandleFunc("GET /connectors/{name}", a.withConnector(a.info))
	api.HandleFunc("GET /connectors/{name}/config", a.withConnector(a.config))
	api.HandleFunc("GET /connectors/{name}/status", a.withConnector(a.status))
	api.HandleFunc("GET /connectors/{name}/topics", a.withConnector(a.topics))
	api.HandleFunc("PUT /connectors/{name}/pause", a.changing(a.withConnector(a.pause)))
	api.HandleFunc("PUT /connectors/{name}/resume", a.changing(a.withConnector(a.resume)))
	api.HandleFunc("POST /connectors/{name}/restart", a.changing(a.withConnector(a.restart)))
	api.HandleFunc("PUT /connectors/{name}/config", a.changing(a.putConfig))
	api.HandleFunc("DELETE /connectors/{name}", a.changing(a.withConnector(a.deleteConnector)))
	api.HandleFunc("GET /connector-plugins", a.plugins)
	api.HandleFunc("PUT /connector-plugins/{class}/config/validate", a.validate)
	api.Handle("GET /status", a.d.board.handler(a.log))
	api.Handle("GET /metrics", a.d.metrics.Handler())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.Handle("/", u.authenticated(api))
	return mux
}

// errorMessage is Connect's error body.
type errorMessage struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorMessage{ErrorCode: code, Message: scrub(nil, msg)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	// Only the write can fail (the values are plain data), when the client
	// went away: nothing to tell it.
	_ = json.NewEncoder(w).Encode(v)
}

// changing refuses requests that change something in read-only mode.
func (a *restAPI) changing(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.readOnly {
			writeError(w, http.StatusForbidden, "the REST API is read-only here (run --read-only)")
			return
		}
		h(w, r)
	}
}

// withConnector finds {name} or answers 404 as Connect does.
func (a *restAPI) withConnector(h func(http.ResponseWriter, *http.Request, *supervisor)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		s := a.d.supervisor(name)
		if s == nil {
			writeError(w, http.StatusNotFound, fmt.Sprintf("Connector %s not found", name))
			return
		}
		h(w, r, s)
	}
}

type serverInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

func (a *restAPI) serverInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, serverInfo{Version: currentBuild().Version, Commit: currentBuild().Commit, KafkaClusterID: ""})
}

// connectorInfo is Connect's ConnectorInfo.
type connectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []taskID          `json:"tasks"`
	Type   string            `json:"type"`
}

type taskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

func infoOf(r *configs.Redactor, c *configs.Connector) connectorInfo {
	return connectorInfo{Name: c.Name, Config: redactConfig(r, c.Raw), Tasks: []taskID{{Connector: c.Name, Task: 0}}, Type: "sink"}
}

func (a *restAPI) info(w http.ResponseWriter, _ *http.Request, s *supervisor) {
	writeJSON(w, http.StatusOK, infoOf(a.d.board.redactor(), s.config()))
}

func (a *restAPI) config(w http.ResponseWriter, _ *http.Request, s *supervisor) {
	writeJSON(w, http.StatusOK, redactConfig(a.d.board.redactor(), s.config().Raw))
}

func (a *restAPI) status(w http.ResponseWriter, _ *http.Request, s *supervisor) {
	writeJSON(w, http.StatusOK, a.statusOf(s))
}

// list answers GET /connectors, with ?expand=status and/or ?expand=info.
func (a *restAPI) list(w http.ResponseWriter, r *http.Request) {
	sups := a.d.supervisors()
	expand := r.URL.Query()["expand"]
	if len(expand) == 0 {
		names := make([]string, 0, len(sups))
		for _, s := range sups {
			names = append(names, s.name)
		}
		writeJSON(w, http.StatusOK, names)
		return
	}
	out := map[string]map[string]any{}
	for _, s := range sups {
		e := map[string]any{}
		if slices.Contains(expand, "status") {
			e["status"] = a.statusOf(s)
		}
		if slices.Contains(expand, "info") {
			e["info"] = infoOf(a.d.board.redactor(), s.config())
		}
		out[s.name] = e
	}
	writeJSON(w, http.StatusOK, out)
}

// topics answers Connect's active topics: those configured, and those a
// topics.regex brought in (owned partitions).
func (a *restAPI) topics(w http.ResponseWriter, _ *http.Request, s *supervisor) {
	seen := map[string]bool{}
	for _, t := range s.config().Topics {
		seen[t] = true
	}
	for _, p := range a.d.metrics.Partitions(s.name) {
		seen[p.Topic] = true
	}
	topics := make([]string, 0, len(seen))
	for t := range seen {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	writeJSON(w, http.StatusOK, map[string]map[string][]string{s.name: {"topics": topics}})
}

func (a *restAPI) pause(w http.ResponseWriter, _ *http.Request, s *supervisor) {
	s.setPaused(true)
	a.log.Info("connector pause requested through the REST API", "connector", s.name)
	w.WriteHeader(http.StatusAccepted)
}

func (a *restAPI) resume(w http.ResponseWriter, _ *http.Request, s *supervisor) {
	s.setPaused(false)
	a.log.Info("connector resume requested through the REST API", "connector", s.name)
	w.WriteHeader(http.StatusAccepted)
}

// restart ends the connector's run gracefully and starts it again. With
// onlyFailed=true a connector that has not failed is left alone. With
// either parameter the answer is 202 with the status, as in KIP-745;
// without, 204.
func (a *restAPI) restart(w http.ResponseWriter, r *http.Request, s *supervisor) {
	q := r.URL.Query()
	onlyFailed := q.Get("onlyFailed") == "true"
	st := a.statusOf(s)
	if !onlyFailed || st.Connector.State == "FAILED" {
		a.log.Info("connector restart requested through the REST API", "connector", s.name)
		if s.gaveUp() != nil {
			a.d.revive(s.config()) // the policy gave up: a new supervisor
		} else {
			s.requestRestart(nil)
		}
		st.Connector.State, st.Tasks[0].State = "RESTARTING", "RESTARTING"
	}
	if q.Has("includeTasks") || q.Has("onlyFailed") {
		writeJSON(w, http.StatusAccepted, st)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pluginInfo is Connect's PluginInfo.
type pluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// sinkClass is the one connector class hdfs-sink is.
const sinkClass = "io.confluent.connect.hdfs.HdfsSinkConnector"

func (a *restAPI) plugins(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, []pluginInfo{{Class: sinkClass, Type: "sink", Version: version}})
}

func (a *restAPI) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

// readyz is 200 once every connector runs (or is paused) and its last
// health check reached Kafka, the registry and the store; else 503 and why.
func (a *restAPI) readyz(w http.ResponseWriter, _ *http.Request) {
	reasons := a.d.board.notReady()
	if len(reasons) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready"})
		return
	}
	for i := range reasons {
		reasons[i] = scrub(a.d.board.redactor(), reasons[i])
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "reasons": reasons})
}
