package itest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	hms "github.com/beltran/gohive/hive_metastore"
	"github.com/colinmarc/hdfs/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Service names used in messages; tests and the start script print them.
const (
	ServiceKafka     = "Kafka"
	ServiceHDFS      = "HDFS"
	ServiceMetastore = "Hive Metastore"
	ServiceRegistry  = "Schema Registry"
	ServiceSpark     = "Spark SQL"
)

// ServiceError says which service at which address failed a readiness check.
type ServiceError struct {
	Service string // one of the Service* constants
	Addr    string
	Err     error
}

func (e *ServiceError) Error() string {
	return fmt.Sprintf("%s at %s is not reachable: %v", e.Service, e.Addr, e.Err)
}

func (e *ServiceError) Unwrap() error { return e.Err }

// CheckKafka asks the broker for cluster metadata and requires one broker.
func CheckKafka(ctx context.Context) error {
	addr := KafkaAddr()
	return checkKafkaMetadata(ctx, ServiceKafka, addr, kgo.SeedBrokers(addr))
}

// checkKafkaMetadata asks the brokers opts name for metadata, once, and
// requires one broker.
func checkKafkaMetadata(ctx context.Context, service, addr string, opts ...kgo.Opt) error {
	wrap := func(err error) error { return &ServiceError{service, addr, err} }
	cl, err := kgo.NewClient(append(opts, kgo.DialTimeout(3*time.Second), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))...)
	if err != nil {
		return wrap(fmt.Errorf("new client: %w", err))
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return wrap(fmt.Errorf("metadata: %w", err))
	}
	if len(md.Brokers) == 0 {
		return wrap(errors.New("metadata lists no broker"))
	}
	return nil
}

// NewHDFSClient connects as DefaultHDFSUser; DataNodes are dialled by the
// address they registered with (127.0.0.1 in the test environment).
func NewHDFSClient() (*hdfs.Client, error) {
	return hdfs.NewClient(hdfs.ClientOptions{
		Addresses:        []string{NameNodeAddr()},
		User:             DefaultHDFSUser,
		NamenodeDialFunc: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		DatanodeDialFunc: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
	})
}

// CheckHDFS writes, reads back and deletes a small file: this passes only
// when the NameNode is out of safe mode and a DataNode accepts blocks.
func CheckHDFS(ctx context.Context) error {
	addr := NameNodeAddr()
	return boundedCheck(ctx, ServiceHDFS, addr, hdfsRoundTrip)
}

// boundedCheck runs check, which cannot be cancelled (the HDFS client
// takes no context), until ctx ends; its error names service and addr.
func boundedCheck(ctx context.Context, service, addr string, check func() error) error {
	done := make(chan error, 1)
	go func() { done <- check() }()
	select {
	case err := <-done:
		if err != nil {
			return &ServiceError{service, addr, err}
		}
		return nil
	case <-ctx.Done():
		return &ServiceError{service, addr, ctx.Err()}
	}
}

func hdfsRoundTrip() error {
	cl, err := NewHDFSClient()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cl.Close()
	return roundTrip(cl)
}

func roundTrip(cl *hdfs.Client) error {
	if err := cl.MkdirAll("/tmp", 0o777); err != nil {
		return fmt.Errorf("mkdir /tmp: %w", err)
	}
	name := path.Join("/tmp", fmt.Sprintf(".itest-ready-%d-%d", os.Getpid(), time.Now().UnixNano()))
	want := []byte("ready\n")
	w, err := cl.Create(name)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	defer cl.Remove(name)
	if _, err := w.Write(want); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := closeRetrying(w); err != nil {
		return fmt.Errorf("close %s (is a DataNode live?): %w", name, err)
	}
	got, err := cl.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("read %s: got %q, want %q", name, got, want)
	}
	return nil
}

// closeRetrying retries Close while it reports ErrReplicating: the NameNode
// completes a file only after the DataNode's block report, which can trail
// the client's complete call (observed on 3.5.0). A retried Close sends no
// last block, and the NameNode then completes the file once the block is.
func closeRetrying(w *hdfs.FileWriter) error {
	backoff := 50 * time.Millisecond
	var err error
	for range 8 {
		if err = w.Close(); err == nil || !hdfs.IsErrReplicating(err) {
			return err
		}
		time.Sleep(backoff)
		backoff *= 2
	}
	return err
}

// MetastoreAddr is MetastoreURI's host:port.
func MetastoreAddr() string {
	u, err := url.Parse(MetastoreURI())
	if err != nil || u.Host == "" {
		return MetastoreURI()
	}
	return u.Host
}

// CheckMetastore makes one Thrift call (get_all_databases) with the
// generated bindings, independent of the project's hive package.
func CheckMetastore(ctx context.Context) error {
	addr := MetastoreAddr()
	wrap := func(err error) error { return &ServiceError{ServiceMetastore, addr, err} }
	cfg := &thrift.TConfiguration{ConnectTimeout: 3 * time.Second, SocketTimeout: 10 * time.Second}
	sock := thrift.NewTSocketConf(addr, cfg)
	if err := sock.Open(); err != nil {
		return wrap(fmt.Errorf("connect: %w", err))
	}
	defer sock.Close()
	trans := thrift.NewTBufferedTransport(sock, 4096)
	proto := thrift.NewTBinaryProtocolConf(trans, cfg)
	cl := hms.NewThriftHiveMetastoreClient(thrift.NewTStandardClient(proto, proto))
	dbs, err := cl.GetAllDatabases(ctx)
	if err != nil {
		return wrap(fmt.Errorf("get_all_databases: %w", err))
	}
	for _, db := range dbs {
		if db == "default" {
			return nil
		}
	}
	return wrap(fmt.Errorf("get_all_databases returned %q without \"default\"", dbs))
}

// CheckRegistry requires GET <base>/subjects to answer 200 with a JSON array.
func CheckRegistry(ctx context.Context) error {
	base := RegistryURL()
	wrap := func(err error) error { return &ServiceError{ServiceRegistry, base, err} }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/subjects", nil)
	if err != nil {
		return wrap(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return wrap(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return wrap(fmt.Errorf("read body: %w", err))
	}
	if resp.StatusCode != http.StatusOK {
		return wrap(fmt.Errorf("GET /subjects: HTTP %d: %s", resp.StatusCode, truncate(body)))
	}
	var subjects []string
	if err := json.Unmarshal(body, &subjects); err != nil {
		return wrap(fmt.Errorf("GET /subjects: not a JSON string array: %w: %s", err, truncate(body)))
	}
	return nil
}

func truncate(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..." + strconv.Itoa(len(b)-max) + " more bytes"
	}
	return string(b)
}

// Check runs the readiness check of one service by its short name, as used by
// testenv.sh: kafka, hdfs, hms, registry.
func Check(ctx context.Context, name string) error {
	switch name {
	case "kafka":
		return CheckKafka(ctx)
	case "hdfs":
		return CheckHDFS(ctx)
	case "hms":
		return CheckMetastore(ctx)
	case "registry":
		return CheckRegistry(ctx)
	case "kafka-secure":
		return CheckKafkaSecure(ctx)
	case "oauth":
		return CheckOAuth(ctx)
	case "registry-tls":
		return CheckRegistryTLS(ctx)
	case "krb-hdfs":
		return CheckKrbHDFS(ctx)
	case "krb-hms":
		return CheckKrbMetastore(ctx)
	case "krb-kafka":
		return CheckKrbKafka(ctx)
	case "ha-hdfs":
		return CheckHAHDFS(ctx)
	}
	return fmt.Errorf("itest: unknown service %q (want kafka, kafka-secure, hdfs, hms, registry, registry-tls, oauth, krb-hdfs, krb-hms, krb-kafka or ha-hdfs)", name)
}
