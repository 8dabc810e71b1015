package sink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/format/avro"
	jsonfmt "github.com/hdfs-sink/hdfs-sink/format/json"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

type kafkaFixture struct {
	t       *testing.T
	cluster *kfake.Cluster
	reg     *registry.Memory
	id      int32
	fs      storage.FS
}

func newKafkaFixture(t *testing.T, parts int32, topics ...string) *kafkaFixture {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	reg := registry.NewMemory()
	id, err := reg.Register(demodata.Schema)
	if err != nil {
		t.Fatal(err)
	}
	return &kafkaFixture{t: t, cluster: c, reg: reg, id: id, fs: storagetest.NewMemFS()}
}

func (k *kafkaFixture) config(name string) Config {
	f, err := avro.New(avro.Options{})
	if err != nil {
		k.t.Fatal(err)
	}
	return Config{
		Name: name, Brokers: k.cluster.ListenAddrs(), GroupID: "connect-" + name, Topics: []string{testTopic},
		WriteSettings: WriteSettings{
			FS: k.fs, Format: f, Partitioner: partitioner.Default{},
			TopicsDir: func(string) string { return "/topics" }, LogsDir: func(string) string { return "/logs" },
			Pad: 10, FlushSize: 100, RotateInterval: 300 * time.Millisecond,
		},
		Registry: k.reg, RetryBackoff: 100 * time.Millisecond, Logger: testLogger(), TickInterval: 50 * time.Millisecond,
		KafkaOpts: []kgo.Opt{kgo.FetchMaxWait(50 * time.Millisecond)},
	}
}

func (k *kafkaFixture) produce(recs ...*kgo.Record) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(testTopic))
	if err != nil {
		k.t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		k.t.Fatal(err)
	}
}

// produceRange produces the records seq from..to-1 of each of partitions
// 0..parts-1.
func (k *kafkaFixture) produceRange(parts int32, from, to int64) {
	var recs []*kgo.Record
	for seq := from; seq < to; seq++ {
		for p := range parts {
			recs = append(recs, k.good(p, seq))
		}
	}
	k.produce(recs...)
}

func (k *kafkaFixture) good(p int32, seq int64) *kgo.Record {
	v, err := demodata.Value(k.id, p, seq)
	if err != nil {
		k.t.Fatal(err)
	}
	return &kgo.Record{Partition: p, Value: v}
}

// running is a connector started by start.
type running struct {
	*Connector
	stop func()
	done chan struct{} // closed when Run returned
	err  error         // Run's result, once done is closed
}

// start runs a connector until the test ends.
func start(t *testing.T, cfg Config) *running {
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Connector: c, stop: cancel, done: make(chan struct{})}
	go func() { r.err = c.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		if _, ok := r.wait(30 * time.Second); !ok {
			t.Error("connector did not stop")
		}
	})
	return r
}

// wait returns Run's result, or false if it has not returned within d.
func (r *running) wait(d time.Duration) (error, bool) {
	select {
	case <-r.done:
		return r.err, true
	case <-time.After(d):
		return nil, false
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func committedRecords(fs storage.FS) int64 {
	rep, _ := verify.Check(context.Background(), fs, verify.Options{TopicsDir: "/topics", Topic: testTopic})
	return rep.Records
}

func TestConnectorEndToEnd(t *testing.T) {
	k := newKafkaFixture(t, 3, testTopic)
	var recs []*kgo.Record
	for seq := int64(0); seq < 250; seq++ {
		for p := int32(0); p < 3; p++ {
			recs = append(recs, k.good(p, seq))
		}
	}
	k.produce(recs...)
	c := start(t, k.config("e2e"))
	waitFor(t, "750 committed records", func() bool { return committedRecords(k.fs) == 750 })
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 250, 1: 250, 2: 250}, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
	if got := c.Stats.Records.Load(); got != 750 {
		t.Fatalf("Stats.Records = %d", got)
	}
}

// badValues are records a sink can never write, each with what it lacks.
func badValues(k *kafkaFixture) map[string][]byte {
	good, _ := demodata.Value(k.id, 0, 1)
	corrupt := append([]byte{}, good[:8]...)
	return map[string][]byte{
		"not Confluent-framed": []byte("plain text"),
		"unknown schema id":    schema.AppendWire(nil, 4242, good[5:]),
		"corrupt datum":        corrupt,
	}
}

func TestBadRecordStopsConnectorWithTolerationNone(t *testing.T) {
	for name, bad := range badValues(newKafkaFixture(t, 1, testTopic)) {
		t.Run(name, func(t *testing.T) {
			k := newKafkaFixture(t, 1, testTopic)
			k.produce(k.good(0, 0), k.good(0, 1), &kgo.Record{Partition: 0, Value: bad}, k.good(0, 3))
			err, stopped := start(t, k.config("strict")).wait(30 * time.Second)
			if !stopped {
				t.Fatal("connector did not stop on a bad record")
			}
			var bre *BadRecordError
			if !errors.As(err, &bre) || bre.Topic != testTopic || bre.Partition != 0 || bre.Offset != 2 {
				t.Fatalf("err = %v; want a BadRecordError at %s/0 offset 2", err, testTopic)
			}
			for _, want := range []string{`connector "strict"`, "topic orders partition 0 offset 2"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not name %q", err, want)
				}
			}
			if n := committedRecords(k.fs); n != 0 {
				t.Fatalf("%d records committed; the records before the bad one must be re-read after the fix, not half-committed", n)
			}
		})
	}
}

func TestBadRecordsGoToDeadLetterTopic(t *testing.T) {
	const dlq = "orders-dlq"
	k := newKafkaFixture(t, 1, testTopic, dlq)
	bads := badValues(k)
	var recs []*kgo.Record
	seq := int64(0)
	var badOffsets []int64
	for name, v := range bads {
		recs = append(recs, k.good(0, seq))
		seq++
		recs = append(recs, &kgo.Record{Partition: 0, Value: v, Key: []byte(name)})
		badOffsets = append(badOffsets, seq)
		seq++
	}
	k.produce(recs...)
	cfg := k.config("tolerant")
	cfg.Tolerance, cfg.DLQTopic, cfg.DLQHeaders = ToleranceAll, dlq, true
	c := start(t, cfg)
	waitFor(t, "good records committed", func() bool { return committedRecords(k.fs) == int64(len(bads)) })
	if got := c.Stats.DeadLettered.Load(); got != int64(len(bads)) {
		t.Fatalf("dead-lettered %d, want %d", got, len(bads))
	}
	got := consumeAll(t, k, dlq, len(bads))
	for i, r := range got {
		h := headers(r)
		if h["__connect.errors.topic"] != testTopic || h["__connect.errors.partition"] != "0" || h["__connect.errors.offset"] != fmt.Sprint(badOffsets[i]) {
			t.Fatalf("DLQ record %d headers = %v; want origin %s/0@%d", i, h, testTopic, badOffsets[i])
		}
		if h["__connect.errors.exception.message"] == "" || h["__connect.errors.connector.name"] != "tolerant" {
			t.Fatalf("DLQ record %d lacks the reason: %v", i, h)
		}
		if string(r.Value) != string(bads[string(r.Key)]) {
			t.Fatalf("DLQ record %d value changed", i)
		}
	}
}

func consumeAll(t *testing.T, k *kafkaFixture, topic string, n int) []*kgo.Record {
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.cluster.ListenAddrs()...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		out = append(out, cl.PollFetches(ctx).Records()...)
	}
	if len(out) != n {
		t.Fatalf("%s holds %d records, want %d", topic, len(out), n)
	}
	return out
}

func headers(r *kgo.Record) map[string]string {
	m := map[string]string{}
	for _, h := range r.Headers {
		m[h.Key] = string(h.Value)
	}
	return m
}

func TestTombstonesIgnoredAndCounted(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	k.produce(k.good(0, 0), &kgo.Record{Partition: 0, Value: nil}, k.good(0, 2))
	c := start(t, k.config("nulls"))
	waitFor(t, "2 records committed", func() bool { return committedRecords(k.fs) == 2 })
	if got := c.Stats.NullsIgnored.Load(); got != 1 {
		t.Fatalf("NullsIgnored = %d", got)
	}
}

// TestRebalanceKeepsExactlyOnce: a second connector joins mid-stream and
// the first leaves later; every offset still lands once.
func TestRebalanceKeepsExactlyOnce(t *testing.T) {
	const parts, perPart = 4, 600
	k := newKafkaFixture(t, parts, testTopic)
	produceRange := func(from, to int64) { k.produceRange(parts, from, to) }
	produceRange(0, 200)
	cfg := k.config("rebalance")
	first := start(t, cfg)
	waitFor(t, "first commits", func() bool { return committedRecords(k.fs) >= 200 })
	start(t, cfg)
	produceRange(200, 400)
	waitFor(t, "progress with two members", func() bool { return committedRecords(k.fs) >= 1000 })
	first.stop()
	if err, ok := first.wait(30 * time.Second); !ok || err != nil {
		t.Fatalf("first connector: stopped=%v err=%v", ok, err)
	}
	produceRange(400, perPart)
	waitFor(t, "all committed", func() bool { return committedRecords(k.fs) >= parts*perPart })
	want := map[int32]int64{}
	for p := int32(0); p < parts; p++ {
		want[p] = perPart
	}
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: want, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}

// TestStorageOutageRecovers: HDFS refuses writes for a while; the partition
// backs off, recovers, rewinds, and loses nothing.
func TestStorageOutageRecovers(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	mem := k.fs.(*storagetest.MemFS)
	var recs []*kgo.Record
	for seq := int64(0); seq < 300; seq++ {
		recs = append(recs, k.good(0, seq))
	}
	k.produce(recs...)
	boom := errors.New("injected: datanode unreachable")
	for i := 0; i < 3; i++ {
		mem.FailNext(storagetest.OpClose, storagetest.PathContains("+tmp"), boom)
	}
	c := start(t, k.config("outage"))
	waitFor(t, "300 committed", func() bool { return committedRecords(k.fs) == 300 })
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 300}, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
	if c.Stats.Recoveries.Load() < 2 {
		t.Fatalf("Recoveries = %d: the injected close failures did not trigger recovery", c.Stats.Recoveries.Load())
	}
}

// TestMemoryCeilingRotatesEarly: with flush.size out of reach and no timers,
// only the memory ceiling can commit files, and every offset still lands once.
func TestMemoryCeilingRotatesEarly(t *testing.T) {
	const parts, perPart = 6, 400
	k := newKafkaFixture(t, parts, testTopic)
	var recs []*kgo.Record
	for seq := int64(0); seq < perPart; seq++ {
		for p := int32(0); p < parts; p++ {
			recs = append(recs, k.good(p, seq))
		}
	}
	k.produce(recs...)
	cfg := k.config("memory")
	cfg.FlushSize, cfg.RotateInterval = 1_000_000, 0
	cfg.MemoryMax = 64 << 10 // less than one Avro block (64 KiB) per partition
	c := start(t, cfg)
	waitFor(t, "all consumed", func() bool { return c.Stats.Records.Load() == parts*perPart })
	c.stop()
	if _, ok := c.wait(30 * time.Second); !ok {
		t.Fatal("connector did not stop")
	}
	want := map[int32]int64{}
	for p := int32(0); p < parts; p++ {
		want[p] = perPart
	}
	if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: want, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
	if c.Stats.MemoryRotations.Load() == 0 {
		t.Fatal("the ceiling never forced a rotation")
	}
	if peak := c.Stats.PeakBuffered.Load(); peak > cfg.MemoryMax {
		t.Fatalf("buffered %d bytes after enforcement, ceiling %d", peak, cfg.MemoryMax)
	}
	if open := c.Stats.PeakOpenFiles.Load(); open < 2 || open > parts {
		t.Fatalf("peak open files %d, want 2..%d (one per partition at most)", open, parts)
	}
}

// TestExtraColumns: hdfs.sink.extra.columns appends Kafka metadata to each
// record; the file reads back with the extended schema and exact values.
func TestExtraColumns(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	var recs []*kgo.Record
	for seq := int64(0); seq < 5; seq++ {
		r := k.good(0, seq)
		if seq%2 == 0 {
			r.Key = []byte(fmt.Sprint("k", seq))
			r.Headers = []kgo.RecordHeader{{Key: "trace", Value: []byte("t1")}, {Key: "empty"}}
		}
		r.Timestamp = time.UnixMilli(1_700_000_000_000 + seq)
		recs = append(recs, r)
	}
	k.produce(recs...)
	cfg := k.config("extras")
	cfg.ExtraColumns = []string{"topic", "partition", "offset", "timestamp", "key", "headers"}
	c := start(t, cfg)
	waitFor(t, "5 committed", func() bool { return committedRecords(k.fs) == 5 })
	c.stop()
	c.wait(30 * time.Second)
	rep, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: map[int32]int64{0: 5}, SeqField: "kafka_offset"})
	if err != nil {
		t.Fatalf("kafka_offset does not match the record offsets: %v", err)
	}
	rows := readRows(t, k.fs, rep.Files[0].Path)
	for i, row := range rows {
		seq := int64(i)
		if row["seq"] != seq || row["kafka_topic"] != testTopic || row["kafka_partition"] != int32(0) ||
			!row["kafka_timestamp"].(time.Time).Equal(time.UnixMilli(1_700_000_000_000+seq)) {
			t.Fatalf("row %d: %v", i, row)
		}
		key, headers := row["kafka_key"], row["kafka_headers"].([]any)
		if seq%2 == 0 {
			h0 := headers[0].(map[string]any)
			if fmt.Sprint(key) != fmt.Sprintf("map[bytes:[%s]]", strings.Trim(fmt.Sprint([]byte(fmt.Sprint("k", seq))), "[]")) ||
				len(headers) != 2 || h0["key"] != "trace" || fmt.Sprint(headers[1].(map[string]any)["value"]) != "<nil>" {
				t.Fatalf("row %d key/headers: %v %v", i, key, headers)
			}
		} else if key != nil || len(headers) != 0 {
			t.Fatalf("row %d: want null key, no headers: %v %v", i, key, headers)
		}
	}
}

func readRows(t *testing.T, fs storage.FS, p string) []map[string]any {
	t.Helper()
	rc, err := fs.Open(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ocf, err := goavro.NewOCFReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for ocf.Scan() {
		v, err := ocf.Read()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v.(map[string]any))
	}
	return out
}

// TestSchemalessValues: values without a schema are written one per line,
// named by their offsets, exactly once; a tombstone is a null value and is
// ignored. StringConverter/ByteArrayConverter values go to .txt files as
// they are; JsonConverter values (schemas.enable=false) to .json files,
// each compacted onto its line.
func TestSchemalessValues(t *testing.T) {
	jsonFormat, err := jsonfmt.New(jsonfmt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		format format.Format
		value  convert.Converter
		values []string
		want   string
	}{
		{"string", jsonfmt.NewText(), nil, []string{"hello", "wörld"}, "hello\nwörld\n"},
		{"json", jsonFormat, convert.NewJSON(convert.JSONOptions{SchemasEnable: false}),
			[]string{"{\n  \"id\": 1,\n  \"tags\": [\"a\", \"b\"]\n}", `"just a string"`}, "{\"id\":1,\"tags\":[\"a\",\"b\"]}\n\"just a string\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKafkaFixture(t, 1, testTopic)
			k.produce(&kgo.Record{Value: []byte(tc.values[0])}, &kgo.Record{Value: nil}, &kgo.Record{Value: []byte(tc.values[1])})
			cfg := k.config("plain")
			cfg.Format, cfg.Schemaless, cfg.Registry, cfg.Value = tc.format, true, nil, tc.value
			c := start(t, cfg)
			waitFor(t, "a committed file", func() bool {
				n, _ := verify.CountByNames(t.Context(), k.fs, "/topics", testTopic)
				return n == 3
			})
			c.stop()
			c.wait(30 * time.Second)
			name := "/topics/" + testTopic + "/partition=0/" + testTopic + "+0+0000000000+0000000002" + tc.format.Extension()
			rc, err := k.fs.Open(t.Context(), name)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			if b, _ := io.ReadAll(rc); string(b) != tc.want {
				t.Fatalf("%s holds %q, want %q", name, b, tc.want)
			}
			if c.Stats.NullsIgnored.Load() != 1 {
				t.Fatalf("tombstone not counted")
			}
		})
	}
}

// TestReleaseResumesPausedPartition: a partition paused after a failed write
// and then revoked or lost must not stay paused in the client, or it is
// never fetched again when it is assigned back.
func TestReleaseResumesPausedPartition(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	c, err := New(k.config("pause"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.cl.Close()
	o := c.newOwned(tp{testTopic, 0})
	c.parts.put(o) // the client may be joining the group and assigning meanwhile
	c.breakPartition(o, errors.New("injected write failure"))
	if paused := c.cl.PauseFetchPartitions(nil); len(paused[testTopic]) != 1 {
		t.Fatalf("broken partition not paused: %v", paused)
	}
	c.release(context.Background(), map[string][]int32{testTopic: {0}}, false)
	if paused := c.cl.PauseFetchPartitions(nil); len(paused[testTopic]) != 0 {
		t.Fatalf("released partition still paused: %v", paused)
	}
}
