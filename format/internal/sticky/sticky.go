// Package sticky is the failure state every format writer shares. After
// the underlying writer fails, every call returns that failure: the file
// is incomplete and must be discarded. After Close, every call returns
// the writer's closed error (wrapping format.ErrClosed).
package sticky

// State is one writer's failure and whether it is closed. The zero value
// is an open writer that has not failed.
type State struct {
	err    error
	closed bool
}

// Usable is what a call returns before it does anything: the failure,
// else closed once the writer is closed, else nil.
func (s *State) Usable(closed error) error {
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return closed
	}
	return nil
}

// Fail records err as the writer's failure and returns it.
func (s *State) Fail(err error) error {
	s.err = err
	return err
}

// Err is the failure, nil if none.
func (s *State) Err() error { return s.err }

// Close runs finish, which flushes and finishes the file, and marks the
// writer closed; it returns finish's result. A second Close runs nothing
// and returns the failure, nil if none.
func (s *State) Close(finish func() error) error {
	if s.closed {
		return s.err
	}
	err := finish()
	s.closed = true
	return err
}
