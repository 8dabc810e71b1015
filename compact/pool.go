package compact

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// poolAlloc is an Arrow allocator (memory.Allocator) that keeps freed
// buffers of 4 KB and more, by power-of-two size class, for the next
// allocation of that class. The Parquet reader's builders grow their
// value buffers by doubling and the decoded batches are released batch
// by batch, so without it the merge allocates (and the GC sweeps) several
// times each row's bytes: measured in docs/benchmarks.md, "Compaction".
// Every buffer it hands out is zeroed, as Go's allocator's are (Arrow's
// Go code may rely on it).
type poolAlloc struct {
	classes [poolClasses]sync.Pool
	// poison, in tests, overwrites a freed buffer: a use after Free then
	// shows as wrong rows instead of passing by luck.
	poison bool
	pooled atomic.Int64 // buffers taken back, for the tests
}

const (
	poolMinShift = 12 // 4 KB: smaller buffers come from Go's allocator
	poolClasses  = 20 // up to 2 GB
	poolAlign    = 64 // Arrow's buffers are 64-byte aligned
)

func (a *poolAlloc) class(size int) int {
	if size <= 1<<poolMinShift {
		return -1
	}
	c := bits.Len(uint(size-1)) - poolMinShift
	if c >= poolClasses {
		return -1
	}
	return c
}

func (a *poolAlloc) Allocate(size int) []byte {
	c := a.class(size)
	if c < 0 {
		return aligned(size, size)
	}
	if p, ok := a.classes[c].Get().(*[]byte); ok {
		b := (*p)[:size]
		clear(b)
		return b
	}
	return aligned(size, 1<<(c+poolMinShift))
}

func (a *poolAlloc) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *poolAlloc) Free(b []byte) {
	c := a.class(cap(b))
	if c < 0 || cap(b) != 1<<(c+poolMinShift) {
		return // not one of ours: Go's GC has it
	}
	b = b[:cap(b)]
	if a.poison {
		for i := range b {
			b[i] = 0xA5
		}
	}
	a.pooled.Add(1)
	a.classes[c].Put(&b)
}

// aligned is a zeroed buffer of length size and capacity capacity whose
// first byte is 64-byte aligned.
func aligned(size, capacity int) []byte {
	buf := make([]byte, capacity+poolAlign)
	shift := int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf))) & (poolAlign - 1))
	return buf[shift : shift+size : shift+capacity]
}
