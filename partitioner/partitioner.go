// Package partitioner owns how a record maps to an output directory below
// <topics.dir>/<topic>/ (the reference's "encoded partition"), and the Hive
// partition columns that directory stands for.
package partitioner

import "strconv"

// Record is what a partitioner may look at.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp int64 // Kafka record timestamp, epoch milliseconds
}

// Partitioner encodes a record's output directory, e.g. "partition=3".
type Partitioner interface {
	Encode(r Record) (string, error)
	// Fields are the Hive partition columns the encoded path carries.
	Fields() []string
}

// Default writes each Kafka partition to "partition=<n>", as the reference's
// DefaultPartitioner does.
type Default struct{}

// Encode returns "partition=<n>".
func (Default) Encode(r Record) (string, error) {
	return "partition=" + strconv.Itoa(int(r.Partition)), nil
}

// Fields is the single column "partition".
func (Default) Fields() []string { return []string{"partition"} }
