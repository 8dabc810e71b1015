package health

import (
	"errors"
	"testing"
	"time"
)

func TestStreak(t *testing.T) {
	var s Streak
	t0 := time.Unix(1000, 0)
	if _, err := s.Down(); err != nil {
		t.Fatal("zero Streak is failing")
	}
	s.Fail(errors.New("a"), t0)
	if d := s.Fail(errors.New("b"), t0.Add(3*time.Second)); d != 3*time.Second {
		t.Fatalf("streak lasted %v, want 3s from the first failure", d)
	}
	if since, err := s.Down(); err == nil || err.Error() != "b" || !since.Equal(t0) {
		t.Fatalf("state %v since %v: want the last error since the first failure", err, since)
	}
	if !s.Report() || s.Report() {
		t.Fatal("Report must say yes once per streak")
	}
	if d, rep := s.OK(t0.Add(5 * time.Second)); d != 5*time.Second || !rep {
		t.Fatalf("OK = %v, %v", d, rep)
	}
	if _, err := s.Down(); err != nil {
		t.Fatal("still failing after OK")
	}
	if _, rep := s.OK(t0); rep {
		t.Fatal("OK on a healthy streak reported")
	}
}
