// Package metrics is the daemon's view of what its connectors do: a
// sink.Observer that keeps, per owned partition, its state, committed
// offset, log end and last error (what GET /connectors/<n>/status shows)
// and exports them, with counters and commit latency histograms, to
// Prometheus on a registry of its own. docs/metrics.md lists every name.
// sink never reads any of it back.
package metrics

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// Namespace prefixes every metric of hdfs-sink's own.
const Namespace = "hdfs_sink"

// Labels of the per-partition series.
var partLabels = []string{"connector", "topic", "partition"}

// Metrics holds the registry and the series of every connector.
type Metrics struct {
	reg  *prometheus.Registry
	vec  vectors
	comp completenessVecs
	cmp  compactionVecs

	mu     sync.Mutex
	parts  map[partKey]*Partition
	conns  map[string]*connSources
	states func() map[string]string

	memCeiling, memGoLimit atomic.Int64
}

// New registers the process's collectors (Go runtime, process, build
// info) and hdfs-sink's own on a new registry. version is the binary's.
func New(version string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), vec: newVectors(), comp: newCompletenessVecs(), cmp: newCompactionVecs(), parts: map[partKey]*Partition{}, conns: map[string]*connSources{}}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector())
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help: "Always 1; the labels say which hdfs-sink runs."}, []string{"version"})
	build.WithLabelValues(version).Set(1)
	m.reg.MustRegister(build, &scrapeCollector{m: m})
	m.vec.register(m.reg)
	for _, v := range append(m.comp.vecs(), m.cmp.vecs()...) {
		m.reg.MustRegister(v)
	}
	return m
}

// Handler serves the Prometheus text format of everything registered.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(linted{m.reg}, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// linted drops the "_total" suffix of gauges: kprom names its buffered
// records gauges *_records_total, which promtool check metrics (rightly)
// refuses, and the names in docs/metrics.md are the fixed ones.
type linted struct{ prometheus.Gatherer }

func (l linted) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := l.Gatherer.Gather()
	for _, mf := range mfs {
		if mf.GetType() == dto.MetricType_GAUGE && strings.HasSuffix(mf.GetName(), "_total") {
			mf.Name = proto.String(strings.TrimSuffix(mf.GetName(), "_total"))
		}
	}
	return mfs, err
}

// Registerer is where more collectors go (franz-go's kprom): one that
// replaces a collector registered before under the same descriptors rather
// than panicking, because a restarted connector registers its client's
// metrics again.
func (m *Metrics) Registerer() prometheus.Registerer { return replacing{m.reg} }

// replacing is a Registerer whose MustRegister replaces what collides.
type replacing struct{ *prometheus.Registry }

func (r replacing) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
				r.Unregister(are.ExistingCollector)
				r.Registry.MustRegister(c)
				continue
			}
			panic(err)
		}
	}
}
