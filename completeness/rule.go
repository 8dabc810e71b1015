// Package completeness owns the completeness markers of time-based
// partitioners: when a time directory has every record it will ever get
// within the allowed lateness (the rule, Frontier), and the marking of such
// a directory (Marker: a Hive partition parameter, then the _SUCCESS file,
// a metric and a log line, once, idempotently after crashes). The state it
// reads is what the sink already keeps in the store: the newest WAL segment
// of every Kafka partition carries the highest record time that partition
// has committed (docs/design.md §11).
package completeness

import (
	"math"
	"time"
)

// Progress is what one Kafka partition says of how far it has committed:
// its WAL head and its log's end.
type Progress struct {
	Partition int32
	// MaxRecordMillis is the highest record time the partition committed
	// (the WAL head's); 0: none or unknown.
	MaxRecordMillis int64
	// Committed is the highest offset committed; -1: none.
	Committed int64
	// LogEnd is the offset the partition's next record will get (Kafka's
	// high watermark, read before the WAL head); -1: unknown.
	LogEnd int64
}

// Idle reports whether everything in the partition's log is committed.
func (p Progress) Idle() bool { return p.LogEnd >= 0 && p.Committed+1 >= p.LogEnd }

// Verdict is how far in time every partition of a topic has committed.
type Verdict struct {
	// Frontier: a time directory whose span ends at or before it is
	// complete. math.MinInt64 when no partition is known.
	Frontier int64
	// Holding are the partitions whose progress is the frontier (the ones
	// to look at when a directory takes long); Idle those that counted the
	// wall clock because their log is fully committed.
	Holding, Idle []int32
}

// Frontier applies the completeness rule to every partition of a topic, at
// wall-clock time now, with the allowed lateness.
//
// A directory whose records have times in [start, end) is complete when
// every partition has passed end + lateness: its committed maximum record
// time is at least end + lateness, or it is idle (every offset in its log
// is committed) and the wall clock is past end + lateness. A partition's
// horizon is therefore its maximum record time, or the later of that and
// now when it is idle; the frontier is the lowest horizon minus the
// lateness. Records that arrive later than that are late: they are still
// written, exactly once, to the directory they belong to.
//
// parts must hold every partition of the topic: a missing one would let
// its directories be marked before its records are in.
func Frontier(parts []Progress, now time.Time, lateness time.Duration) Verdict {
	v := Verdict{Frontier: math.MinInt64}
	if len(parts) == 0 {
		return v
	}
	lowest := int64(math.MaxInt64)
	for _, p := range parts {
		h := p.MaxRecordMillis
		if p.Idle() {
			h = max(h, now.UnixMilli())
			v.Idle = append(v.Idle, p.Partition)
		}
		switch {
		case h < lowest:
			lowest, v.Holding = h, []int32{p.Partition}
		case h == lowest:
			v.Holding = append(v.Holding, p.Partition)
		}
	}
	v.Frontier = lowest - lateness.Milliseconds()
	return v
}

// Complete reports whether a directory whose span ends at end is complete
// under v.
func (v Verdict) Complete(end int64) bool { return len(v.Holding) > 0 && end <= v.Frontier }
