package convert

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// byID holds what a registry converter built from each schema id (a
// compiled .proto file, a compiled JSON Schema), the way
// schema/registry.Client holds Avro schemas: reads take no lock (the map
// is replaced whole on a store, which happens once per id), concurrent
// misses of one id share one fetch and build (singleflight), and a bound
// drops the oldest id built first. Ids are immutable, so an entry is
// never stale; one dropped is built again when asked for.
type byID[T any] struct {
	built atomic.Pointer[map[int32]T]
	wait  time.Duration // bounds one fetch and build

	mu      sync.Mutex // serialises stores
	order   []int32    // ids built, oldest first, when bounded
	limit   int        // <= 0: no bound
	flights singleflight.Group

	// missed, when set (tests only), is called by each lookup that did not
	// find its id, before it joins a flight.
	missed func(id int32)
}

func newByID[T any](limit int, wait time.Duration) *byID[T] {
	c := &byID[T]{wait: wait, limit: limit}
	c.built.Store(&map[int32]T{})
	return c
}

// get is id's entry, built by build the first time. An error from build
// is not kept: the next lookup of id tries again (build keeps what it
// wants remembered, such as a schema that cannot be used, as an entry).
// Callers that miss together wait for the first one's build, which runs
// under its ctx bounded by the wait.
func (c *byID[T]) get(ctx context.Context, id int32, build func(ctx context.Context, id int32) (T, error)) (T, error) {
	if v, ok := c.cached(id); ok {
		return v, nil
	}
	if c.missed != nil {
		c.missed(id)
	}
	v, err, _ := c.flights.Do(strconv.Itoa(int(id)), func() (any, error) {
		if v, ok := c.cached(id); ok { // stored by a flight that just ended
			return v, nil
		}
		ctx, cancel := context.WithTimeout(ctx, c.wait)
		defer cancel()
		v, err := build(ctx, id)
		if err != nil {
			return nil, err
		}
		c.store(id, v)
		return v, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

func (c *byID[T]) cached(id int32) (T, bool) {
	v, ok := (*c.built.Load())[id]
	return v, ok
}

// store keeps v, dropping the oldest id past the limit.
func (c *byID[T]) store(id int32, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	built := maps.Clone(*c.built.Load())
	if _, ok := built[id]; !ok && c.limit > 0 {
		c.order = append(c.order, id)
		if len(c.order) > c.limit {
			delete(built, c.order[0])
			c.order = c.order[1:]
		}
	}
	built[id] = v
	c.built.Store(&built)
}
