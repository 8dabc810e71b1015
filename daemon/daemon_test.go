package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/local"
)

// TestDaemonFailingConnectorStopsAlone: of two connectors in one daemon,
// one stops on a bad record (errors.tolerance=none). The other keeps
// committing, the failed one's Hive syncer is gone and its metastore
// connections are closed, and the exit code is 0 because not all failed.
func TestDaemonFailingConnectorStopsAlone(t *testing.T) {
	f := newDaemonFixture(t, "healthy", "failing")
	conns := []*configs.Connector{f.connector("healthy"), f.connector("failing")}
	f.run(conns)
	for _, name := range []string{"healthy", "failing"} {
		f.produce(name, 5)
		f.waitFor(name+" commits and registers", func() bool { return f.committed(name) >= 1 && f.hive[name].registered() })
	}
	f.produceBad("failing")
	f.waitFor("failing connector failed", func() bool { return f.state("failing") == "failed" })
	if n := syncersRunning(); n != 1 {
		t.Fatalf("%d Hive syncers run after one of two connectors failed, want 1 (the healthy one's)", n)
	}
	if open := f.hive["failing"].openConns(); open != 0 {
		t.Fatalf("failed connector left %d metastore connections open", open)
	}
	before := f.committed("healthy")
	f.produce("healthy", 10)
	f.waitFor("healthy commits after the other failed", func() bool { return f.committed("healthy") >= before+2 })
	f.stop()
	if code := f.wait(); code != 0 {
		t.Fatalf("exit code %d with one of two connectors healthy, want 0", code)
	}
	if st := f.state("healthy"); st != "stopped" {
		t.Fatalf("healthy connector ended %q, want stopped", st)
	}
}

// TestDaemonFailedConnectorReleasesHiveBeforeStore: when a connector with
// hive.integration fails, its syncer stops and every metastore connection
// it opened (dropped for a redial, held by Run, opened by the final Drain)
// is closed before the store is.
func TestDaemonFailedConnectorReleasesHiveBeforeStore(t *testing.T) {
	f := newDaemonFixture(t, "failing")
	ms := f.hive["failing"]
	f.run([]*configs.Connector{f.connector("failing")})
	f.produce("failing", 5)
	f.waitFor("a commit registered in Hive", func() bool { return f.committed("failing") >= 1 && ms.registered() })
	ms.failAdds(true) // the next commit stays pending: the syncer redials, and Drain dials once more
	f.produce("failing", 5)
	f.waitFor("a failed registration", func() bool { return ms.addFailures() >= 1 })
	f.produceBad("failing")
	if code := f.wait(); code != 1 {
		t.Fatalf("exit code %d with the only connector failed, want 1", code)
	}
	ev := f.ev.list()
	last := len(ev) - 1
	if last < 0 || ev[last] != "failing: store closed with 0 syncers running" {
		t.Fatalf("the store must be closed last, with no syncer running; events:\n%s", strings.Join(ev, "\n"))
	}
	dials, closes := strings.Count(strings.Join(ev, "\n"), "dialled"), strings.Count(strings.Join(ev, "\n"), "metastore closed")
	if dials < 2 || dials != closes {
		t.Fatalf("%d metastore connections dialled, %d closed before the store; events:\n%s", dials, closes, strings.Join(ev, "\n"))
	}
}

// TestWaitBounded: after ctx ends, a connector that does not stop is waited
// for only so long, and the board names it.
func TestWaitBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	release := make(chan struct{})
	wg.Go(func() { <-release })
	cancel()
	if waitBounded(ctx, &wg, 10*time.Millisecond) {
		t.Fatal("waitBounded reported a stuck goroutine as finished")
	}
	close(release)
	if !waitBounded(ctx, &wg, time.Minute) {
		t.Fatal("waitBounded did not see the goroutine finish")
	}
	b := newStatusBoard()
	for name, state := range map[string]string{"a": "running", "b": "failed", "c": "stopped", "d": "starting"} {
		b.set(name, func(cs *connStatus) { cs.state = state })
	}
	if got := strings.Join(b.unfinished(), ","); got != "a,d" {
		t.Fatalf("unfinished = %s, want a,d", got)
	}
}

// daemonFixture runs a daemon against kfake, the in-memory registry, local
// stores under a temp dir and one fake metastore per connector.
type daemonFixture struct {
	t       *testing.T
	cluster *kfake.Cluster
	ctx     context.Context // the daemon's, until stop
	dir     string
	brokers []string
	id      int32 // registry id of demodata.Schema
	d       *Daemon
	cancel  context.CancelFunc
	done    chan struct{} // closed when runConnectors has returned code
	code    int
	ev      *events
	hive    map[string]*fakeMetastore // by connector (and topic) name
	sent    map[string]map[int32]int64
}

func newDaemonFixture(t *testing.T, names ...string) *daemonFixture {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, names...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	reg := registry.NewMemory()
	id, err := reg.Register(demodata.Schema)
	if err != nil {
		t.Fatal(err)
	}
	f := &daemonFixture{t: t, cluster: cluster, dir: t.TempDir(), brokers: cluster.ListenAddrs(), id: id, ev: &events{},
		hive: map[string]*fakeMetastore{}, sent: map[string]map[int32]int64{}}
	for _, n := range names {
		f.hive[n] = &fakeMetastore{name: n, ev: f.ev}
	}
	// Never restarted unless a test says so: a failure stays a failure.
	f.d = newDaemon(Options{Logger: testLogger(t), Version: "test", Build: rest.BuildInfo{Version: "test", Commit: "c0ffee"}, Restart: RestartPolicy{Initial: 50 * time.Millisecond, Max: 400 * time.Millisecond, Attempts: 0},
		HealthInterval: 100 * time.Millisecond}, nil, wiring.ProcessMemory{})
	f.d.openStore = func(c *configs.Connector) (storage.FS, error) {
		return closeStore{FS: local.New("/"), name: c.Name, ev: f.ev}, nil
	}
	f.d.registry = func(*configs.Connector, *slog.Logger) (schema.Registry, error) { return reg, nil }
	f.d.dialHive = f.dial
	return f
}

// connector is a connector file for topic name that commits every 5
// records and registers them in Hive.
func (f *daemonFixture) connector(name string) *configs.Connector {
	return conftest.Connector(f.t, f.dir, name, map[string]string{
		"bootstrap.servers": strings.Join(f.brokers, ","), "flush.size": "5", "schema.compatibility": "BACKWARD",
		"hive.integration": "true", "hive.metastore.uris": "thrift://" + name + ":9083",
	})
}

// run starts the daemon; wait returns its exit code.
func (f *daemonFixture) run(conns []*configs.Connector) {
	ctx, cancel := context.WithCancel(context.Background())
	f.ctx, f.cancel, f.done = ctx, cancel, make(chan struct{})
	go func() { f.code = f.d.runConnectors(ctx, conns); close(f.done) }()
	f.t.Cleanup(func() { cancel(); <-f.done }) // also when the test fails early
}

func (f *daemonFixture) stop() { f.cancel() }

func (f *daemonFixture) wait() int {
	select {
	case <-f.done:
		return f.code
	case <-time.After(time.Minute):
		f.t.Fatalf("daemon still running; events:\n%s", strings.Join(f.ev.list(), "\n"))
		return 0
	}
}

func (f *daemonFixture) produce(topic string, n int) {
	sent, err := demodata.ProduceFrom(context.Background(), f.brokers, f.id, topic, 1, n, f.sent[topic])
	if err != nil {
		f.t.Fatal(err)
	}
	f.sent[topic] = sent
}

// produceBad sends a value that is not in the Confluent wire format.
func (f *daemonFixture) produceBad(topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: []byte("not avro")}).FirstErr(); err != nil {
		f.t.Fatal(err)
	}
}

// committed counts the committed files of topic (temp files excluded).
func (f *daemonFixture) committed(topic string) int {
	n := 0
	_ = filepath.WalkDir(filepath.Join(f.dir, topic, "topics"), func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && !strings.Contains(p, "+tmp") && strings.HasSuffix(p, ".avro") {
			n++
		}
		return nil
	})
	return n
}

func (f *daemonFixture) state(name string) string {
	for _, cs := range f.d.board.snapshot() {
		if cs.Name == name {
			return cs.State
		}
	}
	return ""
}

func (f *daemonFixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s; events:\n%s", what, strings.Join(f.ev.list(), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dial is the daemon's dialHive: the fake metastore named by the URI's host.
func (f *daemonFixture) dial(_ context.Context, uris string) (hive.Metastore, error) {
	m := f.hive[strings.TrimSuffix(strings.TrimPrefix(uris, "thrift://"), ":9083")]
	m.mu.Lock()
	defer m.mu.Unlock()
	m.open++
	m.ev.add(m.name + ": metastore dialled")
	return &fakeConn{fakeMetastore: m}, nil
}

// syncersRunning counts the goroutines in hive.(*Syncer).Run.
func syncersRunning() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "hive.(*Syncer).Run(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// events is what the fakes saw, in order.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) { e.mu.Lock(); e.log = append(e.log, s); e.mu.Unlock() }

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.log...)
}

// closeStore is a local store whose Close is an event, with the number of
// Hive syncers still running at that moment.
type closeStore struct {
	storage.FS
	name string
	ev   *events
}

func (s closeStore) Close() error {
	s.ev.add(fmt.Sprintf("%s: store closed with %d syncers running", s.name, syncersRunning()))
	return s.FS.Close()
}

// fakeMetastore accepts every table and partition of one connector, or
// refuses partitions once told to.
type fakeMetastore struct {
	name      string
	ev        *events
	mu        sync.Mutex
	table     bool
	parts     int
	refuse    bool // AddPartitions fails
	refusals  int
	open      int                          // connections dialled and not closed
	params    map[string]map[string]string // partition values → parameters set
	locations map[string]string            // partition values → location set by a compaction
}

func (m *fakeMetastore) registered() bool { m.mu.Lock(); defer m.mu.Unlock(); return m.parts > 0 }

func (m *fakeMetastore) failAdds(on bool) { m.mu.Lock(); m.refuse = on; m.mu.Unlock() }

func (m *fakeMetastore) addFailures() int { m.mu.Lock(); defer m.mu.Unlock(); return m.refusals }

func (m *fakeMetastore) openConns() int { m.mu.Lock(); defer m.mu.Unlock(); return m.open }

// fakeConn is one connection to a fakeMetastore.
type fakeConn struct{ *fakeMetastore }

func (c *fakeConn) CreateDatabase(context.Context, string, string) error { return nil }

func (c *fakeConn) CreateTable(context.Context, hive.Table) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table = true
	return nil
}

func (c *fakeConn) GetTable(context.Context, string, string) (*hive.Table, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.table {
		return nil, &hive.Error{Op: "get table", Kind: hive.ErrNotFound}
	}
	return &hive.Table{}, nil
}

func (c *fakeConn) AlterTable(context.Context, hive.Table, bool) error { return nil }

func (c *fakeConn) AddPartitions(_ context.Context, _, _ string, parts []hive.Partition) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse {
		c.refusals++
		return &hive.Error{Op: "add partitions", Kind: hive.ErrUnavailable}
	}
	c.parts += len(parts)
	return nil
}

func (c *fakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open--
	c.ev.add(c.name + ": metastore closed")
	return nil
}

// testLogger keeps the daemon's log and prints it if the test fails.
func testLogger(t *testing.T) *slog.Logger {
	var mu sync.Mutex
	var buf bytes.Buffer
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if t.Failed() {
			t.Log(buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
