package convert

import (
	"context"
	"strconv"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/hdfs-sink/hdfs-sink/schema/idcache"
)

// byID holds what a registry converter built from each schema id (a
// compiled .proto file, a compiled JSON Schema), the way
// schema/registry.Client holds Avro schemas, in the same idcache.Map
// (lock-free reads, a bound that drops the oldest id built first);
// concurrent misses of one id share one fetch and build (singleflight).
type byID[T any] struct {
	built   *idcache.Map[T]
	wait    time.Duration // bounds one fetch and build
	flights singleflight.Group

	// missed, when set (tests only), is called by each lookup that did not
	// find its id, before it joins a flight.
	missed func(id int32)
}

func newByID[T any](limit int, wait time.Duration) *byID[T] {
	return &byID[T]{built: idcache.New[T](limit), wait: wait}
}

// get is id's entry, built by build the first time. An error from build
// is not kept: the next lookup of id tries again (build keeps what it
// wants remembered, such as a schema that cannot be used, as an entry).
// Callers that miss together wait for the first one's build, which runs
// under its ctx bounded by the wait.
func (c *byID[T]) get(ctx context.Context, id int32, build func(ctx context.Context, id int32) (T, error)) (T, error) {
	if v, ok := c.built.Get(id); ok {
		return v, nil
	}
	if c.missed != nil {
		c.missed(id)
	}
	v, err, _ := c.flights.Do(strconv.Itoa(int(id)), func() (any, error) {
		if v, ok := c.built.Get(id); ok { // stored by a flight that just ended
			return v, nil
		}
		ctx, cancel := context.WithTimeout(ctx, c.wait)
		defer cancel()
		v, err := build(ctx, id)
		if err != nil {
			return nil, err
		}
		c.built.Put(id, v)
		return v, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}
