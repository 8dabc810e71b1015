package idcache

import (
	"sync"
	"testing"
)

func TestMapBound(t *testing.T) {
	cases := []struct {
		name   string
		limit  int
		puts   []int32
		kept   []int32
		droppd []int32
	}{
		{"unbounded keeps all", 0, []int32{1, 2, 3}, []int32{1, 2, 3}, nil},
		{"bound drops the oldest", 2, []int32{1, 2, 3}, []int32{2, 3}, []int32{1}},
		{"a repeated id is not counted twice", 2, []int32{1, 1, 2}, []int32{1, 2}, nil},
		{"bound of one", 1, []int32{5, 6, 7}, []int32{7}, []int32{5, 6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New[string](tc.limit)
			for _, id := range tc.puts {
				c.Put(id, "v")
			}
			for _, id := range tc.kept {
				if _, ok := c.Get(id); !ok {
					t.Errorf("id %d dropped, want kept", id)
				}
			}
			for _, id := range tc.droppd {
				if _, ok := c.Get(id); ok {
					t.Errorf("id %d kept, want dropped", id)
				}
			}
			if c.Len() != len(tc.kept) {
				t.Errorf("Len = %d, want %d", c.Len(), len(tc.kept))
			}
		})
	}
}

func TestZeroMapIsEmptyAndUsable(t *testing.T) {
	var c Map[int]
	if _, ok := c.Get(1); ok || c.Len() != 0 {
		t.Fatal("zero Map not empty")
	}
	c.Put(1, 10)
	if v, ok := c.Get(1); !ok || v != 10 {
		t.Fatalf("Get(1) = %d, %v", v, ok)
	}
}

// TestConcurrentGetPut runs under -race: lookups take no lock while
// stores replace the map.
func TestConcurrentGetPut(t *testing.T) {
	c := New[int32](8)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int32) {
			defer wg.Done()
			for i := int32(0); i < 500; i++ {
				c.Put(w*1000+i, i)
				if v, ok := c.Get(w*1000 + i); ok && v != i {
					t.Errorf("Get(%d) = %d", w*1000+i, v)
				}
			}
		}(int32(w))
	}
	wg.Wait()
	if c.Len() > 8 {
		t.Fatalf("Len = %d past the bound 8", c.Len())
	}
}

func BenchmarkGet(b *testing.B) {
	c := New[*int](0)
	v := 1
	c.Put(7, &v)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get(7); !ok {
			b.Fatal("missing")
		}
	}
}
