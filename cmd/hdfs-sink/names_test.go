package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// With filename.offset.zero.pad.width 10 and the string format (".txt"),
// 227 characters is the longest topic whose partitions 0 to 9 fit 255
// bytes: 227 + "+9+" + 2×10 digits + "+" + ".txt" = 255. Partition 10 and
// above need a topic one character shorter.
var (
	tenPartitions    = strings.Repeat("a", 227) // partitions 0..9: every name fits
	elevenPartitions = strings.Repeat("b", 227) // partition 10: 256 bytes
)

// nameCluster is a Kafka holding both topics.
func nameCluster(t *testing.T) string {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(10, tenPartitions), kfake.SeedTopics(11, elevenPartitions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	return strings.Join(cluster.ListenAddrs(), ",")
}

// nameConnector writes a connector reading topics (key "topics" or
// "topics.regex") from brokers into a local store, needing no other service.
func nameConnector(t *testing.T, brokers, key, topics string) string {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "names.json")
	os.WriteFile(cfg, []byte(`{"name":"names","config":{"`+key+`":"`+topics+`","store.url":"file://`+dir+`/data","flush.size":"10",
		"bootstrap.servers":"`+brokers+`","value.converter":"org.apache.kafka.connect.storage.StringConverter","format.class":"string"}}`), 0o644)
	return cfg
}

// TestCheckWarnsOfPartitionsTooLongToWrite (issue 20, n7): offline, check
// knows no partition count. A topic whose partition 0 fits passes, but
// check says which partitions would be refused when assigned; before, it
// said nothing and partition 10 was refused at run time.
func TestCheckWarnsOfPartitionsTooLongToWrite(t *testing.T) {
	cfg := nameConnector(t, "127.0.0.1:1", "topics", elevenPartitions)
	code, out, stderr := runTool("check", "--config", cfg)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	want := `warning: connector "names": ` + cfg + `: topics: topic "` + elevenPartitions + `": committed file names of partition 10 and above would be longer than the 255 bytes ` +
		`the store allows in one name (filename.offset.zero.pad.width 10): those partitions are refused when assigned; partitions 0 to 9 fit. check --connect compares with the topic's partition count`
	if !strings.Contains(stderr, want) {
		t.Fatalf("stderr:\n%s\nlacks:\n%s", stderr, want)
	}
}

// TestCheckConnectRefusesPartitionsTooLongToWrite (issue 20, n7): check
// --connect asks Kafka for each topic's partitions and checks the names of
// the highest: a topic with 11 partitions whose partition 10's names are
// 256 bytes fails, one as long with 10 partitions passes. Before, only
// partition 0 was checked, and partition 10 was refused at assignment.
func TestCheckConnectRefusesPartitionsTooLongToWrite(t *testing.T) {
	brokers := nameCluster(t)
	for _, c := range []struct{ key, topics string }{
		{"topics", tenPartitions + "," + elevenPartitions},
		{"topics.regex", "[ab]+"},
	} {
		t.Run(c.key, func(t *testing.T) {
			cfg := nameConnector(t, brokers, c.key, c.topics)
			code, out, stderr := runTool("check", "--connect", "--config", cfg, "--timeout", "5s")
			if code != exitFinding {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitFinding, out, stderr)
			}
			want := `connector "names": Kafka ` + brokers + `: FAILED: connector "names" (` + cfg + `): ` + c.key + `: topic "` + elevenPartitions + `" partition 10: ` +
				`committed file names would be 256 bytes with offsets of 10 digits (filename.offset.zero.pad.width), more than the 255 the store allows in one name; ` +
				`topics of at most 226 characters can be written as partition 10 with this format` + "\n"
			if !strings.Contains(out, want) {
				t.Fatalf("output:\n%s\nlacks:\n%s", out, want)
			}
			if strings.Contains(out, `topic "`+tenPartitions+`" partition`) {
				t.Fatalf("the topic with 10 partitions fits:\n%s", out)
			}
		})
	}
}
