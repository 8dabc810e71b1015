package sink

import "github.com/twmb/franz-go/pkg/kgo"

// Fetches spread over the partition workers (docs/design.md §9, "A fetch
// feeds every worker"; D53).
//
// Every poll ends in a barrier: its records are written, Parallelism
// partitions at once, before the next poll. Kafka fills a fetch partition
// by partition, each up to the client's per-partition bound. With the
// memory plan's 2 MiB fetch (a 256 MiB ceiling) and franz-go's 1 MiB per
// partition, a poll of 64 partitions brought records for two to four of
// them, and most workers had nothing to write while the poll waited for
// those few. The connector therefore lowers the per-partition bound so
// that one fetch holds records for min(owned partitions, Parallelism)
// partitions. It never raises it above what the client was built with,
// and never changes the fetch's total, which the memory plan sized: the
// memory held is what it was.

// fetchSizer is what fetchSizes needs of the Kafka client.
type fetchSizer interface {
	UpdateFetchMaxBytes(maxBytes, maxPartBytes int32)
}

// fetchSizes keeps the client's per-partition fetch bound in step with the
// partitions the connector owns. Poll loop only.
type fetchSizes struct {
	cl          fetchSizer
	maxBytes    int32 // one fetch's bound, as the client was built
	partCap     int32 // the per-partition bound it was built with
	parallelism int
	owned       int // the partition count the bound was last set for; -1: never
}

func newFetchSizes(cl *kgo.Client, parallelism int) *fetchSizes {
	// Read once, before any update: OptValue reads the configuration
	// without the atomics UpdateFetchMaxBytes writes with.
	maxBytes, _ := cl.OptValue(kgo.FetchMaxBytes).(int32)
	partCap, _ := cl.OptValue(kgo.FetchMaxPartitionBytes).(int32)
	return &fetchSizes{cl: cl, maxBytes: maxBytes, partCap: partCap, parallelism: parallelism, owned: -1}
}

// follow sets the per-partition bound for owned partitions when their
// number changed since the last call.
func (f *fetchSizes) follow(owned int) {
	if owned == f.owned || f.maxBytes <= 0 || f.partCap <= 0 {
		return
	}
	f.owned = owned
	f.cl.UpdateFetchMaxBytes(f.maxBytes, partitionBytes(f.maxBytes, f.partCap, owned, f.parallelism))
}

// partitionBytes is the per-partition bound that spreads a fetch of
// maxBytes over min(owned, parallelism) partitions, at most partCap. A
// batch larger than the bound still comes whole (Kafka returns at least
// one batch per partition), so a small bound slows nothing to a stop.
func partitionBytes(maxBytes, partCap int32, owned, parallelism int) int32 {
	spread := int32(min(max(owned, 1), max(parallelism, 1)))
	return max(min(maxBytes/spread, partCap), 1)
}
