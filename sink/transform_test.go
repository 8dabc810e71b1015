package sink

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

func chainForTest(t *testing.T) *transform.Chain {
	t.Helper()
	chain, err := transform.New([]configs.TransformSpec{
		{Alias: "drop", Class: "Filter", Predicate: "skip"},
		{Alias: "mask", Class: "MaskField$Value", Props: map[string]string{"fields": "customer", "replacement": "***"}},
		{Alias: "ins", Class: "InsertField$Value", Props: map[string]string{"topic.field": "src!"}},
		{Alias: "ren", Class: "ReplaceField$Value", Props: map[string]string{"exclude": "note", "renames": "region:area"}},
	}, []configs.PredicateSpec{{Alias: "skip", Class: "HasHeaderKey", Props: map[string]string{"name": "skip"}}})
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

// TestTransformsApplied: the chain runs between decoding and the files:
// records with the header are dropped (and their offsets still
// committed), the others are written with the transformed schema.
func TestTransformsApplied(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	var recs []*kgo.Record
	for seq := int64(0); seq < 6; seq++ {
		r := k.good(0, seq)
		if seq%2 == 1 {
			r.Headers = []kgo.RecordHeader{{Key: "skip"}}
		}
		recs = append(recs, r)
	}
	k.produce(recs...)
	cfg := k.config("smt")
	cfg.Transforms = chainForTest(t)
	cfg.FlushSize = 3
	c := start(t, cfg)
	waitFor(t, "all offsets committed", func() bool {
		rep, _ := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic})
		return len(rep.Files) > 0 && rep.Files[len(rep.Files)-1].Range.End >= 4
	})
	c.stop()
	c.wait(30 * time.Second)
	if got := c.Stats.Filtered.Load(); got != 3 {
		t.Errorf("Filtered = %d, want 3", got)
	}
	rep, _ := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic})
	var rows []map[string]any
	for _, f := range rep.Files {
		rows = append(rows, readRows(t, k.fs, f.Path)...)
	}
	if len(rows) != 3 {
		t.Fatalf("rows = %v, want seq 0, 2, 4", rows)
	}
	for i, row := range rows {
		_, hasNote := row["note"]
		if row["seq"] != int64(2*i) || row["customer"] != "***" || row["src"] != testTopic || hasNote || row["area"] == nil {
			t.Errorf("row %d = %v", i, row)
		}
	}
}

// TestTransformFailureIsABadRecord: a transform that fails on a record
// (a required timestamp it lacks) is the record's fault: errors.tolerance
// applies, here none, which stops the connector naming the transform.
func TestTransformFailureIsABadRecord(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	r := k.good(0, 0)
	k.produce(r)
	cfg := k.config("smt-bad")
	chain, err := transform.New([]configs.TransformSpec{{Alias: "ins", Class: "Cast$Value", Props: map[string]string{"spec": "customer:int64"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Transforms = chain
	c := start(t, cfg)
	err, _ = c.wait(30 * time.Second)
	var bad *BadRecordError
	if !errors.As(err, &bad) || !errors.Is(err, transform.ErrTransform) || bad.Offset != 0 {
		t.Fatalf("connector ended with %v, want a bad record at offset 0 from the transform", err)
	}
}
