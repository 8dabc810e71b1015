package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/local"
)

// TestRestartPolicyRestartsAFailingConnector: a connector that fails on a
// bad record is restarted with a growing backoff, again and again, and says
// so in its status and metrics, while the other connector keeps
// committing.
func TestRestartPolicyRestartsAFailingConnector(t *testing.T) {
	f := newDaemonFixture(t, "healthy", "failing")
	f.d.restart.Attempts = -1
	f.run([]*configs.Connector{f.connector("healthy"), f.connector("failing")})
	f.produce("failing", 5)
	f.produceBad("failing")
	f.waitFor("two restarts", func() bool { return f.d.board.get("failing").restarts >= 2 })
	for i := 1; i <= 3; i++ {
		f.produce("healthy", 5)
		f.waitFor("healthy commits while the other restarts", func() bool { return f.committed("healthy") >= i })
	}
	// Between restarts it runs briefly: wait for a moment it is failed.
	f.waitFor("FAILED in its status with the error and the restarts", func() bool {
		var st struct {
			Connector          struct{ State, Trace string }
			Restarts           int
			NextRestartSeconds float64 `json:"next_restart_seconds"`
		}
		code, body := apiCall(f.d, "GET", "/connectors/failing/status")
		_ = json.Unmarshal([]byte(body), &st)
		return code == http.StatusOK && st.Restarts >= 2 && st.Connector.State == "FAILED" && strings.Contains(st.Connector.Trace, "bad record") && st.NextRestartSeconds >= 0
	})
	if got := scrape(t, f.d, `hdfs_sink_connector_restarts_total{connector="failing"}`); got < 2 {
		t.Fatalf("connector_restarts_total = %v, want >= 2", got)
	}
	f.stop()
	if code := f.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// panicFS panics on the first rename to a committed name.
type panicFS struct {
	storage.FS
	fired *atomic.Bool
}

func (p panicFS) Rename(ctx context.Context, oldpath, newpath string) error {
	if strings.HasSuffix(newpath, ".avro") && !strings.Contains(newpath, "+tmp") && p.fired.CompareAndSwap(false, true) {
		panic("injected panic in the commit's rename")
	}
	return p.FS.Rename(ctx, oldpath, newpath)
}

// TestPanicInOneConnectorIsItsFailure: a panic deep in one connector's
// commit (a partition worker goroutine) is recovered and logged as that
// connector's failure; the process and the other connector go on, and the
// restarted connector commits every record.
func TestPanicInOneConnectorIsItsFailure(t *testing.T) {
	f := newDaemonFixture(t, "healthy", "panicky")
	f.d.restart.Attempts = -1
	var fired atomic.Bool
	open := f.d.openStore
	f.d.openStore = func(c *configs.Connector) (storage.FS, error) {
		fsys, err := open(c)
		if c.Name == "panicky" {
			return panicFS{FS: fsys, fired: &fired}, err
		}
		return fsys, err
	}
	f.run([]*configs.Connector{f.connector("healthy"), f.connector("panicky")})
	f.produce("panicky", 10)
	f.produce("healthy", 10)
	f.waitFor("the panic recovered and the connector restarted", func() bool { return fired.Load() && f.d.board.get("panicky").restarts >= 1 })
	if err := f.d.board.get("panicky").err; !errors.As(err, new(*sink.PanicError)) {
		t.Fatalf("failure recorded: %v, want the panic", err)
	}
	f.waitFor("both commit all", func() bool { return f.committed("panicky") == 2 && f.committed("healthy") == 2 })
	f.stop()
	f.wait()
}

// TestReloadAddsRemovesRestartsAndLeavesAlone: SIGHUP after one file was
// added, one removed and one changed: the new connector starts, the
// removed one commits what it holds and stops, the changed one restarts
// with its new file, and the unchanged one keeps its very connector.
func TestReloadAddsRemovesRestartsAndLeavesAlone(t *testing.T) {
	f := newDaemonFixture(t, "kept", "removed", "changed", "added")
	f.d.files.Config = f.dir
	conns := []*configs.Connector{f.connector("kept"), f.connector("removed"), f.connector("changed")}
	f.run(conns)
	hup := make(chan os.Signal, 1)
	go f.d.forwardReloads(f.ctx, hup)
	for _, n := range []string{"kept", "removed", "changed"} {
		f.produce(n, 5)
		f.waitFor(n+" running", func() bool { return f.committed(n) == 1 })
	}
	kept := f.d.board.get("kept").conn
	f.produce("removed", 3) // held in an open file: flush.size is 5
	f.waitFor("records held", func() bool { return f.d.board.get("removed").conn.Stats.Records.Load() == 8 })
	f.connectorWith("changed", map[string]string{"flush.size": "2"})
	f.connector("added")
	if err := os.Remove(filepath.Join(f.dir, "removed.json")); err != nil {
		t.Fatal(err)
	}
	hup <- syscall.SIGHUP
	f.waitFor("removed gone", func() bool { return f.d.supervisor("removed") == nil })
	if got := f.committedRecords("removed"); got != 8 {
		t.Fatalf("removed connector committed %d records on its way out, want 8", got)
	}
	f.produce("added", 5)
	f.waitFor("added commits", func() bool { return f.committed("added") == 1 })
	f.waitFor("changed restarted with flush.size=2", func() bool {
		return f.d.supervisor("changed").config().FlushSize == 2 && f.d.board.get("changed").state == "running"
	})
	f.produce("changed", 2)
	f.waitFor("changed commits by its new file", func() bool { return f.committed("changed") == 2 })
	if f.d.board.get("kept").conn != kept {
		t.Fatal("the unchanged connector was restarted by the reload")
	}
	f.stop()
	f.wait()
}

// TestReloadWithABadFileChangesNothing: one invalid file refuses the whole
// reload; every connector goes on as it was.
func TestReloadWithABadFileChangesNothing(t *testing.T) {
	f := newDaemonFixture(t, "one")
	f.d.files.Config = f.dir
	f.run([]*configs.Connector{f.connector("one")})
	f.produce("one", 5)
	f.waitFor("running", func() bool { return f.committed("one") == 1 })
	before := f.d.board.get("one").conn
	if err := os.WriteFile(filepath.Join(f.dir, "bad.json"), []byte(`{"name": "bad", "config": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(f.dir, "one.json")); err != nil {
		t.Fatal(err)
	}
	f.d.reloadNow()
	time.Sleep(300 * time.Millisecond)
	if f.d.supervisor("one") == nil || f.d.board.get("one").conn != before || f.d.supervisor("bad") != nil {
		t.Fatal("a reload with an invalid file changed the connectors")
	}
	f.stop()
	f.wait()
}

// TestReadinessFollowsStoreAndKafka: /readyz is 503 with the reason while
// the store is down at start, 200 once it answers, 503 again when Kafka
// stops answering and 200 when it is back.
func TestReadinessFollowsStoreAndKafka(t *testing.T) {
	f := newDaemonFixture(t, "probed")
	var storeDown, kafkaDown atomic.Bool
	storeDown.Store(true)
	open := f.d.openStore
	f.d.openStore = func(c *configs.Connector) (storage.FS, error) {
		if storeDown.Load() {
			return nil, errors.New("connection refused")
		}
		return open(c)
	}
	f.cluster.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		f.cluster.KeepControl()
		if kafkaDown.Load() {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	c := f.connector("probed")
	c.RetryBackoff = 50 * time.Millisecond
	f.run([]*configs.Connector{c})
	f.waitFor("503 naming the store", func() bool {
		return readyz(f.d) == "503 connector probed is starting; connector probed: store unreachable: connection refused"
	})
	storeDown.Store(false)
	f.waitFor("ready once the store answers", func() bool { return readyz(f.d) == "200" })
	kafkaDown.Store(true)
	f.waitFor("503 naming Kafka", func() bool { return strings.HasPrefix(readyz(f.d), "503 connector probed: kafka unreachable") })
	kafkaDown.Store(false)
	f.waitFor("ready once Kafka answers", func() bool { return readyz(f.d) == "200" })
	f.stop()
	f.wait()
}

// readyz is "200", or "503 " and the reasons joined with "; ".
func readyz(d *Daemon) string {
	code, body := apiCall(d, "GET", "/readyz")
	if code == http.StatusOK {
		return "200"
	}
	var doc struct{ Reasons []string }
	_ = json.Unmarshal([]byte(body), &doc)
	return "503 " + strings.Join(doc.Reasons, "; ")
}

// apiCall asks d's REST API, as a client of the daemon's server would.
func apiCall(d *Daemon, method, path string) (int, string) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, path, nil)
	req.Host = "localhost:8083" // httptest's example.com is a foreign name to the browser guards
	d.restAPI("").Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// connectorWith rewrites name's file with extra settings.
func (f *daemonFixture) connectorWith(name string, extra map[string]string) *configs.Connector {
	c := f.connector(name)
	raw := map[string]string{}
	for k, v := range c.Raw {
		raw[k] = v
	}
	for k, v := range extra {
		raw[k] = v
	}
	return conftest.Connector(f.t, f.dir, name, raw)
}

// committedRecords counts the records committed for topic by file names.
func (f *daemonFixture) committedRecords(topic string) int64 {
	var n int64
	store := local.New("/")
	_ = storage.WalkFiles(context.Background(), store, filepath.Join(f.dir, topic, "topics"), func(d string) bool { return strings.Contains(d, "+tmp") }, func(name string) error {
		if r, ok := layout.ParseFinalName(name); ok {
			n += r.End - r.Start + 1
		}
		return nil
	})
	return n
}

// TestRestartThroughAPIRevivesAGivenUpConnector: once the policy gave up
// (--restart-max-attempts 0), POST /connectors/<n>/restart starts it again.
func TestRestartThroughAPIRevivesAGivenUpConnector(t *testing.T) {
	f := newDaemonFixture(t, "once", "other")
	f.run([]*configs.Connector{f.connector("once"), f.connector("other")})
	f.produceBad("once")
	f.waitFor("given up", func() bool { s := f.d.supervisor("once"); return s != nil && s.gaveUp() != nil })
	old := f.d.supervisor("once")
	if code, body := apiCall(f.d, "POST", "/connectors/once/restart"); code != http.StatusNoContent {
		t.Fatalf("restart: %d %s", code, body)
	}
	f.waitFor("a new run, failed again on the same record", func() bool {
		s := f.d.supervisor("once")
		return s != old && s.gaveUp() != nil
	})
	f.stop()
	f.wait()
}

// TestConfigDirectoryWatchReloads: without SIGHUP, a file added to the
// config directory is noticed by the watch and its connector starts.
func TestConfigDirectoryWatchReloads(t *testing.T) {
	f := newDaemonFixture(t, "first", "second")
	f.d.files.Config, f.d.watchEvery = f.dir, 50*time.Millisecond
	f.run([]*configs.Connector{f.connector("first")})
	go f.d.forwardReloads(f.ctx, nil)
	f.connector("second")
	f.waitFor("the new file's connector running", func() bool { return f.d.board.get("second").state == "running" })
	f.stop()
	f.wait()
}
