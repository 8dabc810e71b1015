// Package memory splits a memory ceiling (hdfs.sink.memory.max.bytes,
// run --memory-max-bytes) between open files, fetched records and
// headroom (Plan), and bounds the bytes the open files of all the
// connectors of a process buffer together (Budget). docs/design.md §9
// says why the shares are what they are; sink enforces them.
package memory

import "github.com/twmb/franz-go/pkg/kgo"

// Plan is how one memory ceiling (hdfs.sink.memory.max.bytes, run
// --memory-max-bytes) is split; docs/design.md §9 explains it. Open files
// get 5/16, fetched records 3/16, and the other half is headroom for
// garbage not yet collected, for encoding (a Parquet row group briefly
// needs its encoded pages next to its columns) and for memory that is not
// Go's. Measured: with 5/8 of the ceiling live (3/8 files, 1/4 fetch), the
// 64-partition Parquet benchmark held 180 MB live and reached 280 MB
// resident under a 268 MB ceiling.
type Plan struct {
	// Ceiling is the bytes split; 0 means no ceiling, and every share is 0.
	Ceiling int64
	// FileBudget is the share for the buffers of open files: a connector's
	// sink.Config.MemoryMax, or the max of the Budget that the connectors
	// of a process share.
	FileBudget int64
	// FetchBytes is each connector's share for fetched, unwritten records;
	// FetchOpts turns it into Kafka client options.
	FetchBytes int64
	// GoLimit is the soft limit (debug.SetMemoryLimit) for a process whose
	// resident size must stay under Ceiling. The Go runtime counts only the
	// memory it manages; the binary's own pages and what is not Go's take
	// about 40 MB more, so that much plus some, or a tenth, is left,
	// whichever is more. Under a 64 MB ceiling it is negative, which
	// SetMemoryLimit ignores.
	GoLimit int64
}

// NewPlan splits ceiling bytes for a process or connector that runs
// connectors connectors (at least one); the fetch share is divided evenly
// between them. A ceiling of 0 or less plans nothing.
func NewPlan(ceiling int64, connectors int) Plan {
	if ceiling <= 0 {
		return Plan{}
	}
	return Plan{
		Ceiling:    ceiling,
		FileBudget: ceiling / 16 * 5,
		FetchBytes: ceiling / int64(max(connectors, 1)) / 16 * 3,
		GoLimit:    ceiling - max(ceiling/10, 64<<20),
	}
}

// Within is p, a connector's own plan, inside process, the plan of the
// process it runs in: the connector fetches no more than its share of
// either. Its open files need no such bound here: the process's FileBudget
// is a Budget that all its connectors report to.
func (p Plan) Within(process Plan) Plan {
	if process.Ceiling > 0 {
		p.FetchBytes = min(p.FetchBytes, process.FetchBytes)
	}
	return p
}

// assumedCompression is how much larger fetched batches grow when
// decompressed. franz-go bounds fetches by their compressed size; the
// benchmark's 1 KB records grew about 6× (143 MB held for 24 MB fetched),
// so the bound leaves room for 8×.
const assumedCompression = 8

// fetchesHeld is how many fetches can hold memory at once: two buffered
// (MaxConcurrentFetches) and the one whose records are being written.
const fetchesHeld = 3

// FetchOpts keep fetched but not yet written records within FetchBytes
// once decompressed, for data that compresses up to assumedCompression
// times. Without a fetch share they are nil: franz-go's defaults apply.
func (p Plan) FetchOpts() []kgo.Opt {
	if p.FetchBytes <= 0 {
		return nil
	}
	perFetch := p.fetchMaxBytes()
	return []kgo.Opt{
		kgo.FetchMaxBytes(perFetch),
		kgo.FetchMaxPartitionBytes(min(perFetch, 1<<20)),
		kgo.BrokerMaxReadBytes(perFetch + 1<<20),
		kgo.MaxConcurrentFetches(fetchesHeld - 1),
	}
}

// fetchMaxBytes is the size of one fetch: a share of FetchBytes, between
// 1 MiB and 1 GiB.
func (p Plan) fetchMaxBytes() int32 {
	return int32(min(max(p.FetchBytes/(fetchesHeld*assumedCompression), 1<<20), 1<<30))
}
