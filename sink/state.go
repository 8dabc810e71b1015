package sink

import (
	"fmt"
	"strconv"
	"strings"
)

// State is a step of the per-partition state machine. The names and order are
// the reference connector's (TopicPartitionWriter.State), so operators who know
// its logs recognise ours.
type State int

// Recovery states run on assignment and after a failed write; write states
// loop for every rotation. Each comment says what has happened when the
// state is entered (docs/design.md §3).
const (
	// RecoveryStarted: the partition is assigned (or a write failed); recovery begins.
	RecoveryStarted State = iota
	// RecoveryPartitionPaused: this process's open temp files of the
	// partition are discarded; nothing is fetched until recovery returns.
	RecoveryPartitionPaused
	// WALApplied: the newest segment is rolled forward if it is a commit,
	// and our claim segment is published.
	WALApplied
	// OffsetReset: orphaned temp files and staging directories are removed;
	// the next offset is known.
	OffsetReset
	// WALTruncated: segments below our claim are deleted.
	WALTruncated
	// WriteStarted: the partition is ready for records (after recovery or a batch).
	WriteStarted
	// WritePartitionPaused: a batch is being written, or a commit finished.
	WritePartitionPaused
	// ShouldRotate: a rotation trigger fired (flush.size, schema change,
	// a timer, the memory ceiling, a release).
	ShouldRotate
	// TempFileClosed: every open temp file of the partition is closed: durable.
	TempFileClosed
	// WALAppended: the commit segment is published and is the newest.
	WALAppended
	// FileCommitted: every temp file of the commit carries its final name.
	FileCommitted
)

var stateNames = [...]string{
	"RECOVERY_STARTED", "RECOVERY_PARTITION_PAUSED", "WAL_APPLIED", "OFFSET_RESET", "WAL_TRUNCATED",
	"WRITE_STARTED", "WRITE_PARTITION_PAUSED", "SHOULD_ROTATE", "TEMP_FILE_CLOSED", "WAL_APPENDED", "FILE_COMMITTED",
}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "State(" + strconv.Itoa(int(s)) + ")"
	}
	return stateNames[s]
}

// ParseState parses a state name as String prints it.
func ParseState(name string) (State, error) {
	for i, n := range stateNames {
		if strings.EqualFold(n, name) {
			return State(i), nil
		}
	}
	return 0, fmt.Errorf("unknown state %q (want one of %s)", name, strings.Join(stateNames[:], ", "))
}
