package configs

import (
	"strings"
	"time"
)

// Completeness is hdfs.sink.completeness.*: completeness markers for the
// time directories of a time-based partitioner (docs/design.md §11).
type Completeness struct {
	Enabled bool
	// Lateness is how far behind a partition's newest committed record
	// time a record may still come without being late.
	Lateness time.Duration
	// MarkerName is the marker file written into a complete directory.
	MarkerName string
	// Interval is how often the marker looks for complete directories.
	Interval time.Duration
	// Lookback is how far behind the frontier the first look after a
	// start goes for directories left unmarked.
	Lookback time.Duration
}

// Completeness defaults.
const (
	DefaultCompletenessMarker     = "_SUCCESS"
	DefaultCompletenessLatenessMs = 0
	DefaultCompletenessIntervalMs = 60000
	DefaultCompletenessLookbackMs = 7 * 24 * 3600 * 1000
)

// completenessKeys are the keys of this file, for keys.go's list.
var completenessKeys = []string{
	"hdfs.sink.completeness.enabled", "hdfs.sink.completeness.lateness.ms", "hdfs.sink.completeness.marker.name",
	"hdfs.sink.completeness.interval.ms", "hdfs.sink.completeness.lookback.ms",
}

// completeness reads hdfs.sink.completeness.*; it needs the partitioner
// read first.
func (p *parser) completeness(c *Connector) {
	cc := &c.Completeness
	cc.Enabled = p.boolean("hdfs.sink.completeness.enabled", false)
	cc.Lateness = p.millis("hdfs.sink.completeness.lateness.ms", DefaultCompletenessLatenessMs, 0, reasonNonNegative)
	cc.Interval = p.millis("hdfs.sink.completeness.interval.ms", DefaultCompletenessIntervalMs, 1, reasonPositive)
	cc.Lookback = p.millis("hdfs.sink.completeness.lookback.ms", DefaultCompletenessLookbackMs, 0, reasonNonNegative)
	cc.MarkerName = p.str("hdfs.sink.completeness.marker.name", DefaultCompletenessMarker)
	if reason := markerNameProblem(cc.MarkerName); reason != "" {
		p.fail("hdfs.sink.completeness.marker.name", cc.MarkerName, reason)
	}
	if cc.Enabled && !c.Partitioner.TimeBased() {
		p.fail("hdfs.sink.completeness.enabled", "true",
			"needs a time-based partitioner (TimeBased, Daily or Hourly): only time directories can be complete; partitioner.class is "+string(c.Partitioner.Kind))
	}
}

// markerNameProblem says why name cannot be a marker file's name: it must
// be one path element that Hive, Spark and MapReduce skip as data (they
// ignore names starting with "_" or ".").
func markerNameProblem(name string) string {
	switch {
	case name == "" || name == "." || name == "..":
		return "must be a file name"
	case strings.ContainsAny(name, "/\\\x00"):
		return "must be one file name, without a directory"
	case !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, "."):
		return `must start with "_" or ".", so that Hive and Spark do not read the marker as data`
	case len(name) > 255:
		return "must be at most 255 bytes"
	}
	return ""
}
