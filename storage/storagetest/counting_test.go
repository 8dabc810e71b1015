package storagetest

import (
	"io"
	"testing"
)

// TestCountingCountsCallsAndBytes: each call is counted by operation and
// what is read through an opened file is counted in bytes; Reset clears
// both.
func TestCountingCountsCallsAndBytes(t *testing.T) {
	c := NewCounting(NewMemFS())
	f, err := c.Create(t.Context(), "/d/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("0123456789")); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	for range 2 {
		rc, err := c.Open(t.Context(), "/d/a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
	}
	if _, err := c.ReadDir(t.Context(), "/d"); err != nil {
		t.Fatal(err)
	}
	calls := c.Calls()
	if calls["create"] != 1 || calls["open"] != 2 || calls["readdir"] != 1 || c.Total() != 4 || c.BytesRead() != 20 {
		t.Fatalf("calls %v (total %d), bytes read %d; want 1 create, 2 opens, 1 readdir, 20 bytes", calls, c.Total(), c.BytesRead())
	}
	c.Reset()
	if c.Total() != 0 || c.BytesRead() != 0 {
		t.Fatalf("after Reset: %d calls, %d bytes", c.Total(), c.BytesRead())
	}
}
