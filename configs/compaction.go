package configs

import (
	"strconv"
	"time"
)

// Compaction is hdfs.sink.compaction.*: the daemon's own compaction
// policy (docs/design.md §12). The one-shot `hdfs-sink compact` takes its
// own flags instead.
type Compaction struct {
	Enabled bool
	// MinAge: a directory is left while any of its files is younger.
	MinAge time.Duration
	// MinFiles: a directory with fewer committed files is left.
	MinFiles int
	// TargetBytes: a partition's files are merged up to about this size.
	TargetBytes int64
	// Interval is how often the daemon looks for directories to compact.
	Interval time.Duration
	// Grace is how long the merged inputs stay after readers were
	// switched, for queries that listed them before.
	Grace time.Duration
	// Pace is the least time between a compaction that fenced the
	// topic's writers and the next compaction of that topic; 0: back to
	// back. Default: DefaultCompactionPace of the connector's
	// retry.backoff.ms.
	Pace time.Duration
}

// Compaction defaults.
const (
	DefaultCompactionMinAgeMs   = 3600000 // without completeness; with it, 0 (complete is the condition)
	DefaultCompactionMinFiles   = 10
	DefaultCompactionTarget     = 128 << 20 // HDFS's default block size
	DefaultCompactionIntervalMs = 600000
	DefaultCompactionGraceMs    = 3600000
	// DefaultCompactionPaceMinMs is the least default pace: a fence costs
	// the backoff plus re-consuming the writers' open files, and 60 s
	// keeps that under a third for about 20 s of it (configs/README.md).
	DefaultCompactionPaceMinMs = 60000
	// compactionPacePerBackoff: the default pace is this many
	// retry.backoff.ms (when longer than the minimum): a third of it is
	// the backoff and three more of re-consumption.
	compactionPacePerBackoff = 12
)

// DefaultCompactionPace is the pace hdfs.sink.compaction.pace.ms takes
// when unset, for a connector whose retry.backoff.ms is backoff: each
// compaction's fence costs every writing partition of the topic about
// the backoff plus the time to re-consume its open files, and the pace
// leaves that at most a third of the time for a fence of up to 4
// backoffs or 20 s, whichever is longer (docs/design.md §12, "Pacing").
func DefaultCompactionPace(backoff time.Duration) time.Duration {
	return max(DefaultCompactionPaceMinMs*time.Millisecond, compactionPacePerBackoff*backoff)
}

// compactionKeys are the keys of this file, for keys.go's list.
var compactionKeys = []string{
	"hdfs.sink.compaction.enabled", "hdfs.sink.compaction.min.age.ms", "hdfs.sink.compaction.min.files",
	"hdfs.sink.compaction.target.bytes", "hdfs.sink.compaction.interval.ms", "hdfs.sink.compaction.grace.ms",
	"hdfs.sink.compaction.pace.ms",
}

// compaction reads hdfs.sink.compaction.*; it needs the format, the
// completeness and the Hive settings read first.
func (p *parser) compaction(c *Connector) {
	cc := &c.Compaction
	cc.Enabled = p.boolean("hdfs.sink.compaction.enabled", false)
	minAge := int64(DefaultCompactionMinAgeMs)
	if c.Completeness.Enabled {
		minAge = 0
	}
	cc.MinAge = p.millis("hdfs.sink.compaction.min.age.ms", minAge, 0, reasonNonNegative)
	cc.MinFiles = int(p.integer("hdfs.sink.compaction.min.files", DefaultCompactionMinFiles, 2,
		"must be an integer >= 2: compaction merges at least two files"))
	cc.TargetBytes = p.integer("hdfs.sink.compaction.target.bytes", DefaultCompactionTarget, 1, reasonPositive)
	cc.Interval = p.millis("hdfs.sink.compaction.interval.ms", DefaultCompactionIntervalMs, 1, reasonPositive)
	cc.Grace = p.millis("hdfs.sink.compaction.grace.ms", DefaultCompactionGraceMs, 0, reasonNonNegative)
	cc.Pace = p.millis("hdfs.sink.compaction.pace.ms", DefaultCompactionPace(c.RetryBackoff).Milliseconds(), 0,
		"must be an integer >= 0: the milliseconds between two compactions of a topic (0: back to back)")
	if !cc.Enabled {
		return
	}
	if !c.Hive.Enabled {
		p.fail("hdfs.sink.compaction.enabled", "true",
			"needs hive.integration=true: compaction moves readers to the merged files by switching the Hive partition's location in one call; without it a reader could see a record twice (docs/design.md §12)")
	}
	if c.Format != FormatAvro && c.Format != FormatParquet {
		p.fail("hdfs.sink.compaction.enabled", "true",
			"compaction merges Avro and Parquet files only; format.class makes "+strconv.Quote(string(c.Format))+" files")
	}
}
