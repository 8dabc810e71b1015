package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

// assignment is one partition's tenure in one member, from the moment the
// sink created its state (sink.Observer.Partition: the assignment reached
// the sink, before recovery) to its release. The times are the state
// machine's (docs/design.md §3), as the sink's Observer hears them; zero
// when it did not happen.
type assignment struct {
	Partition  int32     `json:"p"`
	Assigned   time.Time `json:"assigned"`
	Recovered  time.Time `json:"recovered,omitzero"`   // recovery returned a start offset
	FirstWrite time.Time `json:"first_write,omitzero"` // first records appended to a temp file
	Rotate     time.Time `json:"rotate,omitzero"`      // first SHOULD_ROTATE
	Committed  time.Time `json:"committed,omitzero"`   // first commit's files carry their final names
	Released   time.Time `json:"released,omitzero"`    // revoked, lost or stopped
	// writes are the times records were appended (once per batch), kept
	// only by the member whose stall is measured.
	writes []time.Time
}

// assignObserver records every assignment of one member. It keeps the
// write times when keepWrites is set; with out set it also prints each
// event as a JSON line (the second member's way to tell the first).
type assignObserver struct {
	mu         sync.Mutex
	list       []*assignment
	keepWrites bool
	out        *json.Encoder
}

func (o *assignObserver) Partition(_ string, p int32) sink.PartitionObserver {
	a := &assignment{Partition: p, Assigned: time.Now()}
	o.mu.Lock()
	o.list = append(o.list, a)
	o.mu.Unlock()
	o.emit(a)
	return &assignPartObs{o: o, a: a}
}

func (o *assignObserver) BadRecord(string, int32, sink.BadRecordOutcome) {}
func (o *assignObserver) DeadLetterFailed(string, error)                 {}
func (o *assignObserver) Tombstone(string, int32)                        {}

// emit prints a's state so far (under o.mu's protection of a).
func (o *assignObserver) emit(a *assignment) {
	if o.out == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.out.Encode(a)
}

// set records a first event at now (later ones are ignored), and prints
// the assignment when the event is new.
func (o *assignObserver) set(a *assignment, field func(*assignment) *time.Time) {
	now := time.Now()
	o.mu.Lock()
	t := field(a)
	fresh := t.IsZero()
	if fresh {
		*t = now
	}
	o.mu.Unlock()
	if fresh {
		o.emit(a)
	}
}

func (o *assignObserver) snapshot() []assignment {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]assignment, len(o.list))
	for i, a := range o.list {
		out[i] = *a
		out[i].writes = append([]time.Time(nil), a.writes...)
	}
	return out
}

type assignPartObs struct {
	o *assignObserver
	a *assignment
}

func (p *assignPartObs) Entered(s sink.State) {
	if s == sink.ShouldRotate {
		p.o.set(p.a, func(a *assignment) *time.Time { return &a.Rotate })
	}
}

func (p *assignPartObs) Written(int) {
	now := time.Now()
	p.o.mu.Lock()
	if p.o.keepWrites {
		p.a.writes = append(p.a.writes, now)
	}
	p.o.mu.Unlock()
	p.o.set(p.a, func(a *assignment) *time.Time { return &a.FirstWrite })
}

func (p *assignPartObs) Recovered(_ int64, err error) {
	if err == nil {
		p.o.set(p.a, func(a *assignment) *time.Time { return &a.Recovered })
	}
}

func (p *assignPartObs) Committed(sink.Commit) {
	p.o.set(p.a, func(a *assignment) *time.Time { return &a.Committed })
}

func (p *assignPartObs) Released() {
	p.o.set(p.a, func(a *assignment) *time.Time { return &a.Released })
}

func (p *assignPartObs) LogEnd(int64)                              {}
func (p *assignPartObs) CommitStep(sink.CommitStep, time.Duration) {}
func (p *assignPartObs) Broken(error)                              {}
func (p *assignPartObs) Fenced()                                   {}
func (p *assignPartObs) MemoryRotation()                           {}
func (p *assignPartObs) Buffered(int64, int)                       {}

// memberLog follows the second member's JSON lines: the latest state of
// each of its assignments, keyed by partition and assignment time.
type memberLog struct {
	mu   sync.Mutex
	byID map[string]assignment
	eof  chan struct{} // closed when B's output ends
}

func followMember(r io.Reader) *memberLog {
	m := &memberLog{byID: map[string]assignment{}, eof: make(chan struct{})}
	go func() {
		defer close(m.eof)
		dec := json.NewDecoder(r)
		for {
			var a assignment
			if err := dec.Decode(&a); err != nil {
				return
			}
			m.mu.Lock()
			m.byID[fmt.Sprintf("%d@%d", a.Partition, a.Assigned.UnixNano())] = a
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *memberLog) snapshot() []assignment {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]assignment, 0, len(m.byID))
	for _, a := range m.byID {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Assigned.Before(out[j].Assigned) })
	return out
}
