package sink

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// connector owns its Kafka client and every goroutine it starts.
// A test binary started by TestFreezeSelfStopsTheCaller is its child
// instead (freeze_test.go).
func TestMain(m *testing.M) {
	if os.Getenv(freezeChildEnv) != "" {
		freezeChild()
	}
	goleak.VerifyTestMain(m)
}
