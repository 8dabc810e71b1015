package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// command's clients and logins end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
