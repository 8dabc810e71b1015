package parquet

import (
	"testing"
	"unsafe"
)

func same(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

func fill(b []byte) {
	b = b[:cap(b)]
	for i := range b {
		b[i] = 0xAB
	}
}

func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// TestCountingAllocator: a freed buffer serves a later request of its size
// class, zeroed and still counted; what is not kept leaves the count.
func TestCountingAllocator(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, a *countingAllocator) (wantHeld int)
	}{
		{"a small buffer is not kept", func(t *testing.T, a *countingAllocator) int {
			b := a.Allocate(100)
			a.Free(b)
			if nb := a.Allocate(100); same(nb, b) {
				t.Error("a 100-byte buffer was reused")
			}
			return 100
		}},
		{"a freed buffer serves the next request of its class, zeroed", func(t *testing.T, a *countingAllocator) int {
			b := a.Allocate(10_000)
			fill(b)
			a.Free(b)
			nb := a.Allocate(5_000)
			if !same(nb, b) {
				t.Fatal("the freed 10,000-byte buffer did not serve a 5,000-byte request")
			}
			if len(nb) != 5_000 || !zero(nb) {
				t.Errorf("reused buffer: len %d, zeroed %v", len(nb), zero(nb))
			}
			return 10_000 // counted by capacity, as it is resident
		}},
		{"a request far below a kept buffer is not served from it", func(t *testing.T, a *countingAllocator) int {
			b := a.Allocate(50_000)
			a.Free(b)
			if nb := a.Allocate(3_000); same(nb, b) {
				t.Error("a 50,000-byte buffer served a 3,000-byte request")
			}
			return 50_000 + 3_000
		}},
		{"beyond the keep limit a freed buffer is dropped", func(t *testing.T, a *countingAllocator) int {
			x, y := a.Allocate(40_000), a.Allocate(40_000)
			a.Free(x)
			a.Free(y) // 80,000 > keep
			return 40_000
		}},
		{"growing within a kept buffer zeroes the new part and keeps the rest", func(t *testing.T, a *countingAllocator) int {
			b := a.Allocate(20_000)
			fill(b)
			a.Free(b)
			nb := a.Allocate(5_000) // the kept buffer, len 5,000, cap 20,000
			copy(nb, "data")
			grown := a.Reallocate(10_000, nb)
			if !same(nb, b) || !same(grown, b) || string(grown[:4]) != "data" || !zero(grown[5_000:]) {
				t.Errorf("grown in place %v, head %q, tail zeroed %v", same(grown, b), grown[:4], zero(grown[5_000:]))
			}
			return 20_000
		}},
		{"growing past capacity copies and keeps the old buffer", func(t *testing.T, a *countingAllocator) int {
			b := a.Allocate(8_192)
			copy(b, "data")
			grown := a.Reallocate(30_000, b)
			if same(grown, b) || string(grown[:4]) != "data" || !zero(grown[4:]) {
				t.Errorf("moved %v, head %q, rest zeroed %v", !same(grown, b), grown[:4], zero(grown[4:]))
			}
			if nb := a.Allocate(8_000); !same(nb, b) {
				t.Error("the outgrown buffer was not kept")
			}
			return 30_000 + 8_192
		}},
		{"drop gives the kept buffers up", func(t *testing.T, a *countingAllocator) int {
			a.Free(a.Allocate(20_000))
			a.drop()
			return 0
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newCountingAllocator(64 << 10)
			if want := c.run(t, a); a.held() != want {
				t.Errorf("held = %d, want %d", a.held(), want)
			}
		})
	}
}
