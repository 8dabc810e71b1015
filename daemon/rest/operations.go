package rest

import (
	"context"
	"errors"
	"io"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// Operations are what the API asks of the daemon beyond reading and
// writing connector files: Kafka Connect's stop and create, a change of
// some config keys, the offsets (KIP-875), the worker's health (KIP-1017)
// and its loggers (KIP-495).
type Operations interface {
	// Stop ends the connector's run gracefully (its partitions commit and
	// leave the group) and starts none until Resume or Pause: STOPPED.
	Stop(name string) error
	// Create writes a new connector's file as Put does; a connector of
	// that name already there is a *ConflictError. initial is its target
	// state: RUNNING, PAUSED or STOPPED.
	Create(name string, config io.Reader, initial string) (*configs.Connector, error)
	// Patch changes some keys of the connector's config as its file
	// states them (a nil value removes the key) and writes it as Put does.
	Patch(name string, patch map[string]*string) (*configs.Connector, error)

	// Offsets is where each partition with a committed offset resumes,
	// sorted by topic and partition.
	Offsets(ctx context.Context, name string) ([]PartitionOffset, error)
	// AlterOffsets moves the partitions given; ResetOffsets forgets every
	// partition's committed offset. Both are refused with a
	// *BadRequestError unless the connector is STOPPED, and refuse a
	// partition or an offset the connector's reset checks refuse.
	AlterOffsets(ctx context.Context, name string, offsets []PartitionOffset) error
	ResetOffsets(ctx context.Context, name string) error

	// Health answers within ctx, or says why not.
	Health(ctx context.Context) Health
	// KafkaClusterID is the id of the Kafka cluster every connector
	// reads; "" when it is not known or they read several.
	KafkaClusterID() string

	// Loggers are the process's loggers with their levels.
	Loggers() map[string]LoggerLevel
	// LoggerLevel is one logger's level; false: no such logger.
	LoggerLevel(name string) (LoggerLevel, bool)
	// SetLoggerLevel sets logger name and those below it to level (a
	// log4j level name: OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE, ALL)
	// and names the loggers it changed. ErrNoLogger: no logger of that
	// name can be set; a *LevelError: no such level.
	SetLoggerLevel(name, level string) ([]string, error)
}

// PartitionOffset is one partition's offset as KIP-875 shows a sink
// connector's: Next is where it resumes (Connect's kafka_offset, the next
// offset to write). In a change, a nil Next forgets the committed offset:
// the partition starts where consumer.auto.offset.reset says.
type PartitionOffset struct {
	Topic     string
	Partition int32
	Next      *int64
}

// Health is KIP-1017's worker status: Status is healthy, starting or
// unhealthy; Message says why.
type Health struct{ Status, Message string }

// The Health statuses.
const (
	Healthy   = "healthy"
	Starting  = "starting"
	Unhealthy = "unhealthy"
)

// LoggerLevel is Connect's LoggerLevel: a log4j level name, and when it
// was last set through the API (Unix milliseconds; nil: never).
type LoggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

// ErrNoLogger is a logger name the process has no logger for.
var ErrNoLogger = errors.New("no such logger")

// LevelError is a level name that is not a log4j level.
type LevelError struct{ Level string }

func (e *LevelError) Error() string { return "invalid log level '" + e.Level + "'" }

// ConflictError is a change that collides with what is there (409), such
// as creating a connector that exists.
type ConflictError struct{ Err error }

func (e *ConflictError) Error() string { return e.Err.Error() }
func (e *ConflictError) Unwrap() error { return e.Err }

// BadRequestError is a request the daemon refuses as it stands (400):
// offsets changed while the connector runs, a reset its checks refuse.
type BadRequestError struct{ Err error }

func (e *BadRequestError) Error() string { return e.Err.Error() }
func (e *BadRequestError) Unwrap() error { return e.Err }
