package itest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// The HA profile of testenv.sh (testenv/ha.sh): the nameservice hdfsha of
// two NameNodes over one JournalNode, failed over by hand, and three
// DataNodes with dfs.replication=3.
const (
	HANameservice = "hdfsha"
	HAURI         = "hdfs://" + HANameservice
	HADataNodes   = 3
	EnvHAConf     = "HDFS_SINK_TESTENV_HA_CONF"
	ServiceHAHDFS = "HDFS nameservice " + HANameservice
)

// HANameNode is one NameNode of the nameservice.
type HANameNode struct {
	ID   string // its id in dfs.ha.namenodes.hdfsha
	RPC  string // host:port of its RPC server
	HTTP string // host:port of its HTTP server (JMX)
}

// HANameNodes are the nameservice's NameNodes, in the order of its config.
var HANameNodes = []HANameNode{
	{ID: "nn1", RPC: "127.0.0.1:8120", HTTP: "127.0.0.1:9880"},
	{ID: "nn2", RPC: "127.0.0.1:8121", HTTP: "127.0.0.1:9881"},
}

// HAConfDir is a client hadoop.conf.dir defining the nameservice (what
// hdfs-sink's hadoop.conf.dir points at).
func HAConfDir() string {
	return setting(EnvHAConf, filepath.Join(RepoRoot(), ".testenv", "ha-client-conf"))
}

// HARPCAddrs are the NameNodes' RPC addresses, for a client that fails
// over between them.
func HARPCAddrs() []string {
	out := make([]string, len(HANameNodes))
	for i, nn := range HANameNodes {
		out[i] = nn.RPC
	}
	return out
}

// haJMX reads one bean of a NameNode's JMX servlet.
func haJMX(ctx context.Context, nn HANameNode, bean string) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+nn.HTTP+"/jmx?qry=Hadoop:service=NameNode,name="+bean, nil)
	if err != nil {
		return nil, err
	}
	cl := http.Client{Timeout: 3 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var doc struct {
		Beans []map[string]any `json:"beans"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s JMX %s: %w", nn.ID, bean, err)
	}
	if len(doc.Beans) != 1 {
		return nil, fmt.Errorf("%s JMX: no bean %s", nn.ID, bean)
	}
	return doc.Beans[0], nil
}

// HAState is a NameNode's HA state ("active", "standby", …) from its JMX.
func HAState(ctx context.Context, nn HANameNode) (string, error) {
	b, err := haJMX(ctx, nn, "NameNodeStatus")
	if err != nil {
		return "", err
	}
	s, _ := b["State"].(string)
	return s, nil
}

// HAActive is the active NameNode; an error when none is, or both are.
func HAActive(ctx context.Context) (HANameNode, error) {
	var active []HANameNode
	var states []string
	for _, nn := range HANameNodes {
		s, err := HAState(ctx, nn)
		if err != nil {
			s = "down (" + err.Error() + ")"
		}
		states = append(states, nn.ID+" "+s)
		if s == "active" {
			active = append(active, nn)
		}
	}
	if len(active) != 1 {
		return HANameNode{}, fmt.Errorf("want one active NameNode: %s", strings.Join(states, ", "))
	}
	return active[0], nil
}

// HADataNodesInService counts the DataNodes the active NameNode has live
// and neither decommissioning nor decommissioned.
func HADataNodesInService(ctx context.Context, active HANameNode) (int, error) {
	b, err := haJMX(ctx, active, "FSNamesystemState")
	if err != nil {
		return 0, err
	}
	num := func(k string) int { f, _ := b[k].(float64); return int(f) }
	return num("NumLiveDataNodes") - num("NumDecommissioningDataNodes") - num("NumDecomLiveDataNodes"), nil
}

// NewHAClient is a colinmarc/hdfs client of the nameservice: it fails over
// between the NameNodes on StandbyException.
func NewHAClient() (*hdfs.Client, error) {
	return hdfs.NewClient(hdfs.ClientOptions{
		Addresses:        HARPCAddrs(),
		User:             DefaultHDFSUser,
		NamenodeDialFunc: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		DatanodeDialFunc: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
	})
}

// CheckHAHDFS passes when one NameNode is active, the three DataNodes are
// live and in service, and a file can be written (through a pipeline of
// three), read back and deleted through the nameservice.
func CheckHAHDFS(ctx context.Context) error {
	addr := strings.Join(HARPCAddrs(), ",")
	wrap := func(err error) error { return &ServiceError{ServiceHAHDFS, addr, err} }
	active, err := HAActive(ctx)
	if err != nil {
		return wrap(err)
	}
	n, err := HADataNodesInService(ctx, active)
	if err != nil {
		return wrap(err)
	}
	if n != HADataNodes {
		return wrap(fmt.Errorf("%d DataNodes in service, want %d", n, HADataNodes))
	}
	return boundedCheck(ctx, ServiceHAHDFS, addr, func() error {
		cl, err := NewHAClient()
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer cl.Close()
		return roundTrip(cl)
	})
}

// RequireHAHDFS fails the test unless CheckHAHDFS passes.
func RequireHAHDFS(t testing.TB) { t.Helper(); require(t, CheckHAHDFS) }

// HASparkConf is what Spark needs to resolve hdfs://hdfsha.
func HASparkConf() map[string]string {
	ids := make([]string, len(HANameNodes))
	conf := map[string]string{
		"spark.hadoop.dfs.nameservices":                                    HANameservice,
		"spark.hadoop.dfs.client.failover.proxy.provider." + HANameservice: "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
	}
	for i, nn := range HANameNodes {
		ids[i] = nn.ID
		conf["spark.hadoop.dfs.namenode.rpc-address."+HANameservice+"."+nn.ID] = nn.RPC
	}
	conf["spark.hadoop.dfs.ha.namenodes."+HANameservice] = strings.Join(ids, ",")
	return conf
}

// HASparkSQL is SparkSQL with the nameservice resolvable, for tables whose
// files are on it.
func HASparkSQL(t testing.TB, queries ...string) []Rows {
	t.Helper()
	RequireSpark(t)
	conf, err := json.Marshal(HASparkConf())
	if err != nil {
		t.Fatal(err)
	}
	res, err := sharedSpark.run(context.Background(), []string{"HDFS_SINK_TESTENV_SPARK_CONF=" + string(conf)}, queries)
	if err != nil {
		var se *SparkError
		if errors.As(err, &se) {
			t.Fatalf("%v", se)
		}
		t.Fatal(err)
	}
	return res
}
