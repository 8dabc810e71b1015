package itest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
)

// The Kerberos profile of testenv.sh (testenv/kerberos.sh): realm, the
// services' addresses (by the name their principals carry), and the files
// testenv.env points at.
const (
	KrbRealm            = "EXAMPLE.COM"
	KrbSinkPrincipal    = "sink@" + KrbRealm
	KrbNameNodeAddr     = "localhost:8220"
	KrbNameNodeSPN      = "nn/_HOST@" + KrbRealm
	KrbMetastoreURI     = "thrift://localhost:9183"
	KrbMetastoreSPN     = "hive/localhost@" + KrbRealm
	KrbKafkaAddr        = "localhost:9192" // SASL_PLAINTEXT, GSSAPI
	KrbKafkaPlainAddr   = "127.0.0.1:9195" // the same broker's plaintext listener, for producers
	KrbSkewedKDCConf    = "krb5-skew.conf" // a KDC 15 minutes ahead
	KrbUnreachableConf  = "krb5-down.conf" // no KDC listens
	EnvKrb5Config       = "HDFS_SINK_TESTENV_KRB5_CONFIG"
	EnvKrbDir           = "HDFS_SINK_TESTENV_KRB_DIR"
	EnvKrbHadoopConf    = "HDFS_SINK_TESTENV_KRB_HADOOP_CONF"
	EnvTestenvScript    = "HDFS_SINK_TESTENV_TESTENV_SH"
	ServiceKrbHDFS      = "Kerberized HDFS"
	ServiceKrbMetastore = "Kerberized Hive Metastore"
	ServiceKrbKafka     = "Kafka (GSSAPI listener)"
)

// KrbDir is the profile's directory: krb5*.conf and keytabs/.
func KrbDir() string { return setting(EnvKrbDir, filepath.Join(RepoRoot(), ".testenv", "krb")) }

// Krb5Conf is the krb5.conf of the test realm.
func Krb5Conf() string { return setting(EnvKrb5Config, filepath.Join(KrbDir(), "krb5.conf")) }

// KrbFile is a file of the profile's directory (krb5-skew.conf, ...).
func KrbFile(name string) string { return filepath.Join(KrbDir(), name) }

// Keytab is keytabs/<name>.keytab: sink, sink-stale (outdated keys),
// ghost (a principal the KDC no longer has), sink-host (sink/<hostname>),
// hdfs, hive, kafka.
func Keytab(name string) string { return filepath.Join(KrbDir(), "keytabs", name+".keytab") }

// KrbHadoopConf is a client hadoop.conf.dir for the Kerberized HDFS.
func KrbHadoopConf() string {
	return setting(EnvKrbHadoopConf, filepath.Join(RepoRoot(), ".testenv", "krb-client-conf"))
}

// TestenvScript is testenv/testenv.sh (tests restart services through it).
func TestenvScript() string {
	return setting(EnvTestenvScript, filepath.Join(RepoRoot(), "testenv", "testenv.sh"))
}

var (
	krbOnce   sync.Once
	krbLogins *kerberos.Logins
)

// SinkLogin is the test process's login as sink@EXAMPLE.COM.
func SinkLogin() (*kerberos.Login, error) {
	krbOnce.Do(func() { krbLogins = kerberos.NewLogins(slog.New(slog.DiscardHandler)) })
	return krbLogins.Login(kerberos.Config{Principal: KrbSinkPrincipal, Keytab: Keytab("sink"), Krb5Conf: Krb5Conf()})
}

// NewKrbHDFSClient connects to the Kerberized NameNode as sink. Asking for
// "authentication" accepts whatever protection the DataNode offers.
func NewKrbHDFSClient() (*hdfs.Client, error) {
	l, err := SinkLogin()
	if err != nil {
		return nil, err
	}
	return hdfs.NewClient(hdfs.ClientOptions{
		Addresses: []string{KrbNameNodeAddr}, KerberosClient: l.Client(), KerberosServicePrincipleName: "nn/_HOST",
		DataTransferProtection: hdfs.DataTransferProtectionAuthentication,
		NamenodeDialFunc:       (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		DatanodeDialFunc:       (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
	})
}

// CheckKrbHDFS writes, reads back and deletes a file through Kerberos.
func CheckKrbHDFS(ctx context.Context) error {
	return boundedCheck(ctx, ServiceKrbHDFS, KrbNameNodeAddr, func() error {
		cl, err := NewKrbHDFSClient()
		if err != nil {
			return err
		}
		defer cl.Close()
		return roundTrip(cl)
	})
}

// KrbMetastoreSASL is the hive.Dial option for the Kerberized metastore.
func KrbMetastoreSASL() hive.Option { return hive.WithSASL(sinkGSSAPI{}) }

type sinkGSSAPI struct{}

func (sinkGSSAPI) Name() string { return "GSSAPI" }

func (sinkGSSAPI) Start(string) (hive.SASLSession, []byte, error) {
	l, err := SinkLogin()
	if err != nil {
		return nil, nil, err
	}
	s := l.NewSASL("hive/localhost")
	tok, err := s.Start()
	return s, tok, err
}

// CheckKrbMetastore authenticates with SASL GSSAPI and makes one call.
func CheckKrbMetastore(ctx context.Context) error {
	wrap := func(err error) error { return &ServiceError{ServiceKrbMetastore, KrbMetastoreURI, err} }
	cl, err := hive.Dial(ctx, KrbMetastoreURI, KrbMetastoreSASL())
	if err != nil {
		return wrap(err)
	}
	defer cl.Close()
	if _, err := cl.GetTable(ctx, "default", "itest_ready_none"); !errors.Is(err, hive.ErrNotFound) {
		return wrap(fmt.Errorf("get_table_req default.itest_ready_none: want not found, got %v", err))
	}
	return nil
}

// KrbKafkaOpts are client options for the GSSAPI listener as sink.
func KrbKafkaOpts() []kgo.Opt {
	krbOnce.Do(func() { krbLogins = kerberos.NewLogins(slog.New(slog.DiscardHandler)) })
	mech := kerberos.KafkaMechanism(krbLogins, kerberos.Config{Principal: KrbSinkPrincipal, Keytab: Keytab("sink"), Krb5Conf: Krb5Conf()}, "kafka")
	return []kgo.Opt{kgo.SeedBrokers(KrbKafkaAddr), kgo.SASL(mech)}
}

// CheckKrbKafka asks the GSSAPI listener for metadata as sink.
func CheckKrbKafka(ctx context.Context) error {
	return checkKafkaMetadata(ctx, ServiceKrbKafka, KrbKafkaAddr, KrbKafkaOpts()...)
}

// KrbSparkSQL is SparkSQL against the Kerberized metastore and HDFS, as the
// sink principal: kinit from its keytab into a ticket cache of the test's
// own, which the Spark driver's Hadoop and Hive clients read.
func KrbSparkSQL(t testing.TB, queries ...string) []Rows {
	t.Helper()
	RequireSpark(t)
	ccache := filepath.Join(t.TempDir(), "krb5cc")
	kinit := exec.Command("kinit", "-kt", Keytab("sink"), "-c", "FILE:"+ccache, KrbSinkPrincipal)
	kinit.Env = append(os.Environ(), "KRB5_CONFIG="+Krb5Conf())
	if out, err := kinit.CombinedOutput(); err != nil {
		t.Fatalf("kinit: %v: %s", err, out)
	}
	conf, _ := json.Marshal(map[string]string{
		"spark.hadoop.hadoop.security.authentication": "kerberos",
		// The NameNode insists on privacy, the metastore offers only
		// authentication: a Java client takes a list.
		"spark.hadoop.hadoop.rpc.protection":                   "privacy,authentication",
		"spark.hadoop.dfs.namenode.kerberos.principal":         KrbNameNodeSPN,
		"spark.hadoop.dfs.data.transfer.protection":            "privacy",
		"spark.hadoop.dfs.encrypt.data.transfer.cipher.suites": "AES/CTR/NoPadding",
		"spark.hadoop.hive.metastore.sasl.enabled":             "true",
		"spark.hadoop.hive.metastore.kerberos.principal":       KrbMetastoreSPN,
	})
	res, err := runSparkSQLOnce(context.Background(), []string{
		EnvMetastore + "=" + KrbMetastoreURI, "HDFS_SINK_TESTENV_HDFS_URI=hdfs://" + KrbNameNodeAddr,
		"HDFS_SINK_TESTENV_SPARK_CONF=" + string(conf), "KRB5_CONFIG=" + Krb5Conf(), "KRB5CCNAME=FILE:" + ccache,
		"JAVA_TOOL_OPTIONS=-Djava.security.krb5.conf=" + Krb5Conf(),
		// The driver's UGI reads Kerberos from core-site.xml when it starts,
		// before any spark.hadoop.* setting applies.
		"HADOOP_CONF_DIR=" + setting("HDFS_SINK_TESTENV_KRB_SPARK_CONF", filepath.Join(RepoRoot(), ".testenv", "krb-spark-conf")),
	}, queries...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return res
}
