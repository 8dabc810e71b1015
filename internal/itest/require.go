package itest

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const requireTimeout = 15 * time.Second

func require(t testing.TB, check func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requireTimeout)
	defer cancel()
	if err := check(ctx); err != nil {
		t.Fatalf("%v (start the services with `make testenv-up` or testenv/testenv.sh up)", err)
	}
}

// RequireKafka fails the test unless the broker answers a metadata request.
func RequireKafka(t testing.TB) { t.Helper(); require(t, CheckKafka) }

// RequireHDFS fails the test unless a file can be written and read back.
func RequireHDFS(t testing.TB) { t.Helper(); require(t, CheckHDFS) }

// RequireMetastore fails the test unless the metastore answers a Thrift call.
func RequireMetastore(t testing.TB) { t.Helper(); require(t, CheckMetastore) }

// RequireRegistry fails the test unless GET <RegistryURL>/subjects answers.
func RequireRegistry(t testing.TB) { t.Helper(); require(t, CheckRegistry) }

var uniq atomic.Int64

// UniqueName returns prefix plus the test's name, the time and a counter,
// restricted to [a-z0-9_] so it is valid as a Kafka topic, an HDFS path
// element and a Hive identifier.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("%s%s_%d_%d", prefix, name, time.Now().UnixNano()%1e9, uniq.Add(1))
}

// KafkaClient returns a franz-go client for KafkaAddr with extra options,
// closed when the test ends.
func KafkaClient(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(KafkaAddr())}, opts...)...)
	if err != nil {
		t.Fatalf("Kafka at %s: new client: %v", KafkaAddr(), err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Topic creates a topic with a unique name and the given partition count
// (replication 1) and deletes it when the test ends.
func Topic(t testing.TB, partitions int32) string {
	t.Helper()
	RequireKafka(t)
	adm := kadm.NewClient(KafkaClient(t))
	name := UniqueName(t, "itest_")
	ctx, cancel := context.WithTimeout(context.Background(), requireTimeout)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("Kafka at %s: create topic %s: %v", KafkaAddr(), name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), requireTimeout)
		defer cancel()
		if _, err := adm.DeleteTopics(ctx, name); err != nil {
			t.Logf("Kafka: delete topic %s: %v", name, err)
		}
	})
	return name
}

// HDFSClient returns a client for NameNodeAddr as user "root", closed when
// the test ends.
func HDFSClient(t testing.TB) *hdfs.Client {
	t.Helper()
	RequireHDFS(t)
	cl, err := NewHDFSClient()
	if err != nil {
		t.Fatalf("HDFS at %s: connect: %v", NameNodeAddr(), err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// HDFSDir creates a unique directory under /itest and removes it (with its
// contents) when the test ends. It returns the absolute HDFS path.
func HDFSDir(t testing.TB, cl *hdfs.Client) string {
	t.Helper()
	dir := path.Join("/itest", UniqueName(t, ""))
	if err := cl.MkdirAll(dir, 0o777); err != nil {
		t.Fatalf("HDFS at %s: mkdir %s: %v", NameNodeAddr(), dir, err)
	}
	t.Cleanup(func() {
		if err := cl.RemoveAll(dir); err != nil {
			t.Logf("HDFS: remove %s: %v", dir, err)
		}
	})
	return dir
}
