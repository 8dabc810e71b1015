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
	if want := `"compaction":{"enabled":true,"pace_ms":60000,"topics":{"clicks":{`; code != 200 || !strings.Contains(body, want) || !strings.Contains(body, `"files_before":3,"files_after":1`) {
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

// TestDaemonPacesCompactions: two complete hours of three files each,
// with a pace longer than the test. The daemon compacts the first and
// holds the second (its fence would cost the writers again): /status,
// the lifecycle API and the metrics show it waiting and when it may
// begin. Without the pace both are compacted in one pass.
func TestDaemonPacesCompactions(t *testing.T) {
	f := newDaemonFixture(t, "clicks")
	c := f.compactingConnector("clicks", "hdfs.sink.compaction.pace.ms", "3600000")
	base := time.Now().UTC().Truncate(time.Hour).Add(-4 * time.Hour)
	f.produceAt("clicks", repeat(base.Add(10*time.Minute), 15)...)
	f.produceAt("clicks", repeat(base.Add(70*time.Minute), 15)...)
	f.run([]*configs.Connector{c})
	f.waitFor("one hour compacted and the other held by the pace", func() bool {
		st := f.compaction("clicks")
		return st.Compacted == 1 && st.Waiting == 1
	})
	st := f.compaction("clicks")
	next, err := time.Parse(time.RFC3339, st.NextAllowed)
	if err != nil || next.Before(time.Now().Add(50*time.Minute)) {
		t.Fatalf("next allowed %q (%v), want about an hour from the compaction", st.NextAllowed, err)
	}
	if st.LastDir != hourDir(hourValues(base)) {
		t.Fatalf("compacted %s first, want the older hour %s", st.LastDir, hourDir(hourValues(base)))
	}
	code, body := apiCall(f.d, "GET", "/connectors/clicks/lifecycle")
	if code != 200 || !strings.Contains(body, `"pace_ms":3600000`) || !strings.Contains(body, `"waiting":1,"next_allowed":"`+st.NextAllowed+`"`) {
		t.Fatalf("GET /connectors/clicks/lifecycle: %d %s, want the pace and the held hour", code, body)
	}
	series := `hdfs_sink_compaction_waiting_dirs{connector="clicks",topic="clicks"}`
	if got := scrape(t, f.d, series); got != 1 {
		t.Fatalf("%s = %v, want 1", series, got)
	}
	series = `hdfs_sink_compaction_next_allowed_timestamp_seconds{connector="clicks",topic="clicks"}`
	if got := scrape(t, f.d, series); got != float64(next.Unix()) && int64(got) != next.Unix() {
		t.Fatalf("%s = %v, want %d", series, got, next.Unix())
	}
	if loc := f.hive["clicks"].location(hourValues(base.Add(time.Hour))); loc != "" {
		t.Fatalf("the held hour was switched to %s", loc)
	}
	f.stop()
	f.wait()
}

// TestNextWait: the compaction loop sleeps the interval, or until the
// earliest held compaction may begin (never less than a second).
func TestNextWait(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		held map[string]time.Time
		want time.Duration
	}{
		{"nothing held", nil, 10 * time.Minute},
		{"held past the interval", map[string]time.Time{"a": now.Add(time.Hour)}, 10 * time.Minute},
		{"the earliest of two", map[string]time.Time{"a": now.Add(90 * time.Second), "b": now.Add(30 * time.Second)}, 30 * time.Second},
		{"already allowed: a second", map[string]time.Time{"a": now.Add(-time.Minute)}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextWait(10*time.Minute, tc.held, now); got != tc.want {
				t.Fatalf("nextWait = %s, want %s", got, tc.want)
			}
		})
	}
}

// compactingConnector is hourlyConnector with the compaction policy on:
// every 50 ms, directories of at least two files once complete.
func (f *daemonFixture) compactingConnector(name string, extra ...string) *configs.Connector {
	settings := map[string]string{
		"bootstrap.servers": strings.Join(f.brokers, ","), "flush.size": "5", "schema.compatibility": "BACKWARD",
		"hive.integration": "true", "hive.metastore.uris": "thrift://" + name + ":9083",
		"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale": "en", "timezone": "UTC",
		"timestamp.extractor": "Record", "hdfs.sink.completeness.enabled": "true", "hdfs.sink.completeness.interval.ms": "50",
		"hdfs.sink.compaction.enabled": "true", "hdfs.sink.compaction.interval.ms": "50", "hdfs.sink.compaction.min.files": "2",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		settings[extra[i]] = extra[i+1]
	}
	return conftest.Connector(f.t, f.dir, name, settings)
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
