package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
)

// The rest of Kafka Connect's API the daemon answers (rest.Operations):
// create and patch (through Put, as PUT …/config writes), the worker's
// health, the Kafka cluster id. The offsets are in offsets.go, the
// loggers in loggers.go.

// initialStates are POST /connectors' initial_state values.
var initialStates = map[string]targetState{"RUNNING": targetRunning, "PAUSED": targetPaused, "STOPPED": targetStopped}

// Create is POST /connectors: the connector's file is written as Put
// writes it, and it starts in the initial target state. A connector of
// that name, running or only written, is a *rest.ConflictError.
func (d *Daemon) Create(name string, config io.Reader, initial string) (*configs.Connector, error) {
	d.edits.Lock()
	defer d.edits.Unlock()
	if d.exists(name) {
		return nil, &rest.ConflictError{Err: fmt.Errorf("Connector %s already exists", name)}
	}
	d.mu.Lock()
	d.initial[name] = initialStates[initial]
	d.mu.Unlock()
	c, _, err := d.Put(name, config)
	if err != nil {
		d.mu.Lock()
		delete(d.initial, name)
		d.mu.Unlock()
		return nil, err
	}
	return c, nil
}

// exists reports a connector that runs, or whose file is written and not
// loaded yet.
func (d *Daemon) exists(name string) bool {
	if d.supervisor(name) != nil {
		return true
	}
	if !safeName(name) {
		return false // Put refuses it
	}
	_, err := os.Stat(filepath.Join(d.files.Config, name+".json"))
	return err == nil
}

// Patch is PATCH /connectors/<name>/config: the keys given are set (a nil
// value removes one) in the config as the connector's file states it, so
// that a ${…} reference stays a reference, and the result is written as
// Put writes it.
func (d *Daemon) Patch(name string, patch map[string]*string) (*configs.Connector, error) {
	d.edits.Lock()
	defer d.edits.Unlock()
	s := d.supervisor(name)
	if s == nil {
		return nil, rest.ErrNotFound
	}
	src := s.config().Source
	data, err := os.ReadFile(src)
	if err != nil {
		return nil, fmt.Errorf("connector %s: read its file: %w", name, err)
	}
	cfg, err := configs.Written(src, data, name)
	if err != nil {
		return nil, err
	}
	for k, v := range patch {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = *v
		}
	}
	body, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	c, _, err := d.Put(name, bytes.NewReader(body))
	return c, err
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

// learnClusterID asks connector c's cluster for its id once per process
// (per bootstrap.servers), with the connector's security settings, right
// after Kafka answered the readiness probe. A failure only leaves the id
// unknown.
func (d *Daemon) learnClusterID(ctx context.Context, c *configs.Connector, sec *kafkaclient.Security) {
	key := bootstrapKey(c)
	d.mu.Lock()
	_, known := d.clusterIDs[key]
	d.mu.Unlock()
	if known {
		return
	}
	log := d.log.With("connector", c.Name)
	cl, err := kgo.NewClient(append(sec.Opts(log), kgo.SeedBrokers(c.Consumer.BootstrapServers...), kgo.ClientID("hdfs-sink-"+c.Name),
		kgo.RequestRetries(1))...)
	if err != nil {
		log.Debug("Kafka cluster id not asked", "err", err)
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil || md.Cluster == "" {
		log.Debug("Kafka cluster id not known", "err", err)
		return
	}
	d.mu.Lock()
	d.clusterIDs[key] = md.Cluster
	d.mu.Unlock()
}

// bootstrapKey names a connector's cluster by its bootstrap servers.
func bootstrapKey(c *configs.Connector) string {
	servers := append([]string(nil), c.Consumer.BootstrapServers...)
	sort.Strings(servers)
	return strings.Join(servers, ",")
}

// errNotStopped is an offsets change while the connector is not halted.
func errNotStopped(name string) error {
	return &rest.BadRequestError{Err: fmt.Errorf("connector %s is not STOPPED: a connector must be STOPPED before its offsets can be changed "+
		"(PUT /connectors/%s/stop, then wait for the STOPPED state)", name, name)}
}
