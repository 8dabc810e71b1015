package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage/local"
)

// resetConnector is a connector file for topic t over a kfake cluster
// whose partition 0 holds offsets 3 to 9 (0-2 deleted, as retention
// would); its store is under data.
func resetConnector(t *testing.T, brokers string) (cfg, data string) {
	t.Helper()
	dir := t.TempDir()
	data = filepath.Join(dir, "data")
	cfg = filepath.Join(dir, "c.json")
	os.WriteFile(cfg, []byte(`{"name":"c","config":{"topics":"t","store.url":"file://`+data+`","flush.size":"10",
		"bootstrap.servers":"`+brokers+`","value.converter":"io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url":"http://127.0.0.1:1"}}`), 0o644)
	return cfg, data
}

func kafkaWithGap(t *testing.T) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 10 {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: "t", Partition: 0, At: 3})
	if _, err := kadm.NewClient(cl).DeleteRecords(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return c.ListenAddrs()[0]
}

// committedOf reads where the store says partition p of t resumes.
func committedOf(t *testing.T, data string, p int32) int64 {
	t.Helper()
	s := sink.WriteSettings{FS: local.New("/"), TopicsDir: func(string) string { return filepath.Join(data, "topics") },
		LogsDir: func(string) string { return filepath.Join(data, "logs") }}
	c, err := sink.CommittedOffset(t.Context(), s, "t", p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOffsetsResetRefusals: offsets reset needs --yes, refuses a topic
// the connector does not consume, an offset outside the partition's log
// and a Kafka it cannot ask (those two unless --force); whatever it
// refuses, the WAL is left as it was.
func TestOffsetsResetRefusals(t *testing.T) {
	brokers := kafkaWithGap(t)
	for _, tt := range []struct {
		name     string
		brokers  string // "": the kfake cluster
		args     []string
		code     int
		says     string
		resumeAt int64 // after it; 0: nothing committed
	}{
		{"without --yes", "", []string{"--topic", "t", "--partition", "0", "--to", "5"}, exitFinding,
			"nothing changed: run again with --yes", 0},
		{"the plan", "", []string{"--topic", "t", "--partition", "0", "--to", "5"}, exitFinding,
			"Kafka's log holds offsets 3 to 9\n  the reset makes it resume at offset 5: offsets 0 to 4 are skipped", 0},
		{"a topic it does not consume", "", []string{"--topic", "u", "--partition", "0", "--to", "5", "--yes"}, exitFinding,
			`connector "c" topic u partition 0: the connector does not consume this topic: its topics are t`, 0},
		{"a partition the topic lacks", "", []string{"--topic", "t", "--partition", "9", "--to", "0", "--yes"}, exitFinding,
			"has no such partition (the topic has 2)", 0},
		{"below the log start", "", []string{"--topic", "t", "--partition", "0", "--to", "2", "--yes"}, exitFinding,
			"offset 2 is below the log start 3 (the log holds offsets 3 to 9): those records are gone; resume at 3 (earliest) or later (--force resets anyway)", 0},
		{"past the log end", "", []string{"--topic", "t", "--partition", "0", "--to", "100", "--yes"}, exitFinding,
			"offset 100 is past the log end 10", 0},
		{"Kafka unreachable", "127.0.0.1:1", []string{"--topic", "t", "--partition", "0", "--to", "5", "--yes"}, exitCantLook,
			"cannot check offset 5 against the log of topic t partition 0: Kafka at 127.0.0.1:1", 0},
		{"inside the log", "", []string{"--topic", "t", "--partition", "0", "--to", "5", "--yes"}, exitOK,
			`ok: connector "c" topic t partition 0 resumes at offset 5`, 5},
		{"earliest", "", []string{"--topic", "t", "--partition", "0", "--to", "earliest", "--yes"}, exitOK, "resumes at offset 3", 3},
		{"outside, forced", "", []string{"--topic", "t", "--partition", "0", "--to", "100", "--yes", "--force"}, exitOK,
			"the offset is not compared with Kafka's log (--force)", 100},
		{"Kafka unreachable, forced", "127.0.0.1:1", []string{"--topic", "t", "--partition", "0", "--to", "42", "--yes", "--force"}, exitOK,
			"resumes at offset 42", 42},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.brokers
			if b == "" {
				b = brokers
			}
			cfg, data := resetConnector(t, b)
			args := append([]string{"offsets", "reset", "--config", cfg}, tt.args...)
			code, out, errOut := runTool(args...)
			if code != tt.code || !strings.Contains(out+errOut, tt.says) {
				t.Fatalf("exit %d, want %d saying %q:\n%s%s", code, tt.code, tt.says, out, errOut)
			}
			if got := committedOf(t, data, 0) + 1; got != tt.resumeAt {
				t.Fatalf("partition 0 resumes at %d after it, want %d", got, tt.resumeAt)
			}
		})
	}
}
