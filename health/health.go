// Package health owns the failure streak of a dependency (the Kafka
// brokers, the schema registry): since when its calls fail and the last
// error, cleared by the next success, so GET /status can say what is down
// while the daemon waits for it instead of staying silent.
package health

import (
	"sync"
	"time"
)

// Streak is a dependency's current run of failures. The zero value is
// healthy; it is safe for concurrent use.
type Streak struct {
	mu       sync.Mutex
	err      error
	since    time.Time
	reported bool
}

// Fail records a failure at now and returns how long the streak has lasted.
func (s *Streak) Fail(err error, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.since = now
	}
	s.err = err
	return now.Sub(s.since)
}

// Report marks the streak as told to the operator; it returns false if it
// already was (so the caller logs a lasting failure once per streak).
func (s *Streak) Report() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.reported
	s.reported = s.err != nil
	return !was && s.reported
}

// OK ends the streak; it returns how long it lasted and whether it had been
// reported (then the caller says the dependency is back).
func (s *Streak) OK(now time.Time) (lasted time.Duration, reported bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		return 0, false
	}
	lasted, reported = now.Sub(s.since), s.reported
	s.err, s.since, s.reported = nil, time.Time{}, false
	return lasted, reported
}

// Down is when the streak began and its last error; a nil error while
// healthy.
func (s *Streak) Down() (since time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.since, s.err
}
