package compact

import (
	"testing"
	"unsafe"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// The merge's tests run with the reader's pool poisoning what it frees:
// a buffer Arrow frees and still reads would turn its rows to garbage,
// and the tests compare every row.
func init() { readPool.poison = true }

// TestPoolAllocHandsOutZeroedAlignedBuffers: whatever was freed before,
// a buffer comes zeroed (as Go's allocator's do), 64-byte aligned, of the
// length asked; growing one keeps its bytes; small and huge sizes are Go's
// allocator's, and freeing them (or a foreign buffer) is harmless.
func TestPoolAllocHandsOutZeroedAlignedBuffers(t *testing.T) {
	a := &poolAlloc{poison: true}
	for _, tc := range []struct {
		name string
		size int
	}{
		{"small, Go's allocator", 100},
		{"the smallest class", 4097},
		{"a power of two", 1 << 16},
		{"between classes", 3<<16 + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 3 { // later rounds may get a freed, poisoned buffer
				b := a.Allocate(tc.size)
				if len(b) != tc.size || cap(b) < tc.size {
					t.Fatalf("round %d: len %d cap %d, want len %d", round, len(b), cap(b), tc.size)
				}
				if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%poolAlign != 0 {
					t.Fatalf("round %d: not 64-byte aligned", round)
				}
				for i, v := range b {
					if v != 0 {
						t.Fatalf("round %d: byte %d is %#x, want a zeroed buffer", round, i, v)
					}
				}
				for i := range b {
					b[i] = byte(i)
				}
				grown := a.Reallocate(2*tc.size+1, b)
				for i := range tc.size {
					if grown[i] != byte(i) {
						t.Fatalf("round %d: byte %d lost growing the buffer", round, i)
					}
				}
				a.Free(grown)
			}
		})
	}
}

// TestParquetMergeReturnsDecodedBuffers: the merge decodes into the pool,
// so the reader's buffers (those its builders outgrow, and the batches
// released once encoded) go back to it for the next batch instead of to
// the GC. The merged rows are still every row, in order, with the pool
// poisoning what it takes back.
func TestParquetMergeReturnsDecodedBuffers(t *testing.T) {
	mem := storagetest.NewMemFS()
	f, s := testFormat(t, ".parquet"), testSchema(t, 1)
	var run Run
	for i := range int64(3) {
		name := commitFile(t, mem, f, mergeLayout, "d=1", s, 0, i*2000, i*2000+1999) // buffers above the pool's 4 KB
		r, _ := layout.ParseFinalName(name)
		run.Inputs = append(run.Inputs, Input{Path: name, Range: r})
	}
	before := readPool.pooled.Load()
	outs, err := newTestCompactor(mem, ".parquet").mergeRun(bg, run, "/stage/m")
	if err != nil {
		t.Fatal(err)
	}
	if seqs, err := readSeqs(mem, outs[0].temp); err != nil || len(seqs) != 6000 || seqs[5999] != 5999 {
		t.Fatalf("merged %d rows, %v; want offsets 0..5999", len(seqs), err)
	}
	if got := readPool.pooled.Load() - before; got == 0 {
		t.Fatal("no decoded buffer went back to the pool")
	}
}
