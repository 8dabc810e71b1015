package sink

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// freezeChildEnv marks a test binary started as freeze_test.go's child.
const freezeChildEnv = "HDFS_SINK_TEST_FREEZE_CHILD"

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
