package rest

import (
	"encoding/json"
	"net/http"

	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// errorMessage is Connect's error body.
type errorMessage struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorMessage{ErrorCode: code, Message: wiring.Scrub(nil, msg)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	// Only the write can fail (the values are plain data), when the client
	// went away: nothing to tell it.
	_ = json.NewEncoder(w).Encode(v)
}
