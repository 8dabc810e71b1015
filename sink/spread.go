package sink

import (
	"cmp"
	"slices"
	"sync"
)

// The time-driven rotation reasons. They say only *when* the open files
// are committed, never what they hold or how they are named, so a
// rotation for one of them may wait for a later poll (deferrable).
const (
	reasonInterval = "rotate.interval.ms"
	reasonSchedule = "rotate.schedule.interval.ms"
)

// deferrable reports whether a rotation for reason may be moved to a later
// poll: a timer's, never flush.size, the size limit or a schema change
// (they decide a file's contents and name). The memory ceiling, a release
// and shutdown commit through commitNow, which never asks.
func deferrable(reason string) bool { return TimedReason(reason) }

// TimedReason reports whether reason, the "reason" of a "files committed"
// log record, names a time-driven rotation (rotate.interval.ms or
// rotate.schedule.interval.ms) rather than one decided by the data (size,
// schema, the memory ceiling). Tools that read the log (bench) use it so
// they cannot drift from the names the sink writes.
func TimedReason(reason string) bool {
	return reason == reasonInterval || reason == reasonSchedule
}

// defaultTimedPerPollRounds is how many commits per parallel worker a poll
// may spend on time-driven rotations by default (Config.TimedRotationsPerPoll).
const defaultTimedPerPollRounds = 4

// spread bounds the time-driven commits one poll starts (issue 25): every
// poll is a barrier (D13), and partitions that opened their files in the
// same poll all come due in the same later poll, which then commits
// hundreds of partitions while every partition waits for it. A partition
// refused a slot keeps its files open and writes on into them, as if its
// timer had fired later; it is owed a slot (oldest refusal first) in the
// next poll, before any partition that was not refused, so none starves.
//
// Workers of one poll call take concurrently; begin is called by the poll
// loop between polls. The mutex is taken only when a timer is due, not per
// record (a partition refused in a batch does not ask again within it).
type spread struct {
	perPoll int // time-driven commits a poll may start; <= 0: no bound
	onDefer func()

	mu      sync.Mutex
	poll    uint64           // the current poll's number
	left    int              // slots not reserved, first come first served
	owed    map[tp]struct{}  // slots reserved this poll for earlier refusals
	waiting map[tp]deferment // refused, and not committed or dropped since
	nextNo  uint64           // order of the next new refusal
}

// deferment is a partition's standing in the queue of refused rotations.
type deferment struct {
	order uint64 // lower: refused earlier
	poll  uint64 // the last poll it was refused in (counted once per poll)
}

func newSpread(perPoll int, onDefer func()) *spread {
	return &spread{perPoll: perPoll, onDefer: onDefer, owed: map[tp]struct{}{}, waiting: map[tp]deferment{}}
}

// begin opens a poll's budget: the partitions refused longest ago that
// can still rotate (live) are owed a slot each, up to the budget; what is
// left is shared by the others. A poll that yields (a revocation is
// committing beside it) has no slot at all: every timer waits, in the
// queue's order, and the NameNode serves the revocation first.
func (s *spread) begin(live func(tp) bool, yield bool) {
	if s == nil || s.perPoll <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.poll++
	clear(s.owed)
	queue := make([]tp, 0, len(s.waiting))
	for t := range s.waiting {
		if !live(t) {
			delete(s.waiting, t) // released or broken: its files are committed or dropped elsewhere
			continue
		}
		queue = append(queue, t)
	}
	slices.SortFunc(queue, func(a, b tp) int { return cmp.Compare(s.waiting[a].order, s.waiting[b].order) })
	budget := s.perPoll
	if yield {
		budget = 0
	}
	s.left = budget
	for _, t := range queue[:min(len(queue), budget)] {
		s.owed[t] = struct{}{}
		s.left--
	}
}

// take asks for a time-driven commit of t in this poll. A refusal puts t
// in the queue (or keeps its place there).
func (s *spread) take(t tp) bool {
	if s == nil || s.perPoll <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.owed[t]; ok {
		delete(s.owed, t)
		delete(s.waiting, t)
		return true
	}
	if s.left > 0 {
		s.left--
		delete(s.waiting, t)
		return true
	}
	d, queued := s.waiting[t]
	if !queued {
		d.order = s.nextNo
		s.nextNo++
	}
	if !queued || d.poll != s.poll {
		d.poll = s.poll
		s.onDefer()
	}
	s.waiting[t] = d
	return false
}

// forget drops t from the queue: its files were committed for another
// reason (flush.size, the memory ceiling, a release) or dropped. A slot
// owed to it this poll goes back to the others.
func (s *spread) forget(t tp) {
	if s == nil || s.perPoll <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting, t)
	if _, ok := s.owed[t]; ok {
		delete(s.owed, t)
		s.left++
	}
}
