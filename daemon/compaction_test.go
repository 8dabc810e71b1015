package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

func (c *fakeConn) SetPartitionLocation(_ context.Context, _, _ string, values []string, location string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.locations == nil {
		c.locations = map[string]string{}
	}
	c.locations[strings.Join(values, "/")] = location
	return nil
}

func (m *fakeMetastore) location(values string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.locations[values]
}

// TestDaemonCompactsCompleteHours: an hourly connector with completeness
// and the compaction policy on. Hour A (three files) and hour B (one
// file) are written; once hour A is complete the daemon itself compacts
// it into one file and switches its Hive partition there; hour B, with
// fewer files than hdfs.sink.compaction.min.files, is left. /status and
// the metrics say so.
func TestDaemonCompactsCompleteHours(t *testing.T) {
	f := newDaemonFixture(t, "clicks")
	c := f.compactingConnector("clicks")
	base := time.Now().UTC().Truncate(time.Hour).Add(-3 * time.Hour)
	hourA, hourB := hourValues(base), hourValues(base.Add(time.Hour))
	f.produceAt("clicks", repeat(base.Add(10*time.Minute), 15)...)
	f.produceAt("clicks", repeat(base.Add(90*time.Minute), 5)...)
	f.run([]*configs.Connector{c})
	f.waitFor("hour A compacted, and /status saying so", func() bool {
		return f.compaction("clicks").Compacted == 1
	})
	gen := filepath.Join(f.dir, "clicks", "topics", "clicks", "+compacted", hourDir(hourA))
	if loc := f.hive["clicks"].location(hourA); !strings.HasSuffix(loc, gen) {
		t.Fatalf("Hive location of hour A = %q, want the generation %s", loc, gen)
	}
	if n := avroFiles(t, gen); n != 1 {
		t.Fatalf("%d files in the generation of hour A, want 1", n)
	}
	st := f.compaction("clicks")
	if st.FilesBefore != 3 || st.FilesAfter != 1 || st.BytesBefore == 0 || st.BytesAfter == 0 || st.LastDir != hourDir(hourA) || st.LastError != "" {
		t.Fatalf("status compaction = %+v, want hour A from 3 files to 1", st)
	}
	// The REST API's lifecycle view shows the same document as /status.
	code, body := apiCall(f.d, "GET", "/connectors/clicks/lifecycle")
	if want := `"compaction":{"enabled":true,"topics":{"clicks":{`; code != 200 || !strings.Contains(body, want) || !strings.Contains(body, `"files_before":3,"files_after":1`) {
		t.Fatalf("GET /connectors/clicks/lifecycle: %d %s, want %s with hour A from 3 files to 1", code, body, want)
	}
	if loc := f.hive["clicks"].location(hourB); loc != "" {
		t.Fatalf("hour B (one file) was switched to %s", loc)
	}
	series := `hdfs_sink_compaction_files_before_total{connector="clicks",topic="clicks"}`
	if got := scrape(t, f.d, series); got != 3 {
		t.Fatalf("%s = %v, want 3", series, got)
	}
	series = `hdfs_sink_compaction_runs_total{connector="clicks",topic="clicks"}`
	if got := scrape(t, f.d, series); got != 1 {
		t.Fatalf("%s = %v, want 1", series, got)
	}
	f.stop()
	f.wait()
}

// compactingConnector is hourlyConnector with the compaction policy on:
// every 50 ms, directories of at least two files once complete.
func (f *daemonFixture) compactingConnector(name string) *configs.Connector {
	return conftest.Connector(f.t, f.dir, name, map[string]string{
		"bootstrap.servers": strings.Join(f.brokers, ","), "flush.size": "5", "schema.compatibility": "BACKWARD",
		"hive.integration": "true", "hive.metastore.uris": "thrift://" + name + ":9083",
		"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale": "en", "timezone": "UTC",
		"timestamp.extractor": "Record", "hdfs.sink.completeness.enabled": "true", "hdfs.sink.completeness.interval.ms": "50",
		"hdfs.sink.compaction.enabled": "true", "hdfs.sink.compaction.interval.ms": "50", "hdfs.sink.compaction.min.files": "2",
	})
}

// compaction is what /status says of topic's compaction (zero: nothing yet).
func (f *daemonFixture) compaction(topic string) CompactionStatus {
	for _, cs := range f.d.board.snapshot() {
		if st, ok := cs.Compaction[topic]; ok {
			return st
		}
	}
	return CompactionStatus{}
}

func avroFiles(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".avro") {
			n++
		}
	}
	return n
}
