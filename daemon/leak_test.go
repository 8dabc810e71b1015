package daemon

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// goroutine the daemon starts has an owner that stops it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
