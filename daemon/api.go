package daemon

import (
	"sort"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
)

// What the REST API (rest.Connectors) and an embedding program ask of a
// running daemon. Put and Delete, which change connector files, are in
// configdir.go.
var _ rest.Connectors = (*Daemon)(nil)

// Names lists the configured connectors, sorted.
func (d *Daemon) Names() []string {
	sups := d.supervisors()
	names := make([]string, 0, len(sups))
	for _, s := range sups {
		names = append(names, s.name)
	}
	return names
}

// Connector is one connector's configuration and state; false: no such
// connector.
func (d *Daemon) Connector(name string) (rest.Connector, bool) {
	s := d.supervisor(name)
	if s == nil {
		return rest.Connector{}, false
	}
	cs := d.board.get(name)
	_, paused := s.pauseState()
	return rest.Connector{Config: s.config(), State: connectState(cs.state, paused), Err: cs.err, Restarts: cs.restarts,
		NextRestart: cs.nextRestart, Partitions: d.metrics.Partitions(name),
		Completeness: cs.completeness.snapshot(), Compaction: cs.compaction.snapshot()}, true
}

// Pause stops the connector fetching (its partitions stay assigned), now
// and across restarts, until Resume. A stopped connector starts paused.
func (d *Daemon) Pause(name string) error { return d.setTarget(name, targetPaused) }

// Resume undoes Pause and Stop.
func (d *Daemon) Resume(name string) error { return d.setTarget(name, targetRunning) }

// Stop ends the connector's run gracefully (its partitions commit and
// leave the group) and starts none until Resume or Pause: Kafka Connect's
// STOPPED, the state in which its offsets may be changed. The target state
// lives in the process: a restarted process starts every connector.
func (d *Daemon) Stop(name string) error { return d.setTarget(name, targetStopped) }

func (d *Daemon) setTarget(name string, t targetState) error {
	s := d.supervisor(name)
	if s == nil {
		return rest.ErrNotFound
	}
	if s.gaveUp() != nil && t == targetStopped {
		d.revive(s.config(), t) // its loop has ended: a new one, halted at once
		return nil
	}
	s.setTarget(t)
	return nil
}

// Restart ends the connector's run gracefully (its partitions commit and
// leave the group) and starts it again at once; a connector the restart
// policy gave up on gets a new supervisor. A stopped connector stays
// stopped: its next run is at Resume.
func (d *Daemon) Restart(name string) error {
	s := d.supervisor(name)
	if s == nil {
		return rest.ErrNotFound
	}
	if s.gaveUp() != nil {
		d.revive(s.config(), s.targetState()) // the policy gave up: a new supervisor
	} else {
		s.requestRestart(nil)
	}
	return nil
}

// NotReady says why the daemon is not ready: a connector that is not
// running (or paused), or whose last check did not reach a dependency.
func (d *Daemon) NotReady() []string { return d.board.notReady() }

// Redactor hides the secrets of the files loaded last.
func (d *Daemon) Redactor() *secret.Redactor { return d.board.redactor() }

// Worker is the worker settings the files were loaded with (nil: none).
func (d *Daemon) Worker() *configs.Worker { return d.board.loadedWorker() }

// supervisors lists the configured connectors by name.
func (d *Daemon) supervisors() []*supervisor {
	d.mu.Lock()
	out := make([]*supervisor, 0, len(d.sups))
	for _, s := range d.sups {
		out = append(out, s)
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
