package convert

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestByIDBuildPanicReachesEveryCaller: a build that panics runs on
// singleflight's goroutine, where a panic would end the process; each
// caller that shared the flight panics instead, in its own goroutine,
// where a partition worker's recover turns it into the connector's error.
func TestByIDBuildPanicReachesEveryCaller(t *testing.T) {
	release := make(chan struct{})
	c := newByID(8, time.Second, func(context.Context, int32) (int, error) {
		<-release
		panic("bad schema text")
	})
	const callers = 3
	var joined sync.WaitGroup
	joined.Add(callers)
	c.missed = func(int32) { joined.Done() }
	go func() { joined.Wait(); close(release) }()
	recovered := make([]any, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			defer func() { recovered[i] = recover() }()
			_, _ = c.get(context.Background(), 7)
		})
	}
	wg.Wait()
	for i, r := range recovered {
		p, ok := r.(*buildPanic)
		if !ok {
			t.Fatalf("caller %d recovered %v (%T), want a *buildPanic", i, r, r)
		}
		if msg := p.Error(); !strings.Contains(msg, "schema id 7 panicked: bad schema text") {
			t.Fatalf("caller %d: %q does not name the id and the panic", i, msg)
		}
	}
	if _, ok := c.built.Get(7); ok {
		t.Fatal("a build that panicked left an entry")
	}
}
