package hdfs

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/colinmarc/hdfs/v2"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

// How a context is honoured (docs/decisions.md D28). colinmarc/hdfs takes
// no context, so a call runs on a goroutine of its own and the caller waits
// for it or for its context, whichever ends first. A call its caller
// stopped waiting for is left behind: it runs on until it returns, every
// read and write of it bounded by the I/O timeout (D19), and the store's
// Close ends it at once by closing its connections.
//
// Interrupting the call instead (closing or timing out its connections)
// would fail calls whose context is live. The call's own connections
// cannot be told from the others': colinmarc sends every call of a client
// over one NameNode connection, one at a time, and dials DataNodes inside
// calls without a context. And a NameNode connection closed under the
// client puts the NameNode in its 5 s backoff, so every call of that
// client fails for 5 s. Within one connector the store serves the
// partitions' commits, which a stop lets finish (the shutdown commits them
// under a context of their own), and the health check and the Hive syncer,
// which a stop, or a health check's 5 s timeout, cancels.

// client is one NameNode connection of the store.
type client struct {
	*hdfs.Client
	// behind counts its calls left behind that have not returned: one may
	// hold the connection (colinmarc's lock), so new calls go to another
	// client while there is one without (FS.client).
	behind atomic.Int32
}

// await runs call and returns its result, or, if ctx ends first, ok false
// and call left behind on c. When a call left behind returns, leftover (if
// not nil) disposes of its result: a writer or a reader nobody will close.
func await[T any](ctx context.Context, c *client, call func() (T, error), leftover func(T, error)) (v T, err error, ok bool) {
	if ctx.Done() == nil {
		v, err = call() // a context that never ends: no goroutine needed
		return v, err, true
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	var mu sync.Mutex
	abandoned := false
	go func() {
		v, err := call()
		mu.Lock()
		left := abandoned
		done <- result{v, err}
		mu.Unlock()
		if left {
			c.behind.Add(-1)
			if leftover != nil {
				leftover(v, err)
			}
		}
	}()
	select {
	case r := <-done:
		return r.v, r.err, true
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case r := <-done:
		return r.v, r.err, true // it returned meanwhile: its result stands
	default:
	}
	abandoned = true
	c.behind.Add(1)
	return v, err, false
}

// do is one call of the store on c: refused when ctx is already done,
// given up when ctx ends first. Either way the error names op and name and
// matches ctx.Err(); a call given up may still take effect (a lost reply).
func do[T any](ctx context.Context, c *client, op, name string, call func() (T, error), leftover func(T, error)) (T, error) {
	var zero T
	if ctx.Err() != nil {
		return zero, storage.Interrupted(ctx, op, name)
	}
	v, err, ok := await(ctx, c, call, leftover)
	if !ok {
		return zero, storage.Interrupted(ctx, op, name)
	}
	return v, err
}

// none adapts a call with no result to do.
func none(call func() error) func() (struct{}, error) {
	return func() (struct{}, error) { return struct{}{}, call() }
}
