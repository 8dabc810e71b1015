package rest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The loggers of KIP-495: GET /admin/loggers lists the process's loggers
// with their levels, GET and PUT /admin/loggers/<name> read and set one.
// Which loggers there are is the daemon's (docs/operations.md).

func (a *API) loggers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.c.Loggers())
}

func loggerNotFound(w http.ResponseWriter, name string) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("Logger %s not found.", name))
}

func (a *API) logger(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("logger")
	l, ok := a.c.LoggerLevel(name)
	if !ok {
		loggerNotFound(w, name)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// setLogger is PUT /admin/loggers/<name> with {"level": …}: 200 with the
// loggers it changed; with ?scope=cluster 204, as Connect answers a change
// made on every worker (this process is the only one). A level that is not
// log4j's is a 404, as in Connect.
func (a *API) setLogger(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("logger")
	var body map[string]any
	if err := decodeBody(r, &body); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`the body must be {"level": "<log4j level>"}: %v`, err))
		return
	}
	level, ok := body["level"].(string)
	if !ok {
		writeError(w, http.StatusBadRequest, `the request must give the "level" to set (a log4j level: ERROR, WARN, INFO, DEBUG, TRACE, …)`)
		return
	}
	changed, err := a.c.SetLoggerLevel(name, level)
	var le *LevelError
	switch {
	case errors.Is(err, ErrNoLogger):
		loggerNotFound(w, name)
		return
	case errors.As(err, &le):
		writeError(w, http.StatusNotFound, le.Error()+": want OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE or ALL")
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	a.log.Info("log level set through the REST API", "logger", name, "level", strings.ToUpper(level), "changed", changed)
	if strings.EqualFold(r.URL.Query().Get("scope"), "cluster") {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, changed)
}
