//go:build integration

package exactlyonce

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
)

// TestTransformChainReadBySpark: a connector file with a chain of three
// value transforms (MaskField, InsertField, ReplaceField) and a Filter
// under a HasHeaderKey predicate, through the daemon with Hive on. The
// filtered offsets are committed but not written, every other offset is
// written exactly once, and Spark reads the transformed columns back.
func TestTransformChainReadBySpark(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	const n, skipFrom, skipTo = 20, 5, 10
	cl := itest.KafkaClient(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for seq := int64(0); seq < n; seq++ {
		v, err := demodata.Value(s.schemaID, 0, seq)
		if err != nil {
			t.Fatal(err)
		}
		r := &kgo.Record{Topic: s.topic, Partition: 0, Value: v}
		if seq >= skipFrom && seq < skipTo {
			r.Headers = []kgo.RecordHeader{{Key: "skip", Value: []byte("yes")}}
		}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	db := itest.UniqueName(t, "smt_")
	d := s.start(s.connector("smt", hiveOn(db, map[string]string{
		"transforms":                       "dropSkipped,mask,addTopic,shape",
		"transforms.dropSkipped.type":      "org.apache.kafka.connect.transforms.Filter",
		"transforms.dropSkipped.predicate": "isSkipped",
		"transforms.mask.type":             "org.apache.kafka.connect.transforms.MaskField$Value",
		"transforms.mask.fields":           "customer",
		"transforms.mask.replacement":      "***",
		"transforms.addTopic.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.addTopic.topic.field":  "src!",
		"transforms.shape.type":            "org.apache.kafka.connect.transforms.ReplaceField$Value",
		"transforms.shape.exclude":         "note",
		"transforms.shape.renames":         "region:area",
		"predicates":                       "isSkipped",
		"predicates.isSkipped.type":        "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
		"predicates.isSkipped.name":        "skip",
	})))
	want := map[int32]int64{0: n}
	skip := map[int32][2]int64{0: {skipFrom, skipTo}}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := verify.Check(context.Background(), s.fs, verify.Options{TopicsDir: s.topicsDir(), Topic: s.topic, Want: want, Skip: skip, SeqField: "seq"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("offsets 0-%d (without %d-%d) not written exactly once: %v", n-1, skipFrom, skipTo-1, err)
		}
		time.Sleep(time.Second)
	}
	table := hive.TableName("${topic}", s.topic)
	hivePartitions(t, db, table, 1, time.Minute)
	d.stop()

	res := itest.SparkSQL(t, fmt.Sprintf("DESCRIBE %s.%s", db, table),
		fmt.Sprintf("SELECT seq, customer, src, area FROM %s.%s ORDER BY seq", db, table))
	cols := map[string]bool{}
	for _, row := range res[0] {
		cols[fmt.Sprint(row["col_name"])] = true
	}
	if cols["note"] || cols["region"] || !cols["src"] || !cols["area"] || !cols["customer"] {
		t.Errorf("columns %v: want src and area, no note or region", cols)
	}
	if len(res[1]) != n-(skipTo-skipFrom) {
		t.Fatalf("Spark reads %d rows, want %d: %v", len(res[1]), n-(skipTo-skipFrom), res[1])
	}
	for _, row := range res[1] {
		if row["customer"] != "***" || row["src"] != s.topic || row["area"] == nil {
			t.Errorf("row %v: want customer ***, src %s, an area", row, s.topic)
		}
	}
}
