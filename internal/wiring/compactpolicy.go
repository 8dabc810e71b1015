package wiring

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path"
	"time"

	"github.com/hdfs-sink/hdfs-sink/compact"
	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// compactionMemoryShare is the part of a connector's
// hdfs.sink.memory.max.bytes its compaction may hold: two Parquet inputs
// read whole (the one merged and the next, read ahead), each at most a
// quarter of it, plus one output row group of at most half. The sink's
// own buffers keep the rest; a compaction runs beside them.
const compactionMemoryShare = 4

// CompactionPolicies wires hdfs.sink.compaction.*: a function giving the
// policy of each topic, nil when compaction is off. Each policy compacts
// with the same Compactor as `hdfs-sink compact`; a directory is complete
// when its completeness marker exists (with hdfs.sink.completeness.*).
func CompactionPolicies(c *configs.Connector, store storage.FS, logins *kerberos.Logins, dial func(context.Context, string) (hive.Metastore, error), log *slog.Logger) (func(topic string) (*compact.Policy, error), error) {
	cc := c.Compaction
	if !cc.Enabled {
		return nil, nil
	}
	part, err := OutputPartitioner(c)
	if err != nil {
		return nil, err
	}
	ws := sink.WriteSettings{FS: store, Partitioner: part, TopicsDir: c.TopicsDir, LogsDir: c.LogsDir, Route: TopicRoute(c), Now: time.Now}
	half := c.MemoryMaxBytes / compactionMemoryShare / 2
	set := CompactionSettings{TargetBytes: cc.TargetBytes, RowGroupBytes: min(compact.DefaultRowGroupBytes, half), MinAge: cc.MinAge, Grace: cc.Grace, DialHive: dial}
	log = log.With("connector", c.Name)
	return func(topic string) (*compact.Policy, error) {
		comp, err := Compactor(c, store, ws, topic, logins, set, log)
		if err != nil {
			return nil, err
		}
		// A Parquet merge holds two inputs (one merged, one read ahead)
		// and a row group: two quarters and a half of the share.
		p := &compact.Policy{C: comp, MinFiles: cc.MinFiles, MaxInputBytes: half / 2, Pace: cc.Pace}
		if c.Completeness.Enabled {
			p.Complete = markerExists(store, TopicLayout(c, topic).Dir(), c.Completeness.MarkerName)
		}
		return p, nil
	}, nil
}

// markerExists says whether an encoded directory of a topic has its
// completeness marker.
func markerExists(store storage.FS, topicDir, marker string) func(ctx context.Context, encoded string) (bool, error) {
	return func(ctx context.Context, encoded string) (bool, error) {
		_, err := store.Stat(ctx, path.Join(topicDir, encoded, marker))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
}
