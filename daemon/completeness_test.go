package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
)

func (c *fakeConn) SetPartitionParams(_ context.Context, _, _ string, values []string, params map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.params == nil {
		c.params = map[string]map[string]string{}
	}
	c.params[strings.Join(values, "/")] = params
	return nil
}

func (m *fakeMetastore) completeParam(values string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.params[values]["hdfs.sink.complete"]
}

// produceAt sends records of the demo schema with the given timestamps.
func (f *daemonFixture) produceAt(topic string, times ...time.Time) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	for _, at := range times {
		seq := f.sent[topic][0]
		v, err := demodata.Value(f.id, 0, seq)
		if err != nil {
			f.t.Fatal(err)
		}
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: v, Timestamp: at}).FirstErr(); err != nil {
			f.t.Fatal(err)
		}
		if f.sent[topic] == nil {
			f.sent[topic] = map[int32]int64{}
		}
		f.sent[topic][0] = seq + 1
	}
}

// TestDaemonMarksCompleteHours: an hourly connector by record time with
// completeness on. Two past hours are written; the partition is then idle
// with the clock past both, so each gets its Hive parameter and _SUCCESS,
// /status and the metrics say so. A record for the first hour that comes
// after is late: it is written to that hour all the same, and counted.
func TestDaemonMarksCompleteHours(t *testing.T) {
	f := newDaemonFixture(t, "clicks")
	c := f.hourlyConnector("clicks")
	base := time.Now().UTC().Truncate(time.Hour).Add(-3 * time.Hour)
	hourA, hourB := hourValues(base), hourValues(base.Add(time.Hour))
	// Produced before the daemon starts: an idle, empty partition with the
	// clock past both hours would make them complete before the records
	// come (they would then be late, by the rule).
	f.produceAt("clicks", repeat(base.Add(10*time.Minute), 5)...)
	f.produceAt("clicks", repeat(base.Add(90*time.Minute), 5)...)
	f.run([]*configs.Connector{c})
	f.waitFor("both hours marked, and /status saying so", func() bool {
		return f.completeness("clicks").Marked == 2
	})
	if !f.marker("clicks", hourA) || !f.marker("clicks", hourB) || f.hive["clicks"].completeParam(hourA) == "" || f.hive["clicks"].completeParam(hourB) == "" {
		t.Fatalf("markers %v %v, Hive parameters %q %q", f.marker("clicks", hourA), f.marker("clicks", hourB),
			f.hive["clicks"].completeParam(hourA), f.hive["clicks"].completeParam(hourB))
	}
	if comp := f.completeness("clicks"); comp.Frontier == "" || len(comp.Idle) != 1 || comp.LastMarked != hourDir(hourB) {
		t.Fatalf("status completeness = %+v", comp)
	}
	// The REST API's lifecycle view shows the same document as /status.
	code, body := apiCall(f.d, "GET", "/connectors/clicks/lifecycle")
	if want := `"completeness":{"enabled":true,"marker":"_SUCCESS","lateness_ms":0,"topics":{"clicks":{"frontier":`; code != 200 || !strings.Contains(body, want) || !strings.Contains(body, `"marked":2`) {
		t.Fatalf("GET /connectors/clicks/lifecycle: %d %s, want %s with two hours marked", code, body, want)
	}
	// One late record for hour A, and four on time for hour B to fill flush.size.
	f.produceAt("clicks", base.Add(20*time.Minute))
	f.produceAt("clicks", repeat(base.Add(100*time.Minute), 4)...)
	f.waitFor("the late record committed to hour A", func() bool { return f.files("clicks", hourA) == 2 })
	if late := f.d.board.snapshot()[0].Counters["late_records"]; late != 1 {
		t.Fatalf("late_records = %d, want 1", late)
	}
	if !f.marker("clicks", hourA) {
		t.Fatal("hour A lost its marker")
	}
	f.stop()
	f.wait()
}

// hourlyConnector is the fixture's connector for topic name, hourly by
// record time, with completeness markers looked for every 50 ms.
func (f *daemonFixture) hourlyConnector(name string) *configs.Connector {
	return conftest.Connector(f.t, f.dir, name, map[string]string{
		"bootstrap.servers": strings.Join(f.brokers, ","), "flush.size": "5", "schema.compatibility": "BACKWARD",
		"hive.integration": "true", "hive.metastore.uris": "thrift://" + name + ":9083",
		"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale": "en", "timezone": "UTC",
		"timestamp.extractor": "Record", "hdfs.sink.completeness.enabled": "true", "hdfs.sink.completeness.interval.ms": "50",
	})
}

// completeness is what /status says of topic's completeness (zero: nothing yet).
func (f *daemonFixture) completeness(topic string) CompletenessStatus {
	for _, cs := range f.d.board.snapshot() {
		if st, ok := cs.Completeness[topic]; ok {
			return st
		}
	}
	return CompletenessStatus{}
}

func repeat(at time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = at
	}
	return out
}

func hourValues(at time.Time) string {
	return at.Format("2006") + "/" + at.Format("01") + "/" + at.Format("02") + "/" + at.Format("15")
}

// hourDir is the encoded directory of hour values "YYYY/MM/dd/HH".
func hourDir(values string) string {
	v := strings.Split(values, "/")
	return "year=" + v[0] + "/month=" + v[1] + "/day=" + v[2] + "/hour=" + v[3]
}

func (f *daemonFixture) marker(topic, values string) bool {
	_, err := os.Stat(filepath.Join(f.dir, topic, "topics", topic, hourDir(values), "_SUCCESS"))
	return err == nil
}

// files counts the committed files of one hour.
func (f *daemonFixture) files(topic, values string) int {
	entries, _ := os.ReadDir(filepath.Join(f.dir, topic, "topics", topic, hourDir(values)))
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".avro") {
			n++
		}
	}
	return n
}
