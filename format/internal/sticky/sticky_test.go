package sticky

import (
	"errors"
	"testing"
)

var errClosed = errors.New("closed")

func TestState(t *testing.T) {
	var s State
	if err := s.Usable(errClosed); err != nil {
		t.Fatalf("new state: %v", err)
	}
	boom := errors.New("boom")
	if err := s.Fail(boom); err != boom || s.Usable(errClosed) != boom || s.Err() != boom {
		t.Fatal("failure not sticky")
	}
	runs := 0
	finish := func() error { runs++; return s.Usable(errClosed) }
	if err := s.Close(finish); err != boom || s.Close(finish) != boom || runs != 1 {
		t.Fatalf("Close after failure: runs %d", runs)
	}
	if s.Usable(errClosed) != boom {
		t.Fatal("closed hides the failure")
	}
}

func TestCloseOnce(t *testing.T) {
	var s State
	runs := 0
	finish := func() error { runs++; return s.Usable(errClosed) }
	if err := s.Close(finish); err != nil || s.Close(finish) != nil || runs != 1 {
		t.Fatalf("Close: %v, runs %d", err, runs)
	}
	if s.Usable(errClosed) != errClosed {
		t.Fatal("closed writer usable")
	}
}
