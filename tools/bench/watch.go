package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

// commitWatch follows the sink's "partitions assigned" and "files committed"
// log records: the in-process way to learn, without listing HDFS while
// measuring, which offsets are committed and when.
type commitWatch struct {
	mu         sync.Mutex
	ends       map[topicPart]int64 // partition → last committed offset (inclusive)
	lastCommit time.Time
	// lastUntimed is the last commit a rotation timer did not start.
	lastUntimed time.Time
	// firstCommit is when the first "files committed" record came; the
	// steady rate is measured from it (the start-up recovery is before).
	firstCommit time.Time
	// firstRecords is what the first commit committed (its partition's
	// records up to its end offset, the backlog starting at 0).
	firstRecords int64
	// onFirst, when set, is called at the first commit (under mu).
	onFirst  func()
	assigned chan struct{}
	once     sync.Once
}

func newCommitWatch() *commitWatch {
	return &commitWatch{ends: map[topicPart]int64{}, assigned: make(chan struct{})}
}

func (w *commitWatch) last() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastCommit
}

// timedTail is how long the last commits waited for the rotation timers
// after the last commit for another reason.
func (w *commitWatch) timedTail() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastUntimed.IsZero() {
		return 0
	}
	return w.lastCommit.Sub(w.lastUntimed)
}

func (w *commitWatch) first() (time.Time, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstCommit, w.firstRecords
}

// topicPart names one partition of one topic: a case may read many topics.
type topicPart struct {
	Topic     string
	Partition int32
}

var errStopped = errors.New("bench: connector stopped early")

func (w *commitWatch) waitAssigned(ctx context.Context, done <-chan error) error {
	select {
	case <-w.assigned:
		return nil
	case err := <-done:
		return fmt.Errorf("%w before assignment: %v", errStopped, err)
	case <-ctx.Done():
		return fmt.Errorf("bench: waiting for assignment: %w", ctx.Err())
	}
}

// waitCommitted returns once every partition's committed offset reached its
// high watermark (hw, exclusive).
func (w *commitWatch) waitCommitted(ctx context.Context, hw map[topicPart]int64, done <-chan error) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !w.reached(hw) {
		select {
		case <-t.C:
		case err := <-done:
			return fmt.Errorf("%w: %v", errStopped, err)
		case <-ctx.Done():
			return fmt.Errorf("bench: waiting for commits: %w", ctx.Err())
		}
	}
	return nil
}

func (w *commitWatch) reached(hw map[topicPart]int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, end := range hw {
		if end > 0 && w.ends[p] < end-1 {
			return false
		}
	}
	return true
}

// watchHandler feeds commitWatch and passes warnings and errors on.
type watchHandler struct {
	w     *commitWatch
	attrs []slog.Attr
	next  slog.Handler
}

func (h *watchHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *watchHandler) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case "partitions assigned":
		h.w.once.Do(func() { close(h.w.assigned) })
	case "files committed":
		h.committed(r)
	}
	if r.Level >= slog.LevelWarn {
		r.AddAttrs(h.attrs...)
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *watchHandler) committed(r slog.Record) {
	part, end, topic, reason := int64(-1), int64(-1), "", ""
	for _, a := range h.attrs {
		switch a.Key {
		case "partition":
			part = a.Value.Int64()
		case "topic":
			topic = a.Value.String()
		}
	}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "end_offset":
			end = a.Value.Int64()
		case "reason":
			reason = a.Value.String()
		}
		return true
	})
	if part < 0 || end < 0 {
		return
	}
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	k := topicPart{topic, int32(part)}
	h.w.ends[k] = max(h.w.ends[k], end)
	h.w.lastCommit = time.Now()
	if !sink.TimedReason(reason) {
		h.w.lastUntimed = h.w.lastCommit
	}
	if h.w.firstCommit.IsZero() {
		h.w.firstCommit, h.w.firstRecords = h.w.lastCommit, end+1
		if h.w.onFirst != nil {
			h.w.onFirst()
		}
	}
}

func (h *watchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &watchHandler{w: h.w, attrs: append(append([]slog.Attr(nil), h.attrs...), as...), next: h.next}
}

func (h *watchHandler) WithGroup(string) slog.Handler { return h }
