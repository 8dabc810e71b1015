package parquet

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// countingAllocator counts the bytes arrow-go holds for one writer. The
// Go allocator frees by garbage collection, so "held" means allocated and
// not yet handed back through Free.
type countingAllocator struct {
	mem memory.Allocator
	n   atomic.Int64
}

func newCountingAllocator() *countingAllocator {
	return &countingAllocator{mem: memory.NewGoAllocator()}
}

func (a *countingAllocator) Allocate(size int) []byte {
	a.n.Add(int64(size))
	return a.mem.Allocate(size)
}

func (a *countingAllocator) Reallocate(size int, b []byte) []byte {
	a.n.Add(int64(size - len(b)))
	return a.mem.Reallocate(size, b)
}

func (a *countingAllocator) Free(b []byte) {
	a.n.Add(-int64(len(b)))
	a.mem.Free(b)
}

func (a *countingAllocator) held() int { return int(a.n.Load()) }
