package wiring

import (
	"context"
	"log/slog"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// HiveSyncer wires hive.integration: nil when it is off. dial connects to
// hive.metastore.uris (from the connector file, else hive-site.xml).
func HiveSyncer(c *configs.Connector, store storage.FS, part partitioner.Partitioner,
	dial func(ctx context.Context, uris string) (hive.Metastore, error), log *slog.Logger) (*hive.Syncer, error) {
	if !c.Hive.Enabled {
		return nil, nil
	}
	target, err := hiveTargetOf(c)
	if err != nil {
		return nil, err
	}
	format := hive.FormatAvro
	if c.Format == configs.FormatParquet {
		format = hive.FormatParquet
	}
	uris := target.uris
	return hive.NewSyncer(hive.SyncConfig{
		Database: c.Hive.Database, Format: format, Backoff: c.RetryBackoff,
		Logger: log.With("connector", c.Name),
		Connect: func(ctx context.Context) (hive.Metastore, error) {
			return dial(ctx, uris)
		},
		Tables: func(topic string) hive.TopicTable {
			t := layout.Topic{TopicsDir: c.TopicsDir(topic), Name: topic}
			return hive.TopicTable{
				Name: c.HiveTable(topic), Location: storeURI(c) + t.Dir(), PartitionKeys: part.Fields(),
				Values:   part.Values,
				ListDirs: func(ctx context.Context) ([]string, error) { return committedDirs(ctx, store, t) },
			}
		},
	}), nil
}

// DialHive connects to a metastore of uris.
func DialHive(ctx context.Context, uris string) (hive.Metastore, error) {
	c, err := hive.Dial(ctx, uris)
	if err != nil {
		return nil, err // not a nil *Client in a non-nil Metastore
	}
	return c, nil
}

// storeURI is the scheme and authority of the store, for Hive locations.
func storeURI(c *configs.Connector) string {
	if c.Store.Scheme == "file" {
		return "file://"
	}
	return "hdfs://" + c.Store.Host
}

// committedDirs lists the encoded partition directories of topic that hold
// committed files, skipping temp directories.
func committedDirs(ctx context.Context, store storage.FS, topic layout.Topic) ([]string, error) {
	seen := map[string]bool{}
	err := storage.WalkFiles(ctx, store, topic.Dir(), layout.IsTempDir, func(name string) error {
		if _, ok := layout.ParseFinalName(name); ok {
			if dir, ok := topic.EncodedDir(name); ok {
				seen[dir] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	return out, nil
}
