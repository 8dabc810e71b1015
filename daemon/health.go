package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// healthCheck asks, every healthEvery while its connector runs, whether
// Kafka, the registry and the store answer. Its results are readiness
// (/readyz) and dependency_up; the log ends it reads are lag that keeps
// growing while nothing is fetched.
type healthCheck struct {
	every   time.Duration
	metrics *metrics.Metrics
	board   *statusBoard
	c       *configs.Connector
	conn    *sink.Connector
	reg     schema.Registry
	store   storage.FS
}

// checkTimeout bounds each dependency's answer.
const checkTimeout = 5 * time.Second

func (h *healthCheck) run(ctx context.Context) {
	for {
		h.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(h.every):
		}
	}
}

func (h *healthCheck) once(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, checkTimeout)
	defer cancel()
	ends, err := h.conn.LogEnds(ctx)
	if parent.Err() != nil {
		return // stopping: not an outage
	}
	h.metrics.SetLogEnds(h.c.Name, ends)
	h.board.setDep(h.c.Name, depKafka, err)
	h.board.setDep(h.c.Name, depRegistry, h.pingRegistry(ctx))
	h.board.setDep(h.c.Name, depStore, h.statStore(ctx))
}

// pingRegistry asks the registry client whether it answers; any other
// registry (the in-memory one of tests) counts as reachable.
func (h *healthCheck) pingRegistry(ctx context.Context) error {
	if p, ok := h.reg.(*registry.Client); ok {
		return p.Ping(ctx)
	}
	return nil
}

// statStore stats the store URL's path: a NameNode round trip, waited for
// checkTimeout (the store gives up waiting when ctx ends, and fails no
// other call for it: the connector's own calls go on).
func (h *healthCheck) statStore(ctx context.Context) error {
	_, err := h.store.Stat(ctx, h.c.Store.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // the store answered; the path appears with the first commit
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("store did not answer within %v", checkTimeout)
	}
	return err
}

// kafkaMetrics is franz-go's kprom plugin for one connector's client, its
// series labelled with the connector (client ids can be overridden, and
// may collide).
func kafkaMetrics(name string, m *metrics.Metrics) kgo.Opt {
	return kgo.WithHooks(kprom.NewMetrics(metrics.Namespace, kprom.Subsystem("kafka"), kprom.Registerer(m.Registerer()),
		kprom.WithStaticLabel(map[string]string{"connector": name})))
}
