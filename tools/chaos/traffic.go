package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/riferrei/srclient"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
)

// Traffic produces demodata records at a steady rate, round-robin over the
// topic's partitions, each with seq equal to the offset it lands at, so
// the verifier can prove where every committed record came from. It keeps
// the per-partition counts the exactly-once check expects.
//
// Produce calls block through broker outages (franz-go's idempotent
// producer retries until the broker is back) rather than fail: a failed
// produce would leave the counts unknown.
type Traffic struct {
	Topic string
	Parts int32
	Rate  int // records per second
	// Speedup makes the records' created_at run this many times faster
	// than the wall clock (a partitioner on that field then opens new
	// directories, and Hive partitions, every few minutes); 0 or 1: real
	// time. Kafka's own timestamps stay real: Kafka 4 refuses timestamps
	// more than an hour ahead, and retention deletes old ones.
	Speedup int

	cfg      Config
	cl       *kgo.Client
	sr       *srclient.SchemaRegistryClient
	start    time.Time
	mu       sync.Mutex
	counts   map[int32]int64
	schemaID int32
	variant  bool // schemaID names a variant with one more (empty) string field
	rr       int64
	err      error
	cancel   context.CancelFunc
	done     chan struct{}
}

// NewTraffic creates topic with parts partitions and registers its schema.
func NewTraffic(ctx context.Context, cfg Config, topic string, parts int32, rate int) (*Traffic, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Kafka), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return nil, err
	}
	t := &Traffic{Topic: topic, Parts: parts, Rate: rate, cfg: cfg, cl: cl,
		sr: srclient.NewSchemaRegistryClient(cfg.Registry), counts: map[int32]int64{}}
	if err := t.createTopic(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	sch, err := t.sr.CreateSchema(topic+"-value", demodata.Schema, srclient.Avro)
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("schema registry %s: register: %w", cfg.Registry, err)
	}
	t.schemaID = int32(sch.ID())
	return t, nil
}

func (t *Traffic) createTopic(ctx context.Context) error {
	resp, err := kadm.NewClient(t.cl).CreateTopic(ctx, t.Parts, 1, nil, t.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("kafka %s: create topic %s: %w", t.cfg.Kafka, t.Topic, err)
	}
	return nil
}

// RegisterVariant registers a variant of the schema that no record has
// used yet (one more string field, empty by default: BACKWARD-compatible);
// Use then produces with it. n makes the variant's field name unique.
// Registering and using are apart so a fault can stop the registry in
// between: the daemon then meets a schema id it has never fetched while
// the registry is down.
func (t *Traffic) RegisterVariant(n int) (int32, error) {
	text := strings.Replace(demodata.Schema, `"default":"eu"}`,
		fmt.Sprintf(`"default":"eu"}, {"name":"variant_%d","type":"string","default":""}`, n), 1)
	sch, err := t.sr.CreateSchema(t.Topic+"-value", text, srclient.Avro)
	if err != nil {
		return 0, fmt.Errorf("schema registry %s: register variant %d: %w", t.cfg.Registry, n, err)
	}
	return int32(sch.ID()), nil
}

// Use produces with the variant id from now on.
func (t *Traffic) Use(id int32) {
	t.mu.Lock()
	t.schemaID, t.variant = id, true
	t.mu.Unlock()
}

// Start produces in the background until Stop.
func (t *Traffic) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel, t.done, t.start = cancel, make(chan struct{}), time.Now()
	go t.loop(ctx)
}

func (t *Traffic) loop(ctx context.Context) {
	defer close(t.done)
	const tick = 100 * time.Millisecond
	per := max(1, t.Rate/10)
	next := time.Now()
	for ctx.Err() == nil {
		if err := t.produce(per); err != nil {
			t.mu.Lock()
			t.err = err
			t.mu.Unlock()
			return
		}
		next = next.Add(tick)
		if d := time.Until(next); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		} else {
			next = time.Now() // after an outage: go on at the rate, do not burst
		}
	}
}

// produce sends n records and checks each landed at its seq.
func (t *Traffic) produce(n int) error {
	t.mu.Lock()
	recs := make([]*kgo.Record, 0, n)
	next := map[int32]int64{}
	for i := 0; i < n; i++ {
		p := int32(t.rr % int64(t.Parts))
		t.rr++
		r, err := t.record(p, t.counts[p]+next[p])
		if err != nil {
			t.mu.Unlock()
			return err
		}
		next[p]++
		recs = append(recs, r)
	}
	t.mu.Unlock()
	// Never cancelled: a produce that gave up would leave the counts unknown.
	if err := t.cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce to %s: %w", t.Topic, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range recs {
		if r.Offset != t.counts[r.Partition] {
			return fmt.Errorf("partition %d: record with seq %d landed at offset %d; the counts are lost", r.Partition, t.counts[r.Partition], r.Offset)
		}
		t.counts[r.Partition]++
	}
	return nil
}

// record is the record of seq in partition p with the current schema.
func (t *Traffic) record(p int32, seq int64) (*kgo.Record, error) {
	now := time.Now()
	created := now
	if t.Speedup > 1 {
		created = t.start.Add(time.Since(t.start) * time.Duration(t.Speedup))
	}
	v, err := demodata.ValueAt(t.schemaID, p, seq, created.UTC().Truncate(time.Millisecond))
	if err != nil {
		return nil, err
	}
	if t.variant {
		v = append(v, 0) // the variant's extra field: an empty string
	}
	return &kgo.Record{Partition: p, Value: v, Timestamp: now}, nil
}

// Counts is how many records each partition holds so far.
func (t *Traffic) Counts() map[int32]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[int32]int64, len(t.counts))
	for p, c := range t.counts {
		out[p] = c
	}
	for p := int32(0); p < t.Parts; p++ {
		out[p] += 0
	}
	return out
}

// Err is the error that stopped production, if any.
func (t *Traffic) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// Stop stops producing and waits for the last batch.
func (t *Traffic) Stop() {
	if t.cancel != nil {
		t.cancel()
		<-t.done
		t.cancel = nil
	}
}

// Close stops and releases the Kafka client.
func (t *Traffic) Close() {
	t.Stop()
	t.cl.Close()
}

// Total sums counts.
func Total(counts map[int32]int64) int64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}
