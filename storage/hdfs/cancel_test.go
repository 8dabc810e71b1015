package hdfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/encoding/protowire"
)

// guard is how long a test waits for what must happen at once before it
// calls it hung: generous, never a measure of speed.
const guard = 30 * time.Second

// within runs fn and fails the test if it has not returned after guard.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatalf("%s: still waiting after %v", what, guard)
	}
}

// testFS is a store of conns NameNode connections to the NameNode at addr,
// made without the server defaults New fetches (a hung NameNode would not
// answer). Reads and writes time out after an hour: in these tests nothing
// but a context ends a call. It is closed at the end of the test, once.
func testFS(t *testing.T, addr string, conns int) (*FS, func() error) {
	t.Helper()
	copts := hdfs.ClientOptions{Addresses: []string{addr}, User: "root"}
	f := newFS("/base", Options{IOTimeout: time.Hour, CloseRetries: 1}, &copts)
	for range conns {
		c, err := hdfs.NewClient(copts)
		if err != nil {
			t.Fatal(err)
		}
		f.clients = append(f.clients, &client{Client: c})
	}
	closeFS := sync.OnceValue(f.Close)
	t.Cleanup(func() { closeFS() })
	return f, closeFS
}

// cancelledSoon is a context cancelled 100 ms from now, while the call
// made with it waits for the NameNode.
func cancelledSoon(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	return ctx
}

// TestCancelEndsHungCall: a call to a NameNode that never answers returns
// once its context is cancelled, with an error that matches
// context.Canceled and names the operation and the path. Without it the
// call waited for the I/O timeout (here an hour).
func TestCancelEndsHungCall(t *testing.T) {
	calls := []struct {
		op   string
		call func(ctx context.Context, f *FS) error
	}{
		{"stat", func(ctx context.Context, f *FS) error { _, err := f.Stat(ctx, "/x"); return err }},
		{"create", func(ctx context.Context, f *FS) error { _, err := f.Create(ctx, "/x"); return err }},
		{"open", func(ctx context.Context, f *FS) error { _, err := f.Open(ctx, "/x"); return err }},
		{"rename", func(ctx context.Context, f *FS) error { return f.Rename(ctx, "/x", "/y") }},
		{"remove", func(ctx context.Context, f *FS) error { return f.Remove(ctx, "/x") }},
		{"removeall", func(ctx context.Context, f *FS) error { return f.RemoveAll(ctx, "/x") }},
		{"readdir", func(ctx context.Context, f *FS) error { _, err := f.ReadDir(ctx, "/x"); return err }},
		{"mkdir", func(ctx context.Context, f *FS) error { return f.MkdirAll(ctx, "/x") }},
	}
	for _, tc := range calls {
		t.Run(tc.op, func(t *testing.T) {
			addr, _ := hungNameNode(t)
			f, _ := testFS(t, addr, 1)
			var err error
			within(t, tc.op+" with a cancelled context", func() { err = tc.call(cancelledSoon(t), f) })
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s = %v, want an error matching context.Canceled", tc.op, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.op+" ") || !strings.Contains(msg, "/base/x") {
				t.Fatalf("%s error %q does not name the operation and the path", tc.op, msg)
			}
		})
	}
}

// TestCloseEndsCallsLeftBehind: the store's Close does not wait for a call
// its context gave up (colinmarc's Close waits for the call under way).
func TestCloseEndsCallsLeftBehind(t *testing.T) {
	addr, _ := hungNameNode(t)
	f, closeFS := testFS(t, addr, 1)
	within(t, "stat with a cancelled context", func() { f.Stat(cancelledSoon(t), "/x") })
	within(t, "Close with a call left behind", func() { closeFS() })
}

// TestCancelFailsNoOtherCall: two calls share one NameNode connection (the
// client sends one at a time); the first hangs and its context is
// cancelled. It returns, and the second, whose context is live, still gets
// its answer once the NameNode answers: cancelling one call never fails
// another. Closing the connection under the first would have failed both.
func TestCancelFailsNoOtherCall(t *testing.T) {
	nn := newFakeNameNode(t, "/stall")
	f, _ := testFS(t, nn.addr, 1)
	first := make(chan error, 1)
	go func() { _, err := f.Stat(cancelledSoon(t), "/stall"); first <- err }()
	<-nn.stalled
	second := make(chan error, 1)
	go func() { _, err := f.Stat(t.Context(), "/other"); second <- err }()
	within(t, "the cancelled call", func() {
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call = %v, want an error matching context.Canceled", err)
		}
	})
	close(nn.release)
	within(t, "the call with a live context", func() {
		if err := <-second; !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("call with a live context = %v, want the NameNode's answer (not found)", err)
		}
	})
	if _, err := f.Stat(t.Context(), "/third"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a call after the late answer = %v, want the NameNode's answer (not found)", err)
	}
}

// TestCallsAvoidConnectionHeldByCallLeftBehind: a call given up may hold
// its NameNode connection until the NameNode answers (here never); later
// calls go through the store's other connections meanwhile.
func TestCallsAvoidConnectionHeldByCallLeftBehind(t *testing.T) {
	nn := newFakeNameNode(t, "/stall")
	f, _ := testFS(t, nn.addr, 2)
	within(t, "the cancelled call", func() { f.Stat(cancelledSoon(t), "/stall") })
	for i := range 3 {
		within(t, "a later call", func() {
			if _, err := f.Stat(t.Context(), "/other"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("later call %d = %v, want the NameNode's answer (not found)", i, err)
			}
		})
	}
}

// blockingWriter is a client writer whose Write and Close wait for
// release, as against a DataNode that stopped answering.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	wrote   []byte
	closes  int
	closed  chan struct{} // closed at the first Close
}

func newBlockingWriter() *blockingWriter {
	return &blockingWriter{release: make(chan struct{}), closed: make(chan struct{})}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wrote = append(w.wrote, p...)
	return len(p), nil
}

func (w *blockingWriter) Close() error {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closes++
	if w.closes == 1 {
		close(w.closed)
	}
	return nil
}

// TestCancelEndsHungFileCall: a Write or Close waiting for a DataNode
// returns when the Create's context is cancelled; the file is broken
// (never reported durable), and the call left behind closes the client's
// writer, once, when it returns. The bytes it writes are the ones the
// caller gave, even if the caller reuses its buffer meanwhile.
func TestCancelEndsHungFileCall(t *testing.T) {
	for _, op := range []string{"write", "close"} {
		t.Run(op, func(t *testing.T) {
			w := newBlockingWriter()
			f := &file{w: w, ctx: cancelledSoon(t), c: &client{}, name: "/base/f", retries: 3}
			p := []byte("data")
			var err error
			within(t, op, func() {
				if op == "write" {
					_, err = f.Write(p)
				} else {
					err = f.Close()
				}
			})
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), op+" /base/f") {
				t.Fatalf("%s = %v, want an error matching context.Canceled naming %q", op, err, op+" /base/f")
			}
			copy(p, "XXXX") // the caller's buffer is its own again
			if err := f.Close(); err == nil {
				t.Fatal("Close after a call given up returned nil")
			}
			close(w.release)
			within(t, "the writer's release", func() { <-w.closed })
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.closes != 1 {
				t.Fatalf("the client's writer was closed %d times, want once", w.closes)
			}
			if op == "write" && string(w.wrote) != "data" {
				t.Fatalf("the write left behind wrote %q, want %q", w.wrote, "data")
			}
		})
	}
}

// blockingReader is a client reader whose Read waits for release and then
// fills what it was given.
type blockingReader struct {
	release chan struct{}
	closed  chan struct{}
}

func (r *blockingReader) Read(p []byte) (int, error) {
	<-r.release
	return copy(p, "late"), nil
}

func (r *blockingReader) Close() error { close(r.closed); return nil }

// TestCancelEndsHungRead: a Read waiting for a DataNode returns when
// Open's context is cancelled; the read left behind never writes into the
// caller's buffer, and closes the client's reader when it returns.
func TestCancelEndsHungRead(t *testing.T) {
	br := &blockingReader{release: make(chan struct{}), closed: make(chan struct{})}
	r := &reader{r: br, ctx: cancelledSoon(t), c: &client{}, name: "/base/f"}
	p := []byte("mine")
	var err error
	within(t, "read", func() { _, err = r.Read(p) })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "read /base/f") {
		t.Fatalf("read = %v, want an error matching context.Canceled naming the file", err)
	}
	close(br.release)
	within(t, "the reader's release", func() { <-br.closed })
	if string(p) != "mine" {
		t.Fatalf("the read left behind wrote %q into the caller's buffer", p)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close after a read given up = %v", err)
	}
}

// fakeNameNode answers NameNode calls as about a path that does not exist
// (an empty response), except calls whose request holds stall: those wait
// until release is closed (stalled says one has arrived).
type fakeNameNode struct {
	addr     string
	stall    []byte
	stalled  chan struct{}
	release  chan struct{}
	stopping chan struct{}
}

func newFakeNameNode(t *testing.T, stall string) *fakeNameNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nn := &fakeNameNode{addr: ln.Addr().String(), stall: []byte(stall), stalled: make(chan struct{}, 16),
		release: make(chan struct{}), stopping: make(chan struct{})}
	var conns sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { nn.serve(c) })
		}
	}()
	t.Cleanup(func() {
		close(nn.stopping)
		ln.Close()
	})
	return nn
}

// serve reads the handshake, then answers each request in turn.
func (nn *fakeNameNode) serve(c net.Conn) {
	defer c.Close()
	go func() { <-nn.stopping; c.Close() }()
	header := make([]byte, 7) // "hrpc", version, service class, auth
	if _, err := io.ReadFull(c, header); err != nil {
		return
	}
	if _, err := readFrame(c); err != nil { // the connection context
		return
	}
	for {
		req, err := readFrame(c)
		if err != nil {
			return
		}
		if bytes.Contains(req, nn.stall) {
			nn.stalled <- struct{}{}
			select {
			case <-nn.release:
			case <-nn.stopping:
				return
			}
		}
		if _, err := c.Write(emptyResponse(callID(req))); err != nil {
			return
		}
	}
}

func readFrame(r io.Reader) ([]byte, error) {
	var n uint32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// callID is the call id of a request: field 3 (sint32) of the
// RpcRequestHeaderProto its frame starts with.
func callID(req []byte) int32 {
	size, n := protowire.ConsumeVarint(req)
	hdr := req[n : n+int(size)]
	for len(hdr) > 0 {
		num, typ, n := protowire.ConsumeTag(hdr)
		hdr = hdr[n:]
		if num == 3 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(hdr)
			return int32(protowire.DecodeZigZag(v))
		}
		hdr = hdr[protowire.ConsumeFieldValue(num, typ, hdr):]
	}
	return -1
}

// emptyResponse is a successful RpcResponseHeaderProto for id and no
// response message: an empty one.
func emptyResponse(id int32) []byte {
	var hdr []byte
	hdr = protowire.AppendTag(hdr, 1, protowire.VarintType)
	hdr = protowire.AppendVarint(hdr, uint64(uint32(id)))
	hdr = protowire.AppendTag(hdr, 2, protowire.VarintType)
	hdr = protowire.AppendVarint(hdr, 0) // SUCCESS
	packet := protowire.AppendVarint(nil, uint64(len(hdr)))
	packet = append(packet, hdr...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(packet))), packet...)
}
