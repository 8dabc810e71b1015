package rest

import (
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/metrics"
)

// connectorStateInfo is Connect's ConnectorStateInfo, plus the partitions
// the task owns and the restart policy's doing.
type connectorStateInfo struct {
	Name       string            `json:"name"`
	Connector  stateInfo         `json:"connector"`
	Tasks      []taskState       `json:"tasks"`
	Type       string            `json:"type"`
	Partitions []partitionStatus `json:"partitions"`
	Restarts   int               `json:"restarts"`
	// NextRestartSeconds is the wait before a failed connector's restart.
	NextRestartSeconds float64 `json:"next_restart_seconds,omitempty"`
}

type stateInfo struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

type taskState struct {
	ID int `json:"id"`
	stateInfo
}

// partitionStatus is one owned partition: the state of its write machine
// (BROKEN while it waits for recovery), what HDFS has committed, the log
// end Kafka reported and the difference, and its last error.
type partitionStatus struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	State     string `json:"state"`
	// CommittedOffset is the last offset committed in HDFS; -1: none.
	CommittedOffset int64   `json:"committed_offset"`
	LogEndOffset    int64   `json:"log_end_offset"` // -1: not known yet
	Lag             int64   `json:"lag"`            // -1: not known yet
	LastCommitAgo   float64 `json:"seconds_since_commit,omitempty"`
	LastError       string  `json:"last_error,omitempty"`
}

// statusOf is connector c's Connect status on worker workerID, secrets
// hidden by r.
func statusOf(c Connector, workerID string, r *secret.Redactor) connectorStateInfo {
	st := stateInfo{State: c.State, WorkerID: workerID}
	if c.Err != nil {
		st.Trace = wiring.Scrub(r, c.Err.Error())
	}
	out := connectorStateInfo{Name: c.Config.Name, Connector: st, Tasks: []taskState{{ID: 0, stateInfo: st}}, Type: "sink",
		Partitions: partitionStatuses(r, c.Partitions), Restarts: c.Restarts}
	if c.State == stopped {
		out.Tasks = []taskState{} // a stopped connector has no task, as in Connect
	}
	if !c.NextRestart.IsZero() {
		out.NextRestartSeconds = max(time.Until(c.NextRestart).Seconds(), 0)
	}
	return out
}

// stopped is Connect's state of a connector stopped through PUT …/stop: no
// task runs, its offsets may be changed.
const stopped = "STOPPED"

// restarting is the status a restart answers with: the connector and its
// task restart, except a stopped one, which stays stopped.
func (st *connectorStateInfo) restarting() {
	if st.Connector.State == stopped {
		return
	}
	st.Connector.State = "RESTARTING"
	for i := range st.Tasks {
		st.Tasks[i].State = "RESTARTING"
	}
}

func partitionStatuses(r *secret.Redactor, views []metrics.PartitionView) []partitionStatus {
	out := make([]partitionStatus, 0, len(views))
	for _, v := range views {
		ps := partitionStatus{Topic: v.Topic, Partition: v.Partition, State: v.State, CommittedOffset: max(v.Next-1, -1),
			LogEndOffset: v.LogEnd, Lag: v.Lag(), LastError: wiring.Scrub(r, v.LastError)}
		if !v.LastCommit.IsZero() {
			ps.LastCommitAgo = time.Since(v.LastCommit).Seconds()
		}
		out = append(out, ps)
	}
	return out
}
