package exactlyonce

import (
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// exclusive are this package's tests that run alone (itest.CheckSharing):
// each disturbs something every other test uses. The rest run side by side.
var exclusive = map[string]string{
	"TestHAFailoverGroupOfTwo":                  "fails over and kills the HA profile's NameNodes",
	"TestReadinessThroughOutages":               "stops Kafka and the NameNode",
	"TestKafkaDownFromStartIsVisible":           "stops Kafka",
	"TestMetastoreOutage":                       "stops the Hive Metastore",
	"TestTruncatedLogIsRefused":                 "restarts Kafka with a partition's log deleted",
	"TestCheckConnectNamesTheServiceThatIsDown": "stops Kafka, the NameNode and the Metastore",
}

// TestTestsDeclareHowTheyShareServices runs without services (make unit):
// every integration test here is either listed above or parallel.
func TestTestsDeclareHowTheyShareServices(t *testing.T) {
	t.Parallel()
	itest.CheckSharing(t, ".", exclusive)
}
