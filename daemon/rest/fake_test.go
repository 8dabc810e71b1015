package rest

import (
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// fakeConnectors is a daemon as the API sees it: connectors with a state,
// and a record of what was asked of it.
type fakeConnectors struct {
	mu       sync.Mutex
	conns    map[string]Connector
	calls    []string // "pause orders", "put added", …
	putBody  string   // the body Put last read
	put      func(name string) (*configs.Connector, bool, error)
	failNext error // returned by the next Pause, Resume, Restart or Delete
	notReady []string
	redact   *secret.Redactor
	worker   *configs.Worker
	fakeOps  // the Operations' (fake_ops_test.go)
}

var _ Connectors = (*fakeConnectors)(nil)

func (f *fakeConnectors) Names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.conns))
	for n := range f.conns {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (f *fakeConnectors) Connector(name string) (Connector, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.conns[name]
	return c, ok
}

func (f *fakeConnectors) do(call, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failNext; err != nil {
		f.failNext = nil
		return err
	}
	if _, ok := f.conns[name]; !ok {
		return ErrNotFound
	}
	f.calls = append(f.calls, call+" "+name)
	return nil
}

func (f *fakeConnectors) Pause(name string) error   { return f.do("pause", name) }
func (f *fakeConnectors) Resume(name string) error  { return f.do("resume", name) }
func (f *fakeConnectors) Restart(name string) error { return f.do("restart", name) }
func (f *fakeConnectors) Delete(name string) error  { return f.do("delete", name) }

func (f *fakeConnectors) Put(name string, body io.Reader) (*configs.Connector, bool, error) {
	b, _ := io.ReadAll(body)
	f.mu.Lock()
	f.putBody = string(b)
	f.calls = append(f.calls, "put "+name)
	f.mu.Unlock()
	return f.put(name)
}

func (f *fakeConnectors) NotReady() []string         { return append([]string(nil), f.notReady...) }
func (f *fakeConnectors) Redactor() *secret.Redactor { return f.redact }
func (f *fakeConnectors) Worker() *configs.Worker    { return f.worker }

func (f *fakeConnectors) called() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, ", ")
}

// okHandler stands for the daemon's /status and /metrics.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })

// errDisk is a failure the API has no status of its own for.
var errDisk = errors.New("write /etc/connect/orders.json: no space left on device")

// nextRestart is a time a failed connector waits for.
func nextRestart() time.Time { return time.Now().Add(time.Minute) }
