package sink

import (
	"fmt"
	"runtime/debug"
	"time"
)

// Observer hears what a connector and its partitions do, so that code
// outside sink can export it (cmd wires one that feeds Prometheus and the
// REST status). sink only tells it and never asks it anything: the partition
// stays the only writer of its own state, and an observer that is slow or
// wrong cannot change what is written. Its methods are called from the poll
// loop, the partition workers and franz-go's group callbacks at once: they
// must be safe for concurrent use and must not block.
type Observer interface {
	// Partition is called once a partition is assigned, before its
	// recovery; what it returns hears of that partition until Released.
	Partition(topic string, partition int32) PartitionObserver
	// BadRecord is called once per record errors.tolerance handled.
	BadRecord(topic string, partition int32, outcome BadRecordOutcome)
	// DeadLetterFailed is called for every dead-letter produce attempt that
	// failed or that the dead-letter wait cut short.
	DeadLetterFailed(topic string, err error)
	// Tombstone is called for each null value behavior.on.null.values ignores.
	Tombstone(topic string, partition int32)
}

// PartitionObserver hears of one assigned partition.
type PartitionObserver interface {
	// Entered is called on every state entry (the state machine of
	// docs/design.md §3), so it is on the hot path: keep it cheap.
	Entered(s State)
	// Written counts records appended to temp files, once per batch.
	Written(records int)
	// LogEnd is the partition's high watermark as the last fetch saw it.
	LogEnd(offset int64)
	// CommitStep times one step of a commit that went through it.
	CommitStep(step CommitStep, d time.Duration)
	// Committed is called after a commit's files carry their final names.
	Committed(c Commit)
	// Recovered is called after every recovery: next is the offset
	// consumption resumes at (-1: HDFS holds nothing, the start policy
	// decides), err why it failed (next is then meaningless).
	Recovered(next int64, err error)
	// Broken is called when a write fails and the partition waits for
	// recovery; Fenced when the failure was another owner's commit.
	Broken(err error)
	Fenced()
	// MemoryRotation is called for every rotation the memory ceiling forced.
	MemoryRotation()
	// Buffered is what the open files hold after a batch.
	Buffered(bytes int64, files int)
	// Released is called when the partition is revoked, lost or the
	// connector stops: nothing more is heard of it.
	Released()
}

// CommitStep is one step of the commit protocol (docs/design.md §4).
type CommitStep int

// The timed steps: close the temp files (durable), publish the WAL segment
// (the commit point, with its newest check), rename to the final names.
const (
	StepClose CommitStep = iota
	StepPublish
	StepRename
)

func (s CommitStep) String() string {
	return [...]string{"close", "wal_publish", "rename"}[s]
}

// Commit describes one commit that went through.
type Commit struct {
	Files   int
	Records int64
	Bytes   int64 // the files' size
	Next    int64 // the offset after the last one committed
	At      time.Time
}

// BadRecordOutcome is what errors.tolerance did with a bad record.
type BadRecordOutcome int

// DeadLettered: produced to the dead-letter topic. Skipped: tolerance all
// without a dead-letter topic. Failed: tolerance none (or the dead-letter
// topic refused it), which stops the connector.
const (
	BadRecordDeadLettered BadRecordOutcome = iota
	BadRecordSkipped
	BadRecordFailed
)

func (o BadRecordOutcome) String() string {
	return [...]string{"dead_lettered", "skipped", "failed"}[o]
}

// PanicError is a panic inside a connector, recovered and turned into that
// connector's failure: one connector's bug must not stop the others.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// recovered turns a recovered panic value into a *PanicError (nil for nil).
func recovered(v any) *PanicError {
	if v == nil {
		return nil
	}
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// nopObserver is the Observer of a connector nobody observes.
type nopObserver struct{}

func (nopObserver) Partition(string, int32) PartitionObserver { return nopPartition{} }
func (nopObserver) BadRecord(string, int32, BadRecordOutcome) {}
func (nopObserver) DeadLetterFailed(string, error)            {}
func (nopObserver) Tombstone(string, int32)                   {}
func (nopPartition) Entered(State)                            {}
func (nopPartition) Written(int)                              {}
func (nopPartition) LogEnd(int64)                             {}
func (nopPartition) CommitStep(CommitStep, time.Duration)     {}
func (nopPartition) Committed(Commit)                         {}
func (nopPartition) Recovered(int64, error)                   {}
func (nopPartition) Broken(error)                             {}
func (nopPartition) Fenced()                                  {}
func (nopPartition) MemoryRotation()                          {}
func (nopPartition) Buffered(int64, int)                      {}
func (nopPartition) Released()                                {}

type nopPartition struct{}
