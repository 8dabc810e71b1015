package daemon

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
)

// The rest of Kafka Connect's API the daemon answers (rest.Operations):
// create and patch (through Put, as PUT …/config writes), the worker's
// health, the Kafka cluster id, the loggers (their levels and handler are
// in loggers.go). The offsets are in offsets.go.

// initialStates are POST /connectors' initial_state values.
var initialStates = map[string]targetState{"RUNNING": targetRunning, "PAUSED": targetPaused, "STOPPED": targetStopped}

// Create is POST /connectors: the connector's file is staged and written
// as Put writes it (the worker under it), and it starts in the initial
// target state. A connector of that name, running or only written, is a
// *rest.ConflictError.
func (d *Daemon) Create(name string, config io.Reader, initial string) (*configs.Connector, error) {
	d.edits.Lock()
	defer d.edits.Unlock()
	if d.exists(name) {
		return nil, &rest.ConflictError{Err: fmt.Errorf("Connector %s already exists", name)}
	}
	cfg, err := decodeConfig(config, name)
	if err != nil {
		return nil, &rest.ConfigError{Messages: []string{err.Error()}}
	}
	f, err := d.stage(name, cfg)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.initial[name] = initialStates[initial]
	d.mu.Unlock()
	if err := d.write(f); err != nil {
		d.mu.Lock()
		delete(d.initial, name)
		d.mu.Unlock()
		return nil, err
	}
	return f.conn, nil
}

// exists reports a connector that runs, or whose file is written and not
// loaded yet.
func (d *Daemon) exists(name string) bool {
	if d.supervisor(name) != nil {
		return true
	}
	if !safeName(name) {
		return false // stage refuses it
	}
	_, err := os.Stat(filepath.Join(d.files.Config, name+".json"))
	return err == nil
}

// Patch is PATCH /connectors/<name>/config: the keys given are set (a nil
// value removes one) in the config as the connector's file states it
// (Connector.Written), so that a ${…} reference stays a reference, and the
// result is staged and written as Put writes it.
func (d *Daemon) Patch(name string, patch map[string]*string) (*configs.Connector, error) {
	d.edits.Lock()
	defer d.edits.Unlock()
	s := d.supervisor(name)
	if s == nil {
		return nil, rest.ErrNotFound
	}
	cfg := map[string]any{}
	for k, v := range s.config().Written {
		cfg[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = *v
		}
	}
	if n, ok := cfg["name"]; ok && n != name {
		return nil, &rest.ConfigError{Messages: []string{fmt.Sprintf("the config's name %v is not the connector's name %s", n, name)}}
	}
	cfg["name"] = name
	f, err := d.stage(name, cfg)
	if err != nil {
		return nil, err
	}
	if err := d.write(f); err != nil {
		return nil, err
	}
	return f.conn, nil
}

// Health is KIP-1017's worker health: healthy once the daemon's loop
// (which starts connectors and applies reloads) runs and answers within
// ctx; starting before; unhealthy when it does not answer or the daemon
// is shutting down.
func (d *Daemon) Health(ctx context.Context) rest.Health {
	d.mu.Lock()
	runCtx := d.runCtx
	d.mu.Unlock()
	switch {
	case runCtx == nil:
		return rest.Health{Status: rest.Starting, Message: "the daemon is starting: its connectors are not started yet"}
	case runCtx.Err() != nil:
		return rest.Health{Status: rest.Unhealthy, Message: "the daemon is shutting down"}
	}
	select {
	case d.pings <- struct{}{}:
		return rest.Health{Status: rest.Healthy, Message: "the daemon has started its connectors and answers requests"}
	case <-ctx.Done():
		return rest.Health{Status: rest.Unhealthy, Message: "the daemon's loop did not answer in time: a reload or a connector's stop is taking long, or it is stuck (see its log)"}
	}
}

// KafkaClusterID is the id of the cluster every connector reads, as each
// connector's cluster said once it was reachable; "" while one is not
// known yet, or when the connectors read different clusters (there is
// then no one id to give).
func (d *Daemon) KafkaClusterID() string {
	id := ""
	for _, s := range d.supervisors() {
		d.mu.Lock()
		known, ok := d.clusterIDs[bootstrapKey(s.config())]
		d.mu.Unlock()
		if !ok || (id != "" && known != id) {
			return ""
		}
		id = known
	}
	return id
}

// errNotStopped is an offsets change while the connector is not halted.
func errNotStopped(name string) error {
	return &rest.BadRequestError{Err: fmt.Errorf("connector %s is not STOPPED: a connector must be STOPPED before its offsets can be changed "+
		"(PUT /connectors/%s/stop, then wait for the STOPPED state)", name, name)}
}

// Loggers are the process's loggers with their levels: root and one per
// connector (GET /admin/loggers).
func (d *Daemon) Loggers() map[string]rest.LoggerLevel { return d.levels.loggers(d.Names()) }

// LoggerLevel is one logger's level; false: no such logger (a connector
// logger exists while its connector is configured, or once set).
func (d *Daemon) LoggerLevel(name string) (rest.LoggerLevel, bool) {
	l, ok := d.Loggers()[name]
	return l, ok
}

// SetLoggerLevel sets a logger's level (PUT /admin/loggers/<name>) and
// names the loggers it changed. A connector's logger may be set before the
// connector is added.
func (d *Daemon) SetLoggerLevel(name, level string) ([]string, error) {
	changed, err := d.levels.set(name, level, d.Names())
	if err == nil {
		d.log.Info("log level set", "logger", name, "level", strings.ToUpper(level), "changed", changed)
	}
	return changed, err
}
