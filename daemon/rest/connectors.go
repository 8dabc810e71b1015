package rest

import (
	"errors"
	"io"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/metrics"
)

// Connectors is what the API asks of the daemon that runs the connectors.
// Its methods are called concurrently.
type Connectors interface {
	// Names lists the configured connectors, sorted.
	Names() []string
	// Connector is one connector's configuration and state; false: there
	// is no such connector.
	Connector(name string) (Connector, bool)
	// Pause and Resume set the connector's target state, kept across
	// restarts; ErrNotFound: no such connector.
	Pause(name string) error
	Resume(name string) error
	// Restart ends the connector's run gracefully and starts it again, or
	// starts anew one the restart policy gave up on.
	Restart(name string) error
	// Put writes connector name's file from body (a JSON object of config
	// keys), checked with the other files as a reload would load them, and
	// reloads. created: the connector is new. A refusal is a
	// *ConfigError or a *ForbiddenError.
	Put(name string, body io.Reader) (c *configs.Connector, created bool, err error)
	// Delete removes connector name's file and reloads, which stops it.
	Delete(name string) error
	// NotReady says why the daemon is not ready; empty: it is.
	NotReady() []string
	// Redactor hides the secrets of the files loaded last; Worker is the
	// worker settings they were loaded with (nil: none).
	Redactor() *secret.Redactor
	Worker() *configs.Worker
	// Operations are the rest of Connect's API (operations.go).
	Operations
}

// Connector is one connector as the API shows it.
type Connector struct {
	Config *configs.Connector
	// State is Kafka Connect's: RUNNING, PAUSED, RESTARTING, FAILED,
	// STOPPED or UNASSIGNED.
	State       string
	Err         error // why it failed; nil: it did not
	Restarts    int
	NextRestart time.Time // when a failed connector starts again; zero: not waiting
	Partitions  []metrics.PartitionView
	// Completeness and Compaction are, by topic, the partition lifecycle
	// this daemon judges and compacts (lifecycle.go); nil: none here.
	Completeness map[string]CompletenessStatus
	Compaction   map[string]CompactionStatus
}

// ErrNotFound is a Connectors error for a connector that is not there.
var ErrNotFound = errors.New("no such connector")

// ConfigError is a connector config the daemon refused (400); Messages
// are the reasons, secrets hidden.
type ConfigError struct{ Messages []string }

func (e *ConfigError) Error() string { return strings.Join(e.Messages, "\n") }

// ForbiddenError is a change the daemon cannot make here (403), such as
// writing connector files it cannot write.
type ForbiddenError struct{ Err error }

func (e *ForbiddenError) Error() string { return e.Err.Error() }
func (e *ForbiddenError) Unwrap() error { return e.Err }
