package wiring

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hdfs-sink/hdfs-sink/completeness"
	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// MarkerDeps is what a connector's completeness markers reach.
type MarkerDeps struct {
	Store storage.FS
	// LogEnds are the log end offsets of the connector's topics
	// (sink.Connector.LogEnds).
	LogEnds func(ctx context.Context) (map[string]map[int32]int64, error)
	// DialHive connects to the connector's metastore (nil: no Hive).
	DialHive func(ctx context.Context, uris string) (hive.Metastore, error)
	// Marked hears of each directory marked, by topic (the metric).
	Marked func(topic, encoded string)
	// Faults is called at each marking step (nil: none).
	Faults func(completeness.Step)
	Log    *slog.Logger
}

// CompletenessMarkers wires hdfs.sink.completeness.*: a function giving
// the marker of each topic, nil when completeness is off.
func CompletenessMarkers(c *configs.Connector, d MarkerDeps) (func(topic string) (*completeness.Marker, error), error) {
	if !c.Completeness.Enabled {
		return nil, nil
	}
	part, err := OutputPartitioner(c)
	if err != nil {
		return nil, err
	}
	timed, ok := part.(partitioner.Timed)
	if !ok { // configs refuses this; a guard, not a path
		return nil, fmt.Errorf("connector %q (%s): hdfs.sink.completeness.enabled needs a time-based partitioner", c.Name, c.Source)
	}
	var catalog completeness.Catalog
	if c.Hive.Enabled && d.DialHive != nil {
		target, err := hiveTargetOf(c)
		if err != nil {
			return nil, err
		}
		catalog = hiveCatalog{c: c, part: part, uris: target.uris, dial: d.DialHive}
	}
	log := d.Log.With("connector", c.Name)
	return func(topic string) (*completeness.Marker, error) {
		return completeness.NewMarker(completeness.Config{
			FS: d.Store, Layout: TopicLayout(c, topic),
			Partitioner: timed, Lateness: c.Completeness.Lateness, Lookback: c.Completeness.Lookback,
			MarkerName: c.Completeness.MarkerName,
			// The marker asks by its layout's (routed) name; Kafka knows the
			// consumed topic.
			LogEnds: func(ctx context.Context, _ string) (map[int32]int64, error) {
				ends, err := d.LogEnds(ctx)
				if err != nil {
					return nil, err
				}
				return ends[topic], nil
			},
			Catalog: catalog, Logger: log,
			Marked: func(encoded string) { d.Marked(topic, encoded) },
			Faults: d.Faults,
		}), nil
	}, nil
}

// hiveCatalog sets the completeness parameter of a Hive partition. It
// dials for each marking: markings are rare (one per directory), and the
// syncer's connection is its own goroutine's.
type hiveCatalog struct {
	c    *configs.Connector
	part partitioner.Partitioner
	uris string
	dial func(ctx context.Context, uris string) (hive.Metastore, error)
}

// partitionParams is what a metastore needs to set partition parameters:
// hive.Client has it, the syncer's narrower Metastore does not.
type partitionParams interface {
	SetPartitionParams(ctx context.Context, db, table string, values []string, params map[string]string) error
}

func (h hiveCatalog) MarkComplete(ctx context.Context, topic, encoded string, params map[string]string) error {
	values, err := h.part.Values(encoded)
	if err != nil {
		return fmt.Errorf("Hive partition values of %s: %w", encoded, err)
	}
	ms, err := h.dial(ctx, h.uris)
	if err != nil {
		return err
	}
	defer ms.Close()
	pp, ok := ms.(partitionParams)
	if !ok {
		return fmt.Errorf("the metastore client %T cannot set partition parameters", ms)
	}
	return pp.SetPartitionParams(ctx, h.c.Hive.Database, h.c.HiveTable(topic), values, params)
}
