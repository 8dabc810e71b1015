package metrics

import (
	"errors"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/sink"
)

func exposition(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// TestPartitionSeriesFollowWhatThePartitionDoes: the state gauge is one-hot,
// commits move the counters and the committed offset, lag is log end
// minus the offset after the last commit, a break shows as BROKEN in the
// view, and a released partition leaves no series behind.
func TestPartitionSeriesFollowWhatThePartitionDoes(t *testing.T) {
	m := New("test")
	p := m.Connector("c").Partition("t", 3)
	p.Entered(sink.WriteStarted)
	p.Entered(sink.FileCommitted)
	p.Written(10)
	p.CommitStep(sink.StepPublish, 20*time.Millisecond)
	p.Committed(sink.Commit{Files: 2, Records: 10, Bytes: 1000, Next: 10, At: time.Now()})
	p.LogEnd(25)
	out := exposition(t, m)
	for _, want := range []string{
		`hdfs_sink_partition_state{connector="c",partition="3",state="FILE_COMMITTED",topic="t"} 1`,
		`hdfs_sink_partition_state{connector="c",partition="3",state="WRITE_STARTED",topic="t"} 0`,
		`hdfs_sink_records_committed_total{connector="c",partition="3",topic="t"} 10`,
		`hdfs_sink_files_committed_total{connector="c",partition="3",topic="t"} 2`,
		`hdfs_sink_partition_lag_records{connector="c",partition="3",topic="t"} 15`,
		`hdfs_sink_commit_step_duration_seconds_count{connector="c",step="wal_publish",topic="t"} 1`,
		`hdfs_sink_build_info{version="test"} 1`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %s", want)
		}
	}
	p.Broken(errors.New("store down"))
	if v := m.Partitions("c"); len(v) != 1 || v[0].State != "BROKEN" || v[0].LastError != "store down" {
		t.Fatalf("view after a break: %+v", v)
	}
	m.SetLogEnds("c", map[string]map[int32]int64{"t": {3: 40}})
	if v := m.Partitions("c"); v[0].Lag() != 30 {
		t.Fatalf("lag after a log end read while paused: %d, want 30", v[0].Lag())
	}
	p.Released()
	if out := exposition(t, m); strings.Contains(out, `partition="3"`) {
		t.Fatalf("series of a released partition remain:\n%s", out)
	}
}

// TestRestartedClientMetricsDoNotPanic: registering the same collectors
// twice (a connector restarted with a new client) replaces them.
func TestRestartedClientMetricsDoNotPanic(t *testing.T) {
	m := New("test")
	for range 2 {
		m.Registerer().MustRegister(newVectors().recordsWritten)
	}
}

var metricName = regexp.MustCompile(`\bhdfs_sink_[a-z_]+`)

// documented is every hdfs_sink_ name docs/metrics.md lists.
func documented(t *testing.T) map[string]bool {
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range metricName.FindAllString(string(b), -1) {
		out[n] = true
	}
	return out
}

func base(name string) string {
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if n, ok := strings.CutSuffix(name, suffix); ok && strings.HasSuffix(n, "_seconds") {
			return n
		}
	}
	return name
}

// TestEveryNameIsDocumented: each hdfs_sink_ series the package exposes,
// and each the dashboard and the alert rules use, is in docs/metrics.md.
func TestEveryNameIsDocumented(t *testing.T) {
	docs := documented(t)
	m := New("test")
	o := m.Connector("c")
	p := o.Partition("t", 0)
	p.Committed(sink.Commit{Next: 1, At: time.Now()})
	p.LogEnd(3)
	p.CommitStep(sink.StepClose, time.Millisecond)
	o.BadRecord("t", 0, sink.BadRecordSkipped)
	o.Tombstone("t", 0)
	o.DeadLetterFailed("t", errors.New("x"))
	m.SetDependency("c", "kafka", true)
	m.Restarting("c", time.Second)
	m.SetMemory(1, 1)
	m.SetHive("c", func() HiveStats { return HiveStats{} })
	m.SetStates(func() map[string]string { return map[string]string{"c": "RUNNING"} })
	m.CompletenessMarked("c", "t")
	m.LateRecords("c", 2)
	m.SetCompletenessFrontier("c", "t", time.Now())
	used := exposition(t, m)
	for _, f := range []string{"../deploy/grafana/hdfs-sink.json", "../deploy/prometheus/hdfs-sink-rules.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		used += string(b)
	}
	for _, n := range metricName.FindAllString(used, -1) {
		if !docs[base(n)] {
			t.Errorf("%s is exposed or used but not in docs/metrics.md", n)
		}
	}
}
