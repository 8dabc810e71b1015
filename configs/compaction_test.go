package configs

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
)

// compactionConnector parses a Parquet connector with Hive and an hourly
// partitioner, with extra settings over it.
func compactionConnector(t *testing.T, extra map[string]string) (*Connector, error) {
	t.Helper()
	cfg := map[string]string{
		"connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector", "topics": "clicks",
		"hdfs.url": "hdfs://127.0.0.1:8020", "flush.size": "1000", "bootstrap.servers": "127.0.0.1:9092",
		"value.converter": "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url": "http://127.0.0.1:8081",
		"format.class":      "io.confluent.connect.hdfs.parquet.ParquetFormat",
		"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale": "en", "timezone": "UTC",
		"hive.integration": "true", "hive.metastore.uris": "thrift://127.0.0.1:9083", "schema.compatibility": "BACKWARD",
	}
	for k, v := range extra {
		if v == "" {
			delete(cfg, k)
			continue
		}
		cfg[k] = v
	}
	data, err := json.Marshal(map[string]any{"name": "clicks", "config": cfg})
	if err != nil {
		t.Fatal(err)
	}
	conns, _, err := ParseFile("clicks.json", data, nil)
	if err != nil {
		return nil, err
	}
	return conns[0], nil
}

// TestCompactionKeys reads every hdfs.sink.compaction.* key, and the
// defaults: the minimum age is an hour without completeness and nothing
// with it (a complete directory is the condition then).
func TestCompactionKeys(t *testing.T) {
	c, err := compactionConnector(t, map[string]string{
		"hdfs.sink.compaction.enabled": "true", "hdfs.sink.compaction.min.age.ms": "60000",
		"hdfs.sink.compaction.min.files": "4", "hdfs.sink.compaction.target.bytes": "1048576",
		"hdfs.sink.compaction.interval.ms": "5000", "hdfs.sink.compaction.grace.ms": "0",
		"hdfs.sink.compaction.pace.ms": "45000"})
	if err != nil {
		t.Fatal(err)
	}
	want := Compaction{Enabled: true, MinAge: time.Minute, MinFiles: 4, TargetBytes: 1 << 20, Interval: 5 * time.Second, Pace: 45 * time.Second}
	if !reflect.DeepEqual(c.Compaction, want) {
		t.Fatalf("Compaction = %+v, want %+v", c.Compaction, want)
	}
	for _, tc := range []struct {
		completeness string
		minAge       time.Duration
	}{{"false", time.Hour}, {"true", 0}} {
		c, err := compactionConnector(t, map[string]string{"hdfs.sink.compaction.enabled": "true", "hdfs.sink.completeness.enabled": tc.completeness})
		if err != nil {
			t.Fatal(err)
		}
		want := Compaction{Enabled: true, MinAge: tc.minAge, MinFiles: DefaultCompactionMinFiles, TargetBytes: 128 << 20,
			Interval: 10 * time.Minute, Grace: time.Hour, Pace: time.Minute}
		if !reflect.DeepEqual(c.Compaction, want) {
			t.Errorf("completeness %s: Compaction = %+v, want %+v", tc.completeness, c.Compaction, want)
		}
	}
}

// TestCompactionPaceDefault: unset, the pace follows the connector's
// retry.backoff.ms (12 backoffs) but is never under a minute; 0 turns it
// off.
func TestCompactionPaceDefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  time.Duration
	}{
		{"the default backoff (5 s)", nil, time.Minute},
		{"a short backoff: the minimum", map[string]string{"retry.backoff.ms": "1000"}, time.Minute},
		{"a long backoff: 12 of them", map[string]string{"retry.backoff.ms": "10000"}, 2 * time.Minute},
		{"set", map[string]string{"retry.backoff.ms": "10000", "hdfs.sink.compaction.pace.ms": "5000"}, 5 * time.Second},
		{"off", map[string]string{"hdfs.sink.compaction.pace.ms": "0"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]string{"hdfs.sink.compaction.enabled": "true"}
			maps.Copy(extra, tc.extra)
			c, err := compactionConnector(t, extra)
			if err != nil {
				t.Fatal(err)
			}
			if c.Compaction.Pace != tc.want {
				t.Fatalf("pace = %s, want %s", c.Compaction.Pace, tc.want)
			}
		})
	}
}

// TestCompactionErrors: each bad setting is an error naming its key and
// saying why.
func TestCompactionErrors(t *testing.T) {
	on := "hdfs.sink.compaction.enabled"
	for _, tc := range []struct {
		name  string
		extra map[string]string
		key   string
		why   string
	}{
		{"not a boolean", map[string]string{on: "yes"}, on, "true or false"},
		{"without Hive", map[string]string{on: "true", "hive.integration": "false"}, on, "needs hive.integration=true"},
		{"JSON files", map[string]string{on: "true", "format.class": "io.confluent.connect.hdfs.json.JsonFormat",
			"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}, on, "Avro and Parquet files only"},
		{"one file", map[string]string{on: "true", "hdfs.sink.compaction.min.files": "1"}, "hdfs.sink.compaction.min.files", "at least two files"},
		{"no target", map[string]string{on: "true", "hdfs.sink.compaction.target.bytes": "0"}, "hdfs.sink.compaction.target.bytes", "> 0"},
		{"target not a number", map[string]string{"hdfs.sink.compaction.target.bytes": "128MB"}, "hdfs.sink.compaction.target.bytes", "> 0"},
		{"no interval", map[string]string{on: "true", "hdfs.sink.compaction.interval.ms": "0"}, "hdfs.sink.compaction.interval.ms", "> 0"},
		{"negative age", map[string]string{on: "true", "hdfs.sink.compaction.min.age.ms": "-1"}, "hdfs.sink.compaction.min.age.ms", ">= 0"},
		{"negative grace", map[string]string{on: "true", "hdfs.sink.compaction.grace.ms": "-5"}, "hdfs.sink.compaction.grace.ms", ">= 0"},
		{"negative pace", map[string]string{on: "true", "hdfs.sink.compaction.pace.ms": "-1"}, "hdfs.sink.compaction.pace.ms", ">= 0"},
		{"pace not a number", map[string]string{on: "true", "hdfs.sink.compaction.pace.ms": "1m"}, "hdfs.sink.compaction.pace.ms", "between two compactions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compactionConnector(t, tc.extra)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FieldError", err)
			}
			if !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("err = %v, want it to name %s and say %q", err, tc.key, tc.why)
			}
		})
	}
}
