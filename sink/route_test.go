package sink

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// routerChain is RegexRouter "(.*)-raw" → "$1", as a connector file sets it.
func routerChain(t *testing.T) *transform.Chain {
	t.Helper()
	chain, err := transform.New([]configs.TransformSpec{{Alias: "route", Class: "RegexRouter",
		Props: map[string]string{"regex": "(.*)-raw", "replacement": "$1"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

func routedConfig(t *testing.T, k *kafkaFixture, name string) Config {
	cfg := k.config(name)
	cfg.Topics = []string{"orders-raw"}
	cfg.Transforms = routerChain(t)
	cfg.Route = cfg.Transforms.Route
	cfg.FlushSize = 3
	return cfg
}

func produceTo(k *kafkaFixture, topic string, from, to int64) {
	var recs []*kgo.Record
	for seq := from; seq < to; seq++ {
		r := k.good(0, seq)
		r.Topic = topic
		recs = append(recs, r)
	}
	k.produce(recs...)
}

// routedHolds reports that the files under the routed name "orders" hold
// offsets [0, n) of partition 0, each once.
func routedHolds(fsys storage.FS, n int64) bool {
	_, err := verify.Check(context.Background(), fsys, verify.Options{TopicsDir: "/topics", Topic: "orders", Want: map[int32]int64{0: n}})
	return err == nil
}

// TestRegexRouterWritesUnderTheRoutedName: records of orders-raw routed to
// orders are committed as topics/orders/partition=0/orders+0+… with their
// WAL under logs/orders and the catalog told "orders"; a second connector
// run resumes from what the routed name holds, so every offset is in the
// files exactly once and nothing is kept under the consumed name.
func TestRegexRouterWritesUnderTheRoutedName(t *testing.T) {
	k := newKafkaFixture(t, 1, "orders-raw")
	produceTo(k, "orders-raw", 0, 6)
	cat := &recordingCatalog{}
	cfg := routedConfig(t, k, "routed")
	cfg.Catalog = cat
	c := start(t, cfg)
	waitFor(t, "offsets 0..5 committed under orders", func() bool { return routedHolds(k.fs, 6) })
	c.stop()
	if err, ok := c.wait(30 * time.Second); err != nil || !ok {
		t.Fatalf("first run ended with %v (stopped: %v)", err, ok)
	}

	produceTo(k, "orders-raw", 6, 9)
	cfg = routedConfig(t, k, "routed")
	c = start(t, cfg)
	waitFor(t, "offsets 6..8 committed under orders", func() bool { return routedHolds(k.fs, 9) })
	c.stop()
	c.wait(30 * time.Second)

	rep, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: "orders", Want: map[int32]int64{0: 9}})
	if err != nil {
		t.Fatalf("verify under the routed name: %v", err)
	}
	var next int64
	for _, f := range rep.Files {
		if f.Range.Start != next || !strings.HasPrefix(path.Base(f.Path), "orders+0+") || !strings.HasPrefix(f.Path, "/topics/orders/partition=0/") {
			t.Errorf("file %s: want orders+0+%d… under /topics/orders/partition=0", f.Path, next)
		}
		next = f.Range.End + 1
	}
	if next != 9 {
		t.Errorf("files cover offsets up to %d, want 0..8 exactly once", next-1)
	}
	if _, err := k.fs.Stat(t.Context(), "/logs/orders/0"); err != nil {
		t.Errorf("WAL of the routed name: %v", err)
	}
	for _, dir := range []string{"/topics/orders-raw", "/logs/orders-raw"} {
		if _, err := k.fs.Stat(t.Context(), dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists (err %v): nothing is kept under the consumed name", dir, err)
		}
	}
	if got := cat.known("orders"); len(got) == 0 || len(cat.known("orders-raw")) != 0 {
		t.Errorf("catalog knows orders %v, orders-raw %v: want the routed name only", got, cat.known("orders-raw"))
	}
}

// TestRegexRouterCollisionRefusedAtAssignment: with topics.regex, check
// cannot know the topics; when orders-raw (routed to orders) and orders
// are both consumed, the assignment is refused and the connector stops
// naming the router's keys, before anything is written.
func TestRegexRouterCollisionRefusedAtAssignment(t *testing.T) {
	k := newKafkaFixture(t, 1, "orders-raw", "orders")
	produceTo(k, "orders-raw", 0, 3)
	produceTo(k, "orders", 0, 3)
	cfg := routedConfig(t, k, "collide")
	cfg.Topics, cfg.TopicsRegex = nil, "orders.*"
	c := start(t, cfg)
	err, ok := c.wait(30 * time.Second)
	if !ok {
		t.Fatal("the connector kept running with two topics routed to one name")
	}
	for _, want := range []string{"assignment refused", "transforms.route.regex", `"orders-raw" is routed to "orders", which this connector also consumes`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("connector ended with %v, want %q", err, want)
		}
	}
	if ents, err := k.fs.ReadDir(t.Context(), "/topics"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("/topics holds %v (err %v): nothing is written before the refusal", ents, err)
	}
}
