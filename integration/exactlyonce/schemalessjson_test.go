//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// TestSchemalessJSONThroughSIGKILL (issue 23): JsonConverter values
// without schemas (schemas.enable=false) in the JSON format, as the
// reference's JsonFormat writes them: one value per line, a value a
// producer pretty-printed compacted onto its line. The daemon is killed
// after the first commits and started again; every offset is in the files
// exactly once, and the bytes that are not JSON are in the dead-letter
// topic with Connect's headers.
func TestSchemalessJSONThroughSIGKILL(t *testing.T) {
	t.Parallel()
	const n = 400
	s := newSetup(t, 1)
	var values [][]byte
	for seq := 0; seq < n; seq++ {
		v := fmt.Sprintf(`{"seq":%d,"name":"n%d","attrs":{"k":[%d,"x"]}}`, seq, seq, seq)
		if seq%7 == 0 {
			v = fmt.Sprintf("{\n  \"seq\": %d,\n  \"name\": \"n%d\",\n  \"attrs\": {\"k\": [%d, \"x\"]}\n}", seq, seq, seq)
		}
		values = append(values, []byte(v))
	}
	values = append(values, []byte("not json {"))
	// The second half is produced after the SIGKILL: so the restarted
	// daemon has records of its own to commit (the first could commit all
	// before the kill lands, and a daemon stopped before it set up its
	// signal handling dies of the SIGTERM).
	s.produceValues(0, values[:n/2])
	dlq := s.dlqTopic()
	cfg := s.connector("schemaless-json", map[string]string{"format.class": "io.confluent.connect.hdfs.json.JsonFormat",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"flush.size": "50", "rotate.interval.ms": "1000",
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.context.headers.enable": "true"})
	d := s.start(cfg)
	s.waitCommitted(100, time.Minute)
	d.signal(syscall.SIGKILL)
	d.wait(30 * time.Second)
	s.produceValues(0, values[n/2:])
	d = s.start(cfg)
	s.waitCommitted(n, 2*time.Minute)
	bad := s.consume(dlq, 1)[0]
	h := map[string]string{}
	for _, kv := range bad.Headers {
		h[kv.Key] = string(kv.Value)
	}
	if string(bad.Value) != "not json {" || h["__connect.errors.offset"] != fmt.Sprint(n) || !strings.Contains(h["__connect.errors.exception.message"], "JsonConverter") {
		t.Fatalf("DLQ record %q headers %v", bad.Value, h)
	}
	d.stop()
	rep := s.check(map[int32]int64{0: n})
	for _, f := range rep.Files {
		if !strings.HasSuffix(f.Path, ".json") {
			t.Fatalf("committed file %s, want .json files", f.Path)
		}
	}
	t.Logf("%d schemaless JSON values exactly once in %d files across a SIGKILL", rep.Records, len(rep.Files))
}

// produceValues produces values to partition p in order, in one batch.
func (s *setup) produceValues(p int32, values [][]byte) {
	s.t.Helper()
	cl := itest.KafkaClient(s.t, kgo.DefaultProduceTopic(s.topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Partition: p, Value: v})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		s.t.Fatalf("Kafka at %s: %v", itest.KafkaAddr(), err)
	}
}
