package sink

import (
	"encoding/base64"
	"errors"
	"fmt"
)

// ErrFenced means another owner claimed the partition after we did: this
// process must not commit it again until it recovers it anew.
var ErrFenced = errors.New("fenced: another owner claimed the partition")

// ErrFencedByCompaction, with ErrFenced, says the claim that fenced us was
// a compaction's (FenceForCompaction): it never commits after its claim,
// so the partition is recovered at once rather than after the 30 s a
// fence by another owner waits for a rebalance (docs/design.md §12).
var ErrFencedByCompaction = errors.New("by a compaction's fence")

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

// TopicChangedError says that the records Kafka hands out belong to another
// topic of the same name than those HDFS holds: the topic was deleted and
// re-created (KIP-516 topic ids differ). Its offsets say nothing about what
// is committed, whether the new log is shorter or longer.
type TopicChangedError struct {
	Topic     string
	Partition int32
	Committed int64    // highest offset HDFS holds of the old topic
	Was, Now  [16]byte // the committed topic id and the fetched one
	Offset    int64    // the first offset fetched
}

func (e *TopicChangedError) Error() string {
	return fmt.Sprintf("topic %s partition %d: the topic was deleted and re-created: HDFS holds offsets up to %d of topic id %s, "+
		"Kafka now returns topic id %s (first offset %d). Its offsets say nothing about what is committed: "+
		"nothing more is written for this partition until an operator resets it (docs/operations.md, \"Kafka offsets below HDFS\")",
		e.Topic, e.Partition, e.Committed, topicIDString(e.Was), topicIDString(e.Now), e.Offset)
}

// TruncatedError says that Kafka's log diverged at or below the committed
// offset (an unclean leader election): franz-go found it by the leader
// epoch of the last committed record (KIP-320).
type TruncatedError struct {
	Topic     string
	Partition int32
	Committed int64 // highest offset HDFS holds
	DivergeAt int64 // the first offset the log no longer holds as it was
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("topic %s partition %d: Kafka's log was truncated below what HDFS holds (an unclean leader election?): "+
		"HDFS has committed up to offset %d, the log now diverges from offset %d. Nothing more is written for this partition until an operator resets it "+
		"(docs/operations.md, \"Kafka offsets below HDFS\")", e.Topic, e.Partition, e.Committed, e.DivergeAt)
}

// RefusedError says that the partition's WAL holds a refusal: an owner
// found that Kafka's log no longer continues what HDFS holds, and no
// operator has reset the partition since. Every owner, in any process and
// after any restart, stays refused until `hdfs-sink offsets reset`
// publishes a claim without the refusal (decision D15).
type RefusedError struct {
	Topic     string
	Partition int32
	Seq       uint64 // the claim carrying the refusal
	Reason    string // what the owner that refused found
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("topic %s partition %d is refused until an operator resets it (WAL segment %d; hdfs-sink offsets reset, docs/operations.md): %s",
		e.Topic, e.Partition, e.Seq, e.Reason)
}

// OverlapError says that another connector writes the partition's WAL: two
// connectors writing one topic into the same directories would fence each
// other forever, or overwrite each other's files.
type OverlapError struct {
	Topic     string
	Partition int32
	Dir       string // the WAL directory
	Owner     string // the connector named in the WAL head
	Connector string // this connector
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("topic %s partition %d: the WAL in %s belongs to connector %q, not %q: two connectors must not write one topic into the same logs.dir "+
		"(give each its own topics.dir and logs.dir). If %q was renamed to %q and no longer runs, hand the partition over with "+
		"hdfs-sink offsets reset --connector %s --topic %s --partition %d --to committed --take-over --yes",
		e.Topic, e.Partition, e.Dir, e.Owner, e.Connector, e.Owner, e.Connector, e.Connector, e.Topic, e.Partition)
}

// isRefusal reports whether err means Kafka's log no longer continues
// what HDFS holds: the partition must be refused until an operator acts.
func isRefusal(err error) bool {
	var (
		rewind    *RewindError
		changed   *TopicChangedError
		truncated *TruncatedError
		refused   *RefusedError
	)
	return errors.As(err, &rewind) || errors.As(err, &changed) || errors.As(err, &truncated) || errors.As(err, &refused)
}

// topicIDString prints a topic id as Kafka's tools do (base64 URL encoding
// without padding); "unknown" for the zero id.
func topicIDString(id [16]byte) string {
	if id == ([16]byte{}) {
		return "unknown"
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}
