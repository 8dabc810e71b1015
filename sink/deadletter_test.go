package sink

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
)

const testDLQ = "orders-dlq"

// outageMode is how the dead-letter topic is unavailable.
type outageMode int

const (
	// produceRefused: every produce is refused with a retriable error (a
	// broker short of in-sync replicas); the client retries it.
	produceRefused outageMode = iota
	// produceHung: no produce is answered (a broker that takes the request
	// and stalls); an idempotent producer cannot withdraw such a record.
	produceHung
	// createHung: the topic does not exist and no CreateTopics request is
	// answered.
	createHung
	// createDropped: the topic does not exist and the broker drops the
	// connection of every CreateTopics request: an error that is not the
	// broker's answer, so it says nothing of the topic's settings.
	createDropped
)

// dlqOutage makes the fake cluster's dead-letter topic unavailable until
// back is set.
type dlqOutage struct {
	back  atomic.Bool
	asked chan struct{} // closed at the first request the outage holds
	once  sync.Once
}

func newDLQOutage(k *kafkaFixture, mode outageMode) *dlqOutage {
	o := &dlqOutage{asked: make(chan struct{})}
	switch mode {
	case createHung:
		k.cluster.ControlKey(int16(kmsg.CreateTopics), func(kmsg.Request) (kmsg.Response, error, bool) {
			return o.hold(k, nil, nil)
		})
		return o
	case createDropped:
		k.cluster.ControlKey(int16(kmsg.CreateTopics), func(kmsg.Request) (kmsg.Response, error, bool) {
			return o.hold(k, nil, errors.New("injected: connection dropped"))
		})
		return o
	}
	toDLQ := producesToDLQ(k)
	k.cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		preq := req.(*kmsg.ProduceRequest)
		if !toDLQ(preq) {
			return nil, nil, false // handled as usual
		}
		if mode == produceHung {
			return o.hold(k, nil, nil)
		}
		return o.hold(k, refusedProduce(preq, kerr.NotEnoughReplicas), nil)
	})
	return o
}

// hold answers a request with resp, or drops its connection with err,
// or, both nil, never answers, while the outage lasts.
func (o *dlqOutage) hold(k *kafkaFixture, resp kmsg.Response, err error) (kmsg.Response, error, bool) {
	if o.back.Load() {
		return nil, nil, false
	}
	o.once.Do(func() { close(o.asked) })
	k.cluster.KeepControl()
	return resp, err, true
}

// producesToDLQ tells a produce request to the dead-letter topic, which
// names it (v0-v12) or gives its id (v13+).
func producesToDLQ(k *kafkaFixture) func(*kmsg.ProduceRequest) bool {
	info := k.cluster.TopicInfo(testDLQ)
	if info == nil {
		k.t.Fatalf("no topic %s in the fake cluster", testDLQ)
	}
	return func(preq *kmsg.ProduceRequest) bool {
		return len(preq.Topics) > 0 && (preq.Topics[0].Topic == testDLQ || preq.Topics[0].TopicID == info.TopicID)
	}
}

func refusedProduce(preq *kmsg.ProduceRequest, code *kerr.Error) *kmsg.ProduceResponse {
	resp := preq.ResponseKind().(*kmsg.ProduceResponse)
	resp.Version = preq.Version
	for _, tp := range preq.Topics {
		rt := kmsg.ProduceResponseTopic{Topic: tp.Topic, TopicID: tp.TopicID}
		for _, p := range tp.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.ProduceResponseTopicPartition{Partition: p.Partition, ErrorCode: code.Code})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// dlqRecords is how many records the dead-letter topic holds.
func dlqRecords(t *testing.T, k *kafkaFixture) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, testDLQ)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// committedIn counts the records committed for one partition.
func committedIn(k *kafkaFixture, p int32) int64 {
	rep, _ := verify.Check(context.Background(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic})
	var n int64
	for _, f := range rep.Files {
		if f.Range.Partition == p {
			n += f.Records
		}
	}
	return n
}

// dlqOutageCases are the ways a dead-letter topic is unavailable.
var dlqOutageCases = []struct {
	name string
	mode outageMode
}{
	{"produce refused", produceRefused},
	{"produce never answered", produceHung},
	{"topic creation never answered", createHung},
	{"topic creation's connection dropped", createDropped},
}

// newOutageFixture is a fixture whose dead-letter topic is unavailable as
// mode says; it exists unless its creation is what fails.
func newOutageFixture(t *testing.T, parts int32, mode outageMode) (*kafkaFixture, *dlqOutage) {
	topics := []string{testTopic, testDLQ}
	if mode == createHung || mode == createDropped {
		topics = topics[:1]
	}
	k := newKafkaFixture(t, parts, topics...)
	return k, newDLQOutage(k, mode)
}

// TestDeadLetterOutageHoldsOnlyItsPartition (issue 20, N5): partition 0
// meets a bad record while the dead-letter topic is unavailable. The
// dead-letter produce waited in the poll loop for as long as the outage
// lasted, which held every partition of the connector; now it waits
// DeadLetterWait, then partition 0 breaks and retries, and partition 1
// keeps committing meanwhile. Once the topic takes records, the bad record
// is in it once and nowhere in HDFS, and every other offset is committed
// once.
func TestDeadLetterOutageHoldsOnlyItsPartition(t *testing.T) {
	for _, tc := range dlqOutageCases {
		t.Run(tc.name, func(t *testing.T) {
			k, outage := newOutageFixture(t, 2, tc.mode)
			const badAt = 10
			var recs []*kgo.Record
			for seq := int64(0); seq < 20; seq++ {
				if seq == badAt {
					recs = append(recs, &kgo.Record{Partition: 0, Value: []byte("not framed")})
				} else {
					recs = append(recs, k.good(0, seq))
				}
				recs = append(recs, k.good(1, seq))
			}
			k.produce(recs...)
			cfg := k.config("dlq-outage")
			cfg.Tolerance, cfg.DLQTopic, cfg.DeadLetterWait = ToleranceAll, testDLQ, 200*time.Millisecond
			// A hung request is given up (and sent again) after a second, not 20.
			cfg.KafkaOpts = append(cfg.KafkaOpts, kgo.ProduceRequestTimeout(time.Second), kgo.RequestTimeoutOverhead(time.Second))
			if tc.mode == createDropped {
				// The client gives the error back within the wait, not after 20 tries.
				cfg.KafkaOpts = append(cfg.KafkaOpts, kgo.RequestRetries(0))
			}
			c := start(t, cfg)
			waitFor(t, "partition 0 reported broken on the dead-letter topic", func() bool {
				pr, broken := c.Health().Broken[testTopic+"/0"]
				return broken && strings.Contains(pr.Err, `dead-letter topic "`+testDLQ+`"`)
			})
			var more []*kgo.Record
			for seq := int64(20); seq < 150; seq++ {
				more = append(more, k.good(1, seq))
			}
			k.produce(more...)
			waitFor(t, "partition 1 committed while the dead-letter topic is down", func() bool { return committedIn(k, 1) == 150 })
			if n := dlqRecords(t, k); n != 0 {
				t.Fatalf("the dead-letter topic took %d records while it was down", n)
			}
			outage.back.Store(true)
			waitFor(t, "partition 0 committed after the outage", func() bool { return committedIn(k, 0) == 19 })
			if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, SeqField: "seq",
				Want: map[int32]int64{0: 20, 1: 150}, Skip: map[int32][2]int64{0: {badAt, badAt + 1}}}); err != nil {
				t.Fatal(err)
			}
			if n, dl := dlqRecords(t, k), c.Stats.DeadLettered.Load(); n != 1 || dl != 1 {
				t.Fatalf("the dead-letter topic holds %d records, %d counted dead-lettered; want the bad record once", n, dl)
			}
			if got := consumeAll(t, k, testDLQ, 1); string(got[0].Value) != "not framed" {
				t.Fatalf("dead-lettered %q", got[0].Value)
			}
		})
	}
}

// TestShutdownDuringDeadLetterWait (issue 20, N5 with D6): SIGTERM arrives
// while partition 0 waits for an unavailable dead-letter topic. Run used to
// fail with the produce's context error, which discarded every partition's
// open files; now partition 1's are committed, partition 0's are discarded
// (its records, the bad one too, are read again at the next start), and
// Run returns nil.
func TestShutdownDuringDeadLetterWait(t *testing.T) {
	for _, tc := range dlqOutageCases {
		t.Run(tc.name, func(t *testing.T) {
			k, outage := newOutageFixture(t, 2, tc.mode)
			var recs []*kgo.Record
			for seq := int64(0); seq < 50; seq++ {
				recs = append(recs, k.good(1, seq))
			}
			for seq := int64(0); seq < 10; seq++ {
				recs = append(recs, k.good(0, seq))
			}
			k.produce(recs...)
			cfg := k.config("dlq-shutdown")
			cfg.Tolerance, cfg.DLQTopic, cfg.DeadLetterWait = ToleranceAll, testDLQ, time.Hour
			cfg.FlushSize, cfg.RotateInterval = 1000, 0 // nothing commits before the shutdown
			c := start(t, cfg)
			// The wait holds the poll loop (deadletter.Send), so the good
			// records are written first: produced with the bad one, those
			// of a later poll than it would never be (a flake, 1 in ~30).
			waitFor(t, "both partitions' records in open files", func() bool { return c.Stats.Records.Load() == 60 })
			k.produce(&kgo.Record{Partition: 0, Value: []byte("not framed")})
			select {
			case <-outage.asked:
			case <-time.After(30 * time.Second):
				t.Fatal("timed out waiting for the connector to ask the dead-letter topic")
			}
			c.stop()
			err, stopped := c.wait(30 * time.Second)
			if !stopped || err != nil {
				t.Fatalf("Run after SIGTERM during the dead-letter wait: stopped=%v err=%v; want nil", stopped, err)
			}
			// Want names partition 1 only: a file of partition 0 fails the check.
			if _, err := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, SeqField: "seq", Want: map[int32]int64{1: 50}}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBadRecordErrorsNameTheirTolerance (issue 20, N5): every error of a
// bad record says which errors.tolerance is in force and where the record
// is; a dead-letter failure names the topic, and an outage the wait. The
// error of a failed dead-letter produce said "errors.tolerance=none stops
// the connector" although the tolerance was all.
func TestBadRecordErrorsNameTheirTolerance(t *testing.T) {
	refused := func(k *kafkaFixture, cfg *Config) {
		toDLQ := producesToDLQ(k)
		k.cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
			preq := req.(*kmsg.ProduceRequest)
			if !toDLQ(preq) {
				return nil, nil, false
			}
			k.cluster.KeepControl()
			return refusedProduce(preq, kerr.TopicAuthorizationFailed), nil, true
		})
		cfg.KafkaFatal = func(err error) error {
			if errors.Is(err, kerr.TopicAuthorizationFailed) {
				return err
			}
			return nil
		}
	}
	cases := []struct {
		name      string
		tolerance Tolerance
		setup     func(*kafkaFixture, *Config)
		stops     bool // the connector stops; else the partition breaks
		want      []string
		notWant   string
	}{
		{"none", ToleranceNone, nil, true,
			[]string{"errors.tolerance=none stops the connector"}, "errors.tolerance=all)"},
		{"all, dead-letter topic refused", ToleranceAll, refused, true,
			[]string{"errors.tolerance=all", `the dead-letter topic "orders-dlq" refused it`, "TOPIC_AUTHORIZATION_FAILED"}, "errors.tolerance=none"},
		{"all, dead-letter topic down", ToleranceAll, func(k *kafkaFixture, _ *Config) { newDLQOutage(k, produceRefused) }, false,
			[]string{"errors.tolerance=all", `the dead-letter topic "orders-dlq"`, "within the dead-letter wait of 200ms"}, "errors.tolerance=none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := newKafkaFixture(t, 1, testTopic, testDLQ)
			k.produce(k.good(0, 0), &kgo.Record{Partition: 0, Value: []byte("not framed")})
			cfg := k.config("tolerance")
			cfg.Tolerance, cfg.DeadLetterWait = tc.tolerance, 200*time.Millisecond
			if tc.tolerance == ToleranceAll {
				cfg.DLQTopic = testDLQ
			}
			if tc.setup != nil {
				tc.setup(k, &cfg)
			}
			c := start(t, cfg)
			var text string
			if tc.stops {
				err, stopped := c.wait(30 * time.Second)
				if !stopped || err == nil {
					t.Fatalf("stopped=%v err=%v; want the connector stopped", stopped, err)
				}
				text = err.Error()
			} else {
				waitFor(t, "partition 0 broken", func() bool {
					_, broken := c.Health().Broken[testTopic+"/0"]
					return broken
				})
				text = c.Health().Broken[testTopic+"/0"].Err
			}
			for _, want := range append(tc.want, `connector "tolerance"`, "topic orders partition 0 offset 1") {
				if !strings.Contains(text, want) {
					t.Errorf("error does not say %q: %s", want, text)
				}
			}
			if strings.Contains(text, tc.notWant) {
				t.Errorf("error says %q: %s", tc.notWant, text)
			}
		})
	}
}
