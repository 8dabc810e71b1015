package wiring

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hdfs-sink/hdfs-sink/compact"
	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// CompactionSettings are what `hdfs-sink compact` takes from its flags.
type CompactionSettings struct {
	TargetBytes   int64
	RowGroupBytes int64 // Parquet outputs' row groups; 0: compact.DefaultRowGroupBytes
	MinAge        time.Duration
	Grace         time.Duration
	AtStep        func(step string) // compact.Options.AtStep
	// DialHive connects to the metastore (the daemon's dialer); nil:
	// hive.Dial with the connector's options.
	DialHive func(ctx context.Context, uris string) (hive.Metastore, error)
}

// Compactor wires the compaction of one topic of connector c: its store
// paths, format and pad width, the fence (a claim in each partition's WAL
// under the connector's name) and the Hive switch. A connector without
// hive.integration, or writing neither Avro nor Parquet, is refused
// (docs/design.md §12).
func Compactor(c *configs.Connector, store storage.FS, ws sink.WriteSettings, topic string, logins *kerberos.Logins, s CompactionSettings, log *slog.Logger) (*compact.Compactor, error) {
	ext := ".avro"
	switch c.Format {
	case configs.FormatAvro:
	case configs.FormatParquet:
		ext = ".parquet"
	default:
		return nil, fmt.Errorf("connector %q: format %s: compaction merges Avro and Parquet files only", c.Name, c.Format)
	}
	if !c.Hive.Enabled {
		return nil, fmt.Errorf("connector %q: hive.integration is false: compaction switches readers through the Hive partition's location, and without it readers could see a record twice (docs/design.md §12)", c.Name)
	}
	cat, err := compactionCatalog(c, ws.Partitioner, logins, s.DialHive)
	if err != nil {
		return nil, err
	}
	return compact.New(compact.Options{
		FS: store, Topic: TopicLayout(c, topic),
		Ext: ext, Pad: c.OffsetPadWidth, TargetBytes: s.TargetBytes, RowGroupBytes: s.RowGroupBytes, MinAge: s.MinAge, Grace: s.Grace,
		Fence: func(ctx context.Context, p int32) error {
			_, err := sink.FenceForCompaction(ctx, ws, c.Name, topic, p, log)
			return err
		},
		Catalog: cat, Logger: log, AtStep: s.AtStep,
	}), nil
}

// metastoreCatalog switches a topic's Hive partitions, one connection per
// switch (a compaction makes one per directory).
type metastoreCatalog struct {
	c     *configs.Connector
	uris  string
	opts  []hive.Option
	part  partitioner.Partitioner
	store string
	dial  func(ctx context.Context, uris string) (hive.Metastore, error) // nil: hive.Dial
}

// partitionLocations is what a metastore needs to switch a partition:
// hive.Client has it, the syncer's narrower Metastore does not.
type partitionLocations interface {
	SetPartitionLocation(ctx context.Context, db, table string, values []string, location string) error
}

func compactionCatalog(c *configs.Connector, part partitioner.Partitioner, logins *kerberos.Logins, dial func(context.Context, string) (hive.Metastore, error)) (*metastoreCatalog, error) {
	target, err := hiveTargetOf(c)
	if err != nil {
		return nil, err
	}
	opts, err := HiveDialOptions(c, logins)
	if err != nil {
		return nil, err
	}
	return &metastoreCatalog{c: c, uris: target.uris, opts: opts, part: part, store: storeURI(c), dial: dial}, nil
}

func (m *metastoreCatalog) SetLocation(ctx context.Context, topic, encoded, location string) error {
	values, err := m.part.Values(encoded)
	if err != nil {
		return fmt.Errorf("directory %s cannot be a Hive partition: %w", encoded, err)
	}
	client, err := m.connect(ctx)
	if err != nil {
		return err
	}
	defer client.Close()
	pl, ok := client.(partitionLocations)
	if !ok {
		return fmt.Errorf("the metastore client %T cannot set a partition's location", client)
	}
	return pl.SetPartitionLocation(ctx, m.c.Hive.Database, m.c.HiveTable(topic), values, m.store+location)
}

func (m *metastoreCatalog) connect(ctx context.Context) (hive.Metastore, error) {
	if m.dial != nil {
		return m.dial(ctx, m.uris)
	}
	client, err := hive.Dial(ctx, m.uris, m.opts...)
	if err != nil {
		return nil, err
	}
	return client, nil
}
