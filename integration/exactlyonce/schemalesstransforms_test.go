//go:build integration

package exactlyonce

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestSchemalessJSONTransforms (issue 23): a schemaless JSON connector
// (JsonConverter, schemas.enable=false, JsonFormat) with InsertField,
// ReplaceField and MaskField, through the daemon: every object is written
// exactly once, transformed as Connect's applySchemaless would (members in
// the producer's order, the inserted ones at the end, compact), and a value
// that is not an object goes to the dead-letter topic at stage
// TRANSFORMATION.
func TestSchemalessJSONTransforms(t *testing.T) {
	t.Parallel()
	const n = 100
	s := newSetup(t, 1)
	var values [][]byte
	for seq := 0; seq < n; seq++ {
		values = append(values, fmt.Appendf(nil, `{"seq":%d,"name":"n%d","ssn":"123-%d","note":"x","attrs":{"k": [%d, 1.50]}}`, seq, seq, seq, seq))
	}
	values = append(values, []byte(`[1, 2]`))
	s.produceValues(0, values)
	dlq := s.dlqTopic()
	d := s.start(s.connector("schemaless-smt", map[string]string{"format.class": "io.confluent.connect.hdfs.json.JsonFormat",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"flush.size": "50", "rotate.interval.ms": "1000",
		"transforms":                 "ins,rep,mask",
		"transforms.ins.type":        "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.ins.topic.field": "src", "transforms.ins.offset.field": "off",
		"transforms.rep.type":    "org.apache.kafka.connect.transforms.ReplaceField$Value",
		"transforms.rep.exclude": "note", "transforms.rep.renames": "name:user",
		"transforms.mask.type":   "org.apache.kafka.connect.transforms.MaskField$Value",
		"transforms.mask.fields": "ssn",
		"errors.tolerance":       "all", "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.context.headers.enable": "true"}))
	s.waitCommitted(n, time.Minute)
	bad := s.consume(dlq, 1)[0]
	h := map[string]string{}
	for _, kv := range bad.Headers {
		h[kv.Key] = string(kv.Value)
	}
	if string(bad.Value) != "[1, 2]" || h["__connect.errors.offset"] != fmt.Sprint(n) || h["__connect.errors.stage"] != "TRANSFORMATION" {
		t.Fatalf("DLQ record %q headers %v", bad.Value, h)
	}
	d.stop()
	rep := s.check(map[int32]int64{0: n})
	var lines []string
	for _, f := range rep.Files {
		rc, err := s.fs.Open(t.Context(), f.Path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
	}
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	for seq, line := range lines {
		want := fmt.Sprintf(`{"seq":%d,"user":"n%d","ssn":"","attrs":{"k":[%d,1.50]},"src":"%s","off":%d}`, seq, seq, seq, s.topic, seq)
		if line != want {
			t.Fatalf("line %d = %s\nwant %s", seq, line, want)
		}
	}
	t.Logf("%d schemaless JSON values transformed exactly once in %d files", rep.Records, len(rep.Files))
}
