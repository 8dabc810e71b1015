package sink

import (
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/convert"
	jsonfmt "github.com/hdfs-sink/hdfs-sink/format/json"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// TestSchemalessJSONTransformed: a schemaless JSON connector (JsonConverter,
// schemas.enable=false) with InsertField, ReplaceField and MaskField
// writes each value transformed, compact, one per line, in the producer's
// member order with the inserted ones at the end. A value that is not an
// object fails the transforms (Connect's requireMap): with
// errors.tolerance=all it goes to the DLQ at stage TRANSFORMATION and its
// offset is still committed; a tombstone stays a null value, ignored.
func TestSchemalessJSONTransformed(t *testing.T) {
	const dlq = "json-dlq"
	k := newKafkaFixture(t, 1, testTopic, dlq)
	k.produce(
		&kgo.Record{Value: []byte("{\n  \"name\": \"ann\",\n  \"ssn\": \"123-45\",\n  \"note\": \"x\",\n  \"n\": 1.5\n}")},
		&kgo.Record{Value: []byte(`[1, 2]`)},
		&kgo.Record{Value: nil},
		&kgo.Record{Value: []byte(`{"name":"bob","n":2,"tags":["a", "b"]}`)},
	)
	chain, err := transform.New([]configs.TransformSpec{
		{Alias: "ins", Class: "InsertField$Value", Props: map[string]string{"topic.field": "src", "offset.field": "off"}},
		{Alias: "rep", Class: "ReplaceField$Value", Props: map[string]string{"exclude": "note", "renames": "name:user"}},
		{Alias: "mask", Class: "MaskField$Value", Props: map[string]string{"fields": "ssn"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if name := chain.NeedsSchemas(transform.SchemalessJSON); name != "" {
		t.Fatalf("NeedsSchemas = %q", name)
	}
	jsonFormat, err := jsonfmt.New(jsonfmt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := k.config("json-smt")
	cfg.Format, cfg.Schemaless, cfg.Registry, cfg.Value = jsonFormat, true, nil, convert.NewJSON(convert.JSONOptions{SchemasEnable: false})
	cfg.Transforms = chain
	cfg.Tolerance, cfg.DLQTopic, cfg.DLQHeaders = ToleranceAll, dlq, true
	c := start(t, cfg)
	waitFor(t, "the four offsets committed", func() bool {
		rep, _ := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic})
		return len(rep.Files) > 0 && rep.Files[len(rep.Files)-1].Range.End >= 3
	})
	c.stop()
	c.wait(30 * time.Second)
	// Check reports the offsets the DLQ and the tombstone left out of the
	// files; the lines below are what matters here.
	rep, _ := verify.Check(t.Context(), k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic})
	var got string
	for _, f := range rep.Files {
		rc, err := k.fs.Open(t.Context(), f.Path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		got += string(b)
	}
	want := `{"user":"ann","ssn":"","n":1.5,"src":"` + testTopic + `","off":0}` + "\n" +
		`{"user":"bob","n":2,"tags":["a","b"],"src":"` + testTopic + `","off":3,"ssn":null}` + "\n"
	if got != want {
		t.Fatalf("files hold\n%s\nwant\n%s", got, want)
	}
	if c.Stats.NullsIgnored.Load() != 1 || c.Stats.DeadLettered.Load() != 1 {
		t.Fatalf("nulls %d, dead-lettered %d", c.Stats.NullsIgnored.Load(), c.Stats.DeadLettered.Load())
	}
	bad := consumeAll(t, k, dlq, 1)[0]
	if h := headers(bad); string(bad.Value) != "[1, 2]" || h["__connect.errors.offset"] != "1" || h["__connect.errors.stage"] != "TRANSFORMATION" {
		t.Fatalf("DLQ record %q headers %v", bad.Value, h)
	}
}
