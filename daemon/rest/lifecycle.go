package rest

import (
	"net/http"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// GET /connectors/{name}/lifecycle is not Kafka Connect's: it shows a
// connector's partition lifecycle (hdfs.sink.completeness.* and
// hdfs.sink.compaction.*, issue 24) for an operator or a scheduler's
// sensor to poll, read-only, behind the same authentication as the rest
// of the API. The per-topic documents are the ones GET /status carries
// (the daemon's types are these), so both say the same thing. A topic is
// judged and compacted by the daemon that owns its partition 0: in a
// group of daemons, each shows the topics it owns, and a topic absent
// here is judged elsewhere (or not yet).

// CompletenessStatus is one topic's completeness as last judged here.
type CompletenessStatus struct {
	// Frontier: the topic's time directories ending at or before it are
	// complete (RFC 3339; empty when nothing is known).
	Frontier string `json:"frontier,omitempty"`
	// Holding are the partitions whose progress is the frontier, Idle
	// those that counted the wall clock (everything in their log committed).
	Holding []int32 `json:"holding,omitempty"`
	Idle    []int32 `json:"idle,omitempty"`
	// Marked counts the directories marked here; LastMarked is the newest.
	Marked     int    `json:"marked"`
	LastMarked string `json:"last_marked,omitempty"`
	// Waiting is a complete directory not markable yet (a commit's renames
	// pending, the metastore failing) and why.
	Waiting string `json:"waiting,omitempty"`
	Error   string `json:"error,omitempty"`
	At      string `json:"at"`
}

// CompactionStatus is one topic's compaction here, since this connector
// started.
type CompactionStatus struct {
	At        string `json:"at"`             // the last pass began (RFC 3339)
	Compacted int    `json:"compacted"`      // directories compacted
	LastDir   string `json:"last,omitempty"` // the newest of them
	// FilesBefore and FilesAfter are the committed files of the compacted
	// directories before and in their merged sets; Bytes* likewise.
	FilesBefore int   `json:"files_before"`
	FilesAfter  int   `json:"files_after"`
	BytesBefore int64 `json:"bytes_before"`
	BytesAfter  int64 `json:"bytes_after"`
	// LastSeconds is how long the newest compaction took.
	LastSeconds float64 `json:"last_seconds,omitempty"`
	// Removed counts merged inputs removed after their grace period.
	Removed int `json:"inputs_removed"`
	// Left is how many directories the last pass left (not complete, too
	// young, too few files, compacted already).
	Left int `json:"left"`
	// Waiting is how many directories the last pass chose but held for
	// the pace (hdfs.sink.compaction.pace.ms), and NextAllowed when the
	// first of them may begin (RFC 3339; empty when none is held).
	Waiting     int    `json:"waiting"`
	NextAllowed string `json:"next_allowed,omitempty"`
	LastError   string `json:"last_error,omitempty"` // the last pass's, cleared by a pass that succeeds
}

// lifecycle is the answer of GET /connectors/{name}/lifecycle.
type lifecycle struct {
	Name         string           `json:"name"`
	WorkerID     string           `json:"worker_id"`
	State        string           `json:"state"`
	Completeness completenessView `json:"completeness"`
	Compaction   compactionView   `json:"compaction"`
}

// completenessView is the connector's completeness settings a sensor
// needs (which marker to look for, how late records may be) and, by
// topic, the status; Topics is empty, never absent, when nothing is
// judged here.
type completenessView struct {
	Enabled    bool                          `json:"enabled"`
	Marker     string                        `json:"marker,omitempty"`
	LatenessMs int64                         `json:"lateness_ms"`
	Topics     map[string]CompletenessStatus `json:"topics"`
}

type compactionView struct {
	Enabled bool `json:"enabled"`
	// PaceMs is hdfs.sink.compaction.pace.ms: the least time between two
	// compactions of a topic (docs/design.md §12, "Pacing").
	PaceMs int64                       `json:"pace_ms"`
	Topics map[string]CompactionStatus `json:"topics"`
}

func (a *API) lifecycle(w http.ResponseWriter, _ *http.Request, c Connector) {
	writeJSON(w, http.StatusOK, lifecycleOf(c, a.workerID, a.c.Redactor()))
}

// lifecycleOf is connector c's lifecycle view; every error it quotes goes
// through r, as /status's do.
func lifecycleOf(c Connector, workerID string, r *secret.Redactor) lifecycle {
	out := lifecycle{Name: c.Config.Name, WorkerID: workerID, State: c.State,
		Completeness: completenessView{Enabled: c.Config.Completeness.Enabled, Topics: map[string]CompletenessStatus{}},
		Compaction:   compactionView{Enabled: c.Config.Compaction.Enabled, Topics: map[string]CompactionStatus{}}}
	if out.Completeness.Enabled {
		out.Completeness.Marker = c.Config.Completeness.MarkerName
		out.Completeness.LatenessMs = c.Config.Completeness.Lateness.Milliseconds()
	}
	if out.Compaction.Enabled {
		out.Compaction.PaceMs = c.Config.Compaction.Pace.Milliseconds()
	}
	for topic, st := range c.Completeness {
		st.Waiting, st.Error = wiring.Scrub(r, st.Waiting), wiring.Scrub(r, st.Error)
		st.Holding, st.Idle = append([]int32(nil), st.Holding...), append([]int32(nil), st.Idle...)
		out.Completeness.Topics[topic] = st
	}
	for topic, st := range c.Compaction {
		st.LastError = wiring.Scrub(r, st.LastError)
		out.Compaction.Topics[topic] = st
	}
	return out
}
