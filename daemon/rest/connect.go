package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// connectRoutes are Kafka Connect's routes beyond reading and writing
// connector files: create, patch, stop, the tasks, the offsets (KIP-875)
// and the loggers (KIP-495). Their entity shapes and status codes are
// Connect's (docs/operations.md).
func (a *API) connectRoutes(api *http.ServeMux) {
	api.HandleFunc("POST /connectors", a.changing(a.create))
	api.HandleFunc("PATCH /connectors/{name}/config", a.changing(a.withConnector(a.patchConfig)))
	api.HandleFunc("PUT /connectors/{name}/stop", a.changing(a.withConnector(a.stop)))
	api.HandleFunc("GET /connectors/{name}/tasks", a.withConnector(a.tasks))
	api.HandleFunc("GET /connectors/{name}/tasks/{task}/status", a.withConnector(a.withTask(a.taskStatus)))
	api.HandleFunc("POST /connectors/{name}/tasks/{task}/restart", a.changing(a.withConnector(a.withTask(a.restartTask))))
	api.HandleFunc("GET /connectors/{name}/offsets", a.withConnector(a.offsets))
	api.HandleFunc("PATCH /connectors/{name}/offsets", a.changing(a.withConnector(a.alterOffsets)))
	api.HandleFunc("DELETE /connectors/{name}/offsets", a.changing(a.withConnector(a.resetOffsets)))
	api.HandleFunc("GET /admin/loggers", a.loggers)
	api.HandleFunc("GET /admin/loggers/{logger}", a.logger)
	api.HandleFunc("PUT /admin/loggers/{logger}", a.changing(a.setLogger))
}

// connectorInfo is c's ConnectorInfo: a stopped connector has no task.
func (a *API) connectorInfo(c Connector) connectorInfo {
	ci := infoOf(a.c.Redactor(), c.Config)
	if c.State == stopped {
		ci.Tasks = []taskID{}
	}
	return ci
}

// decodeBody reads a JSON request body (1 MiB at most) into v.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.UseNumber()
	return dec.Decode(v)
}

// createRequest is Connect's CreateConnectorRequest (KIP-980's
// initial_state included).
type createRequest struct {
	Name         *string         `json:"name"`
	Config       json.RawMessage `json:"config"`
	InitialState string          `json:"initial_state"`
}

// initialStates are the target states a connector may be created in.
var initialStates = map[string]bool{"RUNNING": true, "PAUSED": true, stopped: true}

// create is POST /connectors: 201 with the connector's info and its
// Location; 409 when it exists; 400 for a request or config that cannot
// be used.
func (a *API) create(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("the body must be a JSON object with \"name\" and \"config\": %v", err))
		return
	}
	name, initial, msg := req.check()
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	c, err := a.c.Create(name, bytes.NewReader(req.Config), initial)
	if err != nil {
		a.writeFailure(w, name, err)
		return
	}
	a.log.Info("connector created through the REST API", "connector", name, "initial_state", initial)
	info := infoOf(configs.NewRedactor(a.c.Worker(), c), c)
	if initial == stopped {
		info.Tasks = []taskID{}
	}
	w.Header().Set("Location", "/connectors/"+url.PathEscape(name))
	writeJSON(w, http.StatusCreated, info)
}

// check is the request's name and initial state, or why it cannot be used.
func (req createRequest) check() (name, initial, msg string) {
	if req.Name != nil {
		name = strings.TrimSpace(*req.Name) // as Connect does
	}
	config := bytes.TrimSpace(req.Config)
	initial = strings.ToUpper(req.InitialState)
	if initial == "" {
		initial = "RUNNING"
	}
	switch {
	case name == "":
		return "", "", "the connector's \"name\" must be given and not be empty"
	case strings.ContainsFunc(name, unicode.IsControl):
		return "", "", fmt.Sprintf("the connector's name %q must not hold control characters", name)
	case len(config) == 0 || config[0] != '{':
		return "", "", "the request's \"config\" must be a JSON object of connector settings"
	case !initialStates[initial]:
		return "", "", fmt.Sprintf("initial_state %q: want RUNNING, PAUSED or STOPPED", req.InitialState)
	}
	return name, initial, ""
}

// patchConfig is PATCH /connectors/<name>/config: keys with a value are
// set, keys with null removed, the others kept as the file states them;
// 200 with the connector's info.
func (a *API) patchConfig(w http.ResponseWriter, r *http.Request, c Connector) {
	var body map[string]any
	if err := decodeBody(r, &body); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("the body must be a JSON object of config keys (null removes one): %v", err))
		return
	}
	patch := make(map[string]*string, len(body))
	for k, v := range body {
		s, ok := scalarText(v)
		if !ok {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("config key %s: a value is a string, a number, a boolean or null", k))
			return
		}
		patch[k] = s
	}
	changed, err := a.c.Patch(c.Config.Name, patch)
	if err != nil {
		a.writeFailure(w, c.Config.Name, err)
		return
	}
	a.log.Info("connector config patched through the REST API", "connector", c.Config.Name, "keys", len(patch))
	writeJSON(w, http.StatusOK, infoOf(configs.NewRedactor(a.c.Worker(), changed), changed))
}

// scalarText is a JSON scalar as a config value; nil for null.
func scalarText(v any) (*string, bool) {
	var s string
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool:
		s = strconv.FormatBool(x)
	default:
		return nil, false
	}
	return &s, true
}

// stop is PUT /connectors/<name>/stop: 204; the connector is STOPPED once
// its run has ended (its status says so).
func (a *API) stop(w http.ResponseWriter, _ *http.Request, c Connector) {
	if err := a.c.Stop(c.Config.Name); err != nil {
		a.writeFailure(w, c.Config.Name, err)
		return
	}
	a.log.Info("connector stop requested through the REST API", "connector", c.Config.Name)
	w.WriteHeader(http.StatusNoContent)
}

// taskInfo is Connect's TaskInfo.
type taskInfo struct {
	ID     taskID            `json:"id"`
	Config map[string]string `json:"config"`
}

// tasks is GET /connectors/<name>/tasks: the one task, 0, with the
// connector's config as shown; none while stopped.
func (a *API) tasks(w http.ResponseWriter, _ *http.Request, c Connector) {
	out := []taskInfo{}
	info := a.connectorInfo(c)
	for _, t := range info.Tasks {
		out = append(out, taskInfo{ID: t, Config: info.Config})
	}
	writeJSON(w, http.StatusOK, out)
}

// withTask finds task {task} of the connector: there is one, 0, unless the
// connector is stopped; else 404.
func (a *API) withTask(h func(http.ResponseWriter, *http.Request, Connector)) func(http.ResponseWriter, *http.Request, Connector) {
	return func(w http.ResponseWriter, r *http.Request, c Connector) {
		id, err := strconv.Atoi(r.PathValue("task"))
		if err != nil || id != 0 || c.State == stopped {
			writeError(w, http.StatusNotFound, fmt.Sprintf("Task %s-%s not found (a running connector has one task, 0)", c.Config.Name, r.PathValue("task")))
			return
		}
		h(w, r, c)
	}
}

// taskStatus is Connect's TaskState of task 0.
func (a *API) taskStatus(w http.ResponseWriter, _ *http.Request, c Connector) {
	writeJSON(w, http.StatusOK, statusOf(c, a.workerID, a.c.Redactor()).Tasks[0])
}

// restartTask restarts task 0, which is the connector's run: 204.
func (a *API) restartTask(w http.ResponseWriter, _ *http.Request, c Connector) {
	a.log.Info("task restart requested through the REST API", "connector", c.Config.Name, "task", 0)
	if err := a.c.Restart(c.Config.Name); err != nil {
		a.writeFailure(w, c.Config.Name, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// health is GET /health (KIP-1017): 200 healthy, 503 while starting, 500
// when the daemon did not answer in time.
func (a *API) health(w http.ResponseWriter, r *http.Request) {
	timeout := a.o.HealthTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	h := a.c.Health(ctx)
	code := http.StatusOK
	switch h.Status {
	case Starting:
		code = http.StatusServiceUnavailable
	case Unhealthy:
		code = http.StatusInternalServerError
	}
	writeJSON(w, code, map[string]string{"status": h.Status, "message": h.Message})
}
