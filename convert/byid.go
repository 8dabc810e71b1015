package convert

import (
	"context"
	"fmt"
	"runtime/debug"
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
	build   func(ctx context.Context, id int32) (T, error) // fetches and builds one id's entry
	built   *idcache.Map[T]
	wait    time.Duration // bounds one fetch and build
	flights singleflight.Group

	// missed, when set (tests only), is called by each lookup that did not
	// find its id, once it has joined a flight.
	missed func(id int32)
}

// newByID keeps what build makes of each id. build is fixed here, not
// passed to each get: it escapes to the flight's goroutine, and a method
// value passed per call would be allocated on every hit.
func newByID[T any](limit int, wait time.Duration, build func(ctx context.Context, id int32) (T, error)) *byID[T] {
	return &byID[T]{build: build, built: idcache.New[T](limit), wait: wait}
}

// get is id's entry, built by c.build the first time. An error from build
// is not kept: the next lookup of id tries again (build keeps what it
// wants remembered, such as a schema that cannot be used, as an entry).
// Callers that miss together wait for the first one's build, which runs
// under its ctx bounded by the wait.
func (c *byID[T]) get(ctx context.Context, id int32) (T, error) {
	if v, ok := c.built.Get(id); ok {
		return v, nil
	}
	flight := c.flights.DoChan(strconv.Itoa(int(id)), func() (any, error) {
		return c.fetch(ctx, id)
	})
	if c.missed != nil {
		c.missed(id) // after joining: a test can hold the flight until every caller is in it
	}
	r := <-flight
	if p, ok := r.Err.(*buildPanic); ok {
		panic(p) // in every caller, as singleflight.Do would: each caller's recover sees it
	}
	if r.Err != nil {
		var zero T
		return zero, r.Err
	}
	return r.Val.(T), nil
}

// fetch runs one flight's build. A panic in build comes back as a
// *buildPanic for get to raise in the callers' goroutines: DoChan runs the
// flight on a goroutine of its own, where a panic would end the process.
func (c *byID[T]) fetch(ctx context.Context, id int32) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, &buildPanic{id: id, value: r, stack: debug.Stack()}
		}
	}()
	if v, ok := c.built.Get(id); ok { // stored by a flight that just ended
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.wait)
	defer cancel()
	built, err := c.build(ctx, id)
	if err != nil {
		return nil, err
	}
	c.built.Put(id, built)
	return built, nil
}

// buildPanic is a panic in the build of schema id, with the stack where
// it happened.
type buildPanic struct {
	id    int32
	value any
	stack []byte
}

func (p *buildPanic) Error() string {
	return fmt.Sprintf("building schema id %d panicked: %v\n%s", p.id, p.value, p.stack)
}
