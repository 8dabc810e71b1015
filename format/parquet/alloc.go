package parquet

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// countingAllocator counts the bytes arrow-go holds for one writer and
// keeps the buffers a released batch frees for the next one.
//
// A writer stages rows a batch at a time (Writer.encodeBatch): each batch
// grows its builders from nothing, by doubling, and frees them when it is
// encoded. Handing those buffers to the next batch spares the garbage
// collector a batch's worth of large allocations and the page faults of
// fresh memory. What is kept stays counted in held: it is resident.
//
// The Go allocator frees by garbage collection, so "held" means handed
// out or kept, and not yet dropped.
type countingAllocator struct {
	mem  memory.Allocator
	n    atomic.Int64
	keep int // bytes of freed buffers kept at most

	mu   sync.Mutex
	free [maxClass + 1][][]byte // by class: cap ≥ 1<<class
	// freeN is the bytes in free, changed under mu; an atomic so that
	// inUse, read for every row, takes no lock.
	freeN atomic.Int64
}

const (
	minClass = 12 // smaller buffers are cheap to allocate: not kept
	maxClass = 30
	// classSlack is how many classes larger than needed a kept buffer may
	// be to serve a request: a large buffer spent on a small one would
	// leave the next large request to a new allocation.
	classSlack = 2
)

func newCountingAllocator(keep int) *countingAllocator {
	return &countingAllocator{mem: memory.NewGoAllocator(), keep: keep}
}

// Allocate returns zeroed memory of len size, from a kept buffer when one
// is large enough.
func (a *countingAllocator) Allocate(size int) []byte {
	if b := a.reuse(size); b != nil {
		return b
	}
	b := a.mem.Allocate(size)
	a.n.Add(int64(cap(b)))
	return b
}

// Reallocate grows or shrinks b to size, keeping its contents. A buffer
// it replaces is kept when it is large enough.
func (a *countingAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if size > len(b) {
			clear(b[len(b):size]) // a kept buffer's tail holds old bytes
		}
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free keeps b for a later Allocate, or drops it.
func (a *countingAllocator) Free(b []byte) {
	c := cap(b)
	if class := bits.Len(uint(c)) - 1; class >= minClass && class <= maxClass {
		a.mu.Lock()
		if int(a.freeN.Load())+c <= a.keep {
			a.free[class] = append(a.free[class], b[:0])
			a.freeN.Add(int64(c))
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
	}
	a.n.Add(-int64(c))
	a.mem.Free(b)
}

// reuse returns a kept buffer of cap ≥ size, zeroed up to size, or nil.
func (a *countingAllocator) reuse(size int) []byte {
	need := bits.Len(uint(size - 1)) // smallest class whose buffers all fit
	if need < minClass || need > maxClass {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for class := need; class <= min(need+classSlack, maxClass); class++ {
		if k := len(a.free[class]); k > 0 {
			b := a.free[class][k-1]
			a.free[class][k-1] = nil
			a.free[class] = a.free[class][:k-1]
			a.freeN.Add(-int64(cap(b)))
			b = b[:size]
			clear(b)
			return b
		}
	}
	return nil
}

// drop lets the garbage collector have the kept buffers: the writer is
// done.
func (a *countingAllocator) drop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for class := range a.free {
		a.free[class] = nil
	}
	a.n.Add(-a.freeN.Swap(0))
}

func (a *countingAllocator) held() int { return int(a.n.Load()) }

// count adds n bytes held outside the allocator (columnOverhead) to held,
// so BytesBuffered reads one atomic: the sink may read it while another
// goroutine closes the file.
func (a *countingAllocator) count(n int) { a.n.Add(int64(n)) }

// inUse is held less kept: what arrow-go holds now.
func (a *countingAllocator) inUse() int {
	return int(a.n.Load() - a.freeN.Load())
}
