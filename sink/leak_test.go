package sink

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// connector owns its Kafka client and every goroutine it starts.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
