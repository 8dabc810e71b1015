package rest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// server's goroutines end with Shutdown.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
