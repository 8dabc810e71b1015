package daemon

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

// everyOwnedTopic is the loop completeness markers and the compaction policy
// share: every interval (what every says after each round), round (if not nil) and then pass for each of the connector's topics whose
// partition 0 it owns, in name order, so one daemon of the group does a
// topic's work in steady state; drop for each topic it does not own (a new
// owner starts afresh). It returns when ctx ends. A Kafka outage skips the
// round: the health check reports it.
func everyOwnedTopic(ctx context.Context, conn *sink.Connector, every func() time.Duration, round func(), pass, drop func(ctx context.Context, topic string)) {
	for {
		if round != nil {
			round()
		}
		passOwnedTopics(ctx, conn, pass, drop)
		select {
		case <-ctx.Done():
			return
		case <-time.After(every()):
		}
	}
}

func passOwnedTopics(ctx context.Context, conn *sink.Connector, pass, drop func(ctx context.Context, topic string)) {
	ends, err := conn.LogEnds(ctx)
	if err != nil {
		return
	}
	for _, topic := range slices.Sorted(maps.Keys(ends)) {
		if ctx.Err() != nil {
			return
		}
		if conn.Owns(topic, 0) {
			pass(ctx, topic)
		} else {
			drop(ctx, topic)
		}
	}
}

// topicStatuses is a job's status per topic: written by the job's
// goroutine, read by the status handler.
type topicStatuses[S any] struct {
	mu sync.Mutex
	m  map[string]*S
}

// update changes topic's status (a zero one if it has none) under the lock.
func (t *topicStatuses[S]) update(topic string, change func(*S)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*S{}
	}
	st := t.m[topic]
	if st == nil {
		st = new(S)
		t.m[topic] = st
	}
	change(st)
}

func (t *topicStatuses[S]) forget(topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, topic)
}

// snapshot is a copy by topic; nil when there is none.
func (t *topicStatuses[S]) snapshot() map[string]S {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) == 0 {
		return nil
	}
	out := make(map[string]S, len(t.m))
	for topic, st := range t.m {
		out[topic] = *st
	}
	return out
}
