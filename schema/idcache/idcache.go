// Package idcache owns the cache by schema id that the registry client
// (schema/registry) and the registry converters (convert) keep: a map
// that lookups read without a lock, replaced whole on each store, and
// optionally bounded, dropping the id stored first. Schema ids are
// immutable, so an entry is never stale and one dropped is simply built
// again; stores happen once per id, so copying the map on each is cheaper
// than every lookup on every core sharing a lock.
package idcache

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Map is a bounded copy-on-write map from schema id to T. Its zero value
// is an unbounded, empty map.
type Map[T any] struct {
	entries atomic.Pointer[map[int32]T]

	mu    sync.Mutex // serialises stores
	order []int32    // ids stored, oldest first, when bounded
	limit int        // <= 0: no bound
}

// New is a Map keeping at most limit ids (<= 0: no bound).
func New[T any](limit int) *Map[T] {
	return &Map[T]{limit: limit}
}

// Get is id's entry: no lock, no allocation.
func (c *Map[T]) Get(id int32) (T, bool) {
	if m := c.entries.Load(); m != nil {
		v, ok := (*m)[id]
		return v, ok
	}
	var zero T
	return zero, false
}

// Put stores v for id, dropping the oldest id past the limit.
func (c *Map[T]) Put(id int32, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := map[int32]T{}
	if m := c.entries.Load(); m != nil {
		next = maps.Clone(*m)
	}
	if _, ok := next[id]; !ok && c.limit > 0 {
		c.order = append(c.order, id)
		if len(c.order) > c.limit {
			delete(next, c.order[0])
			c.order = c.order[1:]
		}
	}
	next[id] = v
	c.entries.Store(&next)
}

// Len is the number of ids held.
func (c *Map[T]) Len() int {
	if m := c.entries.Load(); m != nil {
		return len(*m)
	}
	return 0
}
