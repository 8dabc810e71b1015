package sink

import (
	"errors"
	"fmt"
)

// ErrFenced means another owner claimed the partition after we did: this
// process must not commit it again until it recovers it anew.
var ErrFenced = errors.New("fenced: another owner claimed the partition")

// errCommittedFileMissing: neither the temp file nor the final file of a
// committed move exists.
var errCommittedFileMissing = errors.New("committed file missing: neither its temp file nor its final file exists")

// RewindError says that Kafka handed a partition offsets at or below what
// HDFS already holds: the topic was deleted and re-created, or its log was
// truncated (an unclean leader election). The sink's own start position is
// always past the committed offset, so only a reset by Kafka gets there.
// The partition writes nothing until an operator decides (docs/operations.md).
type RewindError struct {
	Topic                   string
	Partition               int32
	Committed               int64 // highest offset HDFS holds
	Offset                  int64 // the offset Kafka returned
	LogStart, HighWatermark int64 // the partition's log as the fetch saw it; -1: unknown
}

func (e *RewindError) Error() string {
	return fmt.Sprintf("topic %s partition %d: Kafka's offsets went below what HDFS holds: HDFS has committed up to offset %d, "+
		"Kafka returned offset %d (log start %d, high watermark %d); the topic was re-created or its log truncated. "+
		"Nothing more is written for this partition until an operator resets it (docs/operations.md, \"Kafka offsets below HDFS\")",
		e.Topic, e.Partition, e.Committed, e.Offset, e.LogStart, e.HighWatermark)
}
