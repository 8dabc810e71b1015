package kerberos

import (
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// exclusive are this package's tests that run alone (itest.CheckSharing):
// each disturbs a service of the Kerberos profile every other test uses.
var exclusive = map[string]string{
	"TestKerberosKDCUnreachableAtStart": "stops the KDC",
	"TestKerberosLongRun":               "stops the KDC for longer than a ticket lives",
	"TestDataTransferProtection":        "restarts the Kerberized DataNode with each protection",
	"TestDataEncryptionKey":             "restarts the Kerberized NameNode and DataNode with dfs.encrypt.data.transfer",
}

// TestTestsDeclareHowTheyShareServices runs without services (make unit):
// every integration test here is either listed above or parallel.
func TestTestsDeclareHowTheyShareServices(t *testing.T) {
	t.Parallel()
	itest.CheckSharing(t, ".", exclusive)
}
