// Package rest is the daemon's HTTP face: the Kafka Connect REST API where
// its concepts match hdfs-sink's (docs/operations.md lists what is and is
// not there), the probes /healthz and /readyz, the status document and the
// metrics the daemon hands it, basic authentication, client certificates
// and TLS; the binding rule (exposure.go: an address other hosts can reach
// needs authentication or read-only mode) and the browser guards on
// changing requests (guard.go). It speaks to the daemon only through
// Connectors, the interface it declares, so it is tested against a fake
// and knows nothing of supervisors or the status board. Every config
// value and error it shows goes through the daemon's Redactor; a
// connector's config is shown as its file states it.
package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// Options are what the API serves besides the connectors.
type Options struct {
	ReadOnly bool   // refuse every request that changes something
	WorkerID string // host:port of the listener, Connect's worker_id (Serve sets it)
	// Version names the binary in the plugin list; Build is what GET /
	// says.
	Version string
	Build   BuildInfo
	// Status answers GET /status, Metrics GET /metrics; nil: 404.
	Status, Metrics http.Handler
	Log             *slog.Logger // nil: discard
	// HealthTimeout bounds GET /health's wait for the daemon (0: 10 s,
	// Connect's default).
	HealthTimeout time.Duration
}

// BuildInfo is the version and commit GET / reports.
type BuildInfo struct{ Version, Commit string }

// API answers the Kafka Connect REST API. One hdfs-sink connector is one
// Connect connector with one task, task 0: the consumer group that writes
// every partition; the per-partition detail Connect has no place for is an
// extra "partitions" member of /status.
type API struct {
	c        Connectors
	readOnly bool
	workerID string
	o        Options
	log      *slog.Logger
	hosts    hostRule // the names a changing request's Host may give (Serve sets it)
}

// New is the API over c.
func New(c Connectors, o Options) *API {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &API{c: c, readOnly: o.ReadOnly, workerID: o.WorkerID, o: o, log: o.Log, hosts: newHostRule("", nil)}
}

// Handler is every endpoint, without authentication, behind the browser
// guards (guard.go).
func (a *API) Handler() http.Handler { return a.routes(access{}) }

// routes is every endpoint; only /healthz, /readyz and /health skip
// authentication: probes carry no credentials and learn nothing secret
// there. Changing
// requests pass the browser guards first (guard.go), so that a page in a
// browser is refused before a credentials dialog could show.
func (a *API) routes(u access) http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("GET /{$}", a.serverInfo)
	api.HandleFunc("GET /connectors", a.list)
	api.HandleFunc("GET /connectors/{name}", a.withConnector(a.info))
	api.HandleFunc("GET /connectors/{name}/config", a.withConnector(a.config))
	api.HandleFunc("GET /connectors/{name}/status", a.withConnector(a.status))
	api.HandleFunc("GET /connectors/{name}/topics", a.withConnector(a.topics))
	api.HandleFunc("GET /connectors/{name}/lifecycle", a.withConnector(a.lifecycle))
	api.HandleFunc("PUT /connectors/{name}/pause", a.changing(a.withConnector(a.pause)))
	api.HandleFunc("PUT /connectors/{name}/resume", a.changing(a.withConnector(a.resume)))
	api.HandleFunc("POST /connectors/{name}/restart", a.changing(a.withConnector(a.restart)))
	api.HandleFunc("PUT /connectors/{name}/config", a.changing(a.putConfig))
	api.HandleFunc("DELETE /connectors/{name}", a.changing(a.withConnector(a.deleteConnector)))
	a.connectRoutes(api)
	api.HandleFunc("GET /connector-plugins", a.plugins)
	api.HandleFunc("PUT /connector-plugins/{class}/config/validate", a.validate)
	if a.o.Status != nil {
		api.Handle("GET /status", a.o.Status)
	}
	if a.o.Metrics != nil {
		api.Handle("GET /metrics", a.o.Metrics)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.HandleFunc("GET /health", a.health)
	mux.Handle("/", u.authenticated(api))
	return a.browserGuard(mux)
}

// changing refuses requests that change something in read-only mode.
func (a *API) changing(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.readOnly {
			writeError(w, http.StatusForbidden, "the REST API is read-only here (run --read-only)")
			return
		}
		h(w, r)
	}
}

// withConnector finds {name} or answers 404 as Connect does.
func (a *API) withConnector(h func(http.ResponseWriter, *http.Request, Connector)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		c, ok := a.c.Connector(name)
		if !ok {
			notFound(w, name)
			return
		}
		h(w, r, c)
	}
}

func notFound(w http.ResponseWriter, name string) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("Connector %s not found", name))
}

// writeFailure answers a Connectors error with its status: 404, 400, 403,
// 409, else 500.
func (a *API) writeFailure(w http.ResponseWriter, name string, err error) {
	var ce *ConfigError
	var fe *ForbiddenError
	var be *BadRequestError
	var conflict *ConflictError
	switch {
	case errors.Is(err, ErrNotFound):
		notFound(w, name)
	case errors.As(err, &ce):
		writeError(w, http.StatusBadRequest, ce.Error())
	case errors.As(err, &be):
		writeError(w, http.StatusBadRequest, be.Error())
	case errors.As(err, &fe):
		writeError(w, http.StatusForbidden, fe.Error())
	case errors.As(err, &conflict):
		writeError(w, http.StatusConflict, conflict.Error())
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// serverInfo is Connect's ServerInfo; kafka_cluster_id is left out while
// the cluster is not known (or the connectors read several), never guessed.
type serverInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id,omitempty"`
}

func (a *API) serverInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, serverInfo{Version: a.o.Build.Version, Commit: a.o.Build.Commit, KafkaClusterID: a.c.KafkaClusterID()})
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

// infoOf is a connector's ConnectorInfo; its config is the file as written
// (shownConfig).
func infoOf(r *secret.Redactor, c *configs.Connector) connectorInfo {
	return connectorInfo{Name: c.Name, Config: shownConfig(r, c), Tasks: []taskID{{Connector: c.Name, Task: 0}}, Type: "sink"}
}

// shownConfig is what Kafka Connect returns as a connector's config: the
// connector's own keys as its file states them, config provider
// placeholders intact and literal secrets hidden (wiring.RedactWritten),
// so that a client can send it back (the daemon restores what it hid).
func shownConfig(r *secret.Redactor, c *configs.Connector) map[string]string {
	return wiring.RedactWritten(r, c.Written)
}

func (a *API) info(w http.ResponseWriter, _ *http.Request, c Connector) {
	writeJSON(w, http.StatusOK, a.connectorInfo(c))
}

func (a *API) config(w http.ResponseWriter, _ *http.Request, c Connector) {
	writeJSON(w, http.StatusOK, shownConfig(a.c.Redactor(), c.Config))
}

func (a *API) status(w http.ResponseWriter, _ *http.Request, c Connector) {
	writeJSON(w, http.StatusOK, statusOf(c, a.workerID, a.c.Redactor()))
}

// list answers GET /connectors, with ?expand=status and/or ?expand=info.
func (a *API) list(w http.ResponseWriter, r *http.Request) {
	names := a.c.Names()
	expand := r.URL.Query()["expand"]
	if len(expand) == 0 {
		writeJSON(w, http.StatusOK, names)
		return
	}
	out := map[string]map[string]any{}
	for _, name := range names {
		c, ok := a.c.Connector(name)
		if !ok {
			continue // deleted meanwhile
		}
		e := map[string]any{}
		if slices.Contains(expand, "status") {
			e["status"] = statusOf(c, a.workerID, a.c.Redactor())
		}
		if slices.Contains(expand, "info") {
			e["info"] = a.connectorInfo(c)
		}
		out[name] = e
	}
	writeJSON(w, http.StatusOK, out)
}

// topics answers Connect's active topics: those configured, and those a
// topics.regex brought in (owned partitions).
func (a *API) topics(w http.ResponseWriter, _ *http.Request, c Connector) {
	seen := map[string]bool{}
	for _, t := range c.Config.Topics {
		seen[t] = true
	}
	for _, p := range c.Partitions {
		seen[p.Topic] = true
	}
	topics := make([]string, 0, len(seen))
	for t := range seen {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	writeJSON(w, http.StatusOK, map[string]map[string][]string{c.Config.Name: {"topics": topics}})
}

func (a *API) pause(w http.ResponseWriter, _ *http.Request, c Connector) {
	if err := a.c.Pause(c.Config.Name); err != nil {
		a.writeFailure(w, c.Config.Name, err)
		return
	}
	a.log.Info("connector pause requested through the REST API", "connector", c.Config.Name)
	w.WriteHeader(http.StatusAccepted)
}

func (a *API) resume(w http.ResponseWriter, _ *http.Request, c Connector) {
	if err := a.c.Resume(c.Config.Name); err != nil {
		a.writeFailure(w, c.Config.Name, err)
		return
	}
	a.log.Info("connector resume requested through the REST API", "connector", c.Config.Name)
	w.WriteHeader(http.StatusAccepted)
}

// restart ends the connector's run gracefully and starts it again. With
// onlyFailed=true a connector that has not failed is left alone. With
// either parameter the answer is 202 with the status, as in KIP-745;
// without, 204.
func (a *API) restart(w http.ResponseWriter, r *http.Request, c Connector) {
	q := r.URL.Query()
	onlyFailed := q.Get("onlyFailed") == "true"
	st := statusOf(c, a.workerID, a.c.Redactor())
	if !onlyFailed || st.Connector.State == "FAILED" {
		a.log.Info("connector restart requested through the REST API", "connector", c.Config.Name)
		if err := a.c.Restart(c.Config.Name); err != nil {
			a.writeFailure(w, c.Config.Name, err)
			return
		}
		st.restarting()
	}
	if q.Has("includeTasks") || q.Has("onlyFailed") {
		writeJSON(w, http.StatusAccepted, st)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// validate checks a config with the checker `hdfs-sink check` uses and
// answers in Connect's shape: one entry per key given, each with its
// errors. A config that is not a JSON object is a 400.
func (a *API) validate(w http.ResponseWriter, r *http.Request) {
	var cfg map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&cfg); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("the body must be a JSON object of config keys: %v", err))
		return
	}
	class := r.PathValue("class")
	if _, ok := cfg["connector.class"]; !ok {
		cfg["connector.class"] = class
	}
	writeJSON(w, http.StatusOK, validateConfig(a.c.Worker(), class, cfg))
}

// putConfig is PUT /connectors/<name>/config: the body is the config map.
// The daemon checks the file as run checks it, together with the other
// files, then writes it atomically and reloads: 201 for a new connector,
// 200 for a changed one.
func (a *API) putConfig(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	c, created, err := a.c.Put(name, r.Body)
	if err != nil {
		a.writeFailure(w, name, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	writeJSON(w, code, infoOf(configs.NewRedactor(a.c.Worker(), c), c))
}

// deleteConnector is DELETE /connectors/<name>: its file is removed and the
// daemon reloads, which stops the connector gracefully.
func (a *API) deleteConnector(w http.ResponseWriter, _ *http.Request, c Connector) {
	if err := a.c.Delete(c.Config.Name); err != nil {
		a.writeFailure(w, c.Config.Name, err)
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

func (a *API) plugins(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, []pluginInfo{{Class: sinkClass, Type: "sink", Version: a.o.Version}})
}

func (a *API) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

// readyz is 200 once every connector runs (or is paused) and its last
// health check reached Kafka, the registry and the store; else 503 and why.
func (a *API) readyz(w http.ResponseWriter, _ *http.Request) {
	reasons := a.c.NotReady()
	if len(reasons) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready"})
		return
	}
	for i := range reasons {
		reasons[i] = wiring.Scrub(a.c.Redactor(), reasons[i])
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "reasons": reasons})
}
