package hdfs

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// hungNameNode accepts connections and reads whatever comes, but never
// answers: a NameNode frozen by SIGSTOP or a long GC pause, whose kernel
// still completes the TCP handshake and takes the bytes.
func hungNameNode(t *testing.T) (addr string, conns func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	})
	return ln.Addr().String(), func() int { return len(accepted) }
}

// TestHungNameNodeCallTimesOut: with colinmarc/hdfs alone a call to a
// NameNode that never answers waits forever. Through our dialer it fails
// after the I/O timeout, and the next call dials a new connection instead
// of reading the late reply of the one before.
func TestHungNameNodeCallTimesOut(t *testing.T) {
	addr, conns := hungNameNode(t)
	dial := newDialer(time.Second, 200*time.Millisecond).dial
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{addr}, User: "root", NamenodeDialFunc: dial})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 1; i <= 2; i++ {
		done := make(chan error, 1)
		go func() { _, err := c.Stat("/x"); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("call %d to a NameNode that never answers succeeded", i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d to a hung NameNode still waiting after 10s", i)
		}
		time.Sleep(5100 * time.Millisecond) // past the client's 5 s backoff per host
	}
	if n := conns(); n < 2 {
		t.Fatalf("%d connections to the NameNode, want a new one after the timeout", n)
	}
}

// TestClosedConnSaysWhy: the call that meets a connection closed by an
// earlier timeout reports that timeout, not "use of closed network
// connection" (which is what the operator would otherwise read).
func TestClosedConnSaysWhy(t *testing.T) {
	addr, _ := hungNameNode(t)
	c, err := newDialer(time.Second, 100*time.Millisecond).dial(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read from a silent peer did not time out")
	}
	_, err = c.Write([]byte("next call"))
	if err == nil || !strings.Contains(err.Error(), "i/o timeout") || strings.Contains(err.Error(), "use of closed") {
		t.Fatalf("write after the timeout: %v; want the timeout named", err)
	}
}

// TestTimeoutConnIdleIsNotAnError: deadlines are per operation, so a
// connection that sits idle longer than the timeout (an open file between
// records, a NameNode connection between calls) still works.
func TestTimeoutConnIdleIsNotAnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(c, c) // echo
		}
	}()
	c, err := newDialer(time.Second, 100*time.Millisecond).dial(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(300 * time.Millisecond)
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read after idling: %q, %v", buf, err)
	}
}

// fakeWriter fails its first Close and then succeeds, as colinmarc/hdfs's
// FileWriter may once its block stream has failed.
type fakeWriter struct {
	writeErr, closeErr error
	closes             int
}

func (w *fakeWriter) Write(p []byte) (int, error) { return len(p), w.writeErr }
func (w *fakeWriter) Close() error {
	w.closes++
	if w.closes == 1 {
		return w.closeErr
	}
	return nil
}

// TestFailedCloseStaysFailed: a Close that failed for any reason but
// "replicating" means the data may not be on a DataNode; a retried Close
// must not report it durable.
func TestFailedCloseStaysFailed(t *testing.T) {
	w := &fakeWriter{closeErr: errors.New("ack: connection reset by peer")}
	f := &file{w: w, ctx: t.Context(), c: &client{}, retries: 3}
	if _, err := f.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if err := f.Close(); err == nil {
			t.Fatalf("close %d after a failed close returned nil", i)
		}
	}
	if w.closes != 1 {
		t.Fatalf("the client's writer was closed %d times, want once", w.closes)
	}
}

// TestFailedWriteFailsClose: after a failed write the file cannot be
// completed either.
func TestFailedWriteFailsClose(t *testing.T) {
	w := &fakeWriter{writeErr: errors.New("broken pipe")}
	f := &file{w: w, ctx: t.Context(), c: &client{}, retries: 3}
	if _, err := f.Write([]byte("data")); err == nil {
		t.Fatal("write error not returned")
	}
	for i := 1; i <= 2; i++ {
		if err := f.Close(); err == nil {
			t.Fatal("close after a failed write returned nil")
		}
	}
	// Its writer is still closed, once, so the client's block stream
	// goroutines end.
	if w.closes != 1 {
		t.Fatalf("the client's writer was closed %d times, want once", w.closes)
	}
}

// TestPipelineFailureIsExplained: colinmarc/hdfs's bare pipeline errors
// ("write failed: ERROR ()") say what failed, on Write and on Close, and
// stay the same error; any other error is left as it is.
func TestPipelineFailureIsExplained(t *testing.T) {
	const said = "a DataNode of the block's write pipeline failed"
	cases := []struct {
		name      string
		err       error
		explained bool
	}{
		{"set-up refused", errors.New("write failed: ERROR ()"), true},
		{"ack error", errors.New("Ack error from datanode: ERROR"), true},
		{"connection refused", errors.New("dial tcp 127.0.0.1:9886: connect: connection refused"), false},
		{"reset", errors.New("read tcp 127.0.0.1:1->127.0.0.1:9866: read: connection reset by peer"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, op := range []string{"write", "close"} {
				w := &fakeWriter{}
				if op == "write" {
					w.writeErr = c.err
				} else {
					w.closeErr = c.err
				}
				f := &file{w: w, ctx: t.Context(), c: &client{}, name: "/t/f", retries: 3}
				_, err := f.Write([]byte("data"))
				if op == "close" {
					err = f.Close()
				}
				if !errors.Is(err, c.err) {
					t.Fatalf("%s: %v does not wrap %v", op, err, c.err)
				}
				if got := strings.Contains(err.Error(), said); got != c.explained {
					t.Errorf("%s: %q: explained %v, want %v", op, err, got, c.explained)
				}
				if err := f.Close(); err == nil || (op == "write" && !strings.Contains(err.Error(), "cannot be completed")) {
					t.Errorf("%s: the file's next Close: %v", op, err)
				}
			}
		})
	}
}
