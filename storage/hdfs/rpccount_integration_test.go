//go:build integration

package hdfs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/colinmarc/hdfs/v2"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// rpcCounter counts the Hadoop RPC requests written on NameNode
// connections: after the 7-byte "hrpc" preamble every request is a frame
// of a 4-byte length and that many bytes.
type rpcCounter struct {
	mu     sync.Mutex
	frames int
}

func (r *rpcCounter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frames
}

type countingConn struct {
	net.Conn
	r        *rpcCounter
	preamble int    // preamble bytes still to skip
	header   []byte // length bytes of the frame being read
	left     int    // body bytes of the current frame still to come
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.scan(p[:n])
	return n, err
}

func (c *countingConn) scan(p []byte) {
	for len(p) > 0 {
		switch {
		case c.preamble > 0:
			k := min(c.preamble, len(p))
			c.preamble, p = c.preamble-k, p[k:]
		case c.left > 0:
			k := min(c.left, len(p))
			c.left, p = c.left-k, p[k:]
		default:
			c.header, p = append(c.header, p[0]), p[1:]
			if len(c.header) == 4 {
				c.left, c.header = int(binary.BigEndian.Uint32(c.header)), nil
				c.r.mu.Lock()
				c.r.frames++
				c.r.mu.Unlock()
			}
		}
	}
}

// countedFS is an FS on one NameNode connection whose RPC frames counter
// counts.
func countedFS(t *testing.T) (*FS, *rpcCounter) {
	t.Helper()
	cl := itest.HDFSClient(t)
	dir := itest.HDFSDir(t, cl)
	counter := &rpcCounter{}
	copts := hdfs.ClientOptions{Addresses: []string{itest.NameNodeAddr()}, User: "root"}
	f := newFS(dir, Options{CloseRetries: 13}, &copts)
	dial := copts.NamenodeDialFunc
	copts.NamenodeDialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, r: counter, preamble: 7}, nil
	}
	c, err := connect(copts, itest.HDFSURI())
	if err != nil {
		t.Fatal(err)
	}
	f.clients = append(f.clients, &client{Client: c})
	t.Cleanup(func() { f.Close() })
	return f, counter
}

// TestCreateIsOneNameNodeCall: creating a file whose directory exists is
// one NameNode call, and a file that exists is still refused (fs.ErrExist).
// colinmarc's Create asked getFileInfo first: with 10,000 partitions (issue
// 25) that was one call more for every temp file and WAL segment.
func TestCreateIsOneNameNodeCall(t *testing.T) {
	t.Parallel()
	f, counter := countedFS(t)
	ctx := context.Background()
	if err := f.MkdirAll(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	before := counter.count()
	w, err := f.Create(ctx, "d/file")
	if err != nil {
		t.Fatal(err)
	}
	if calls := counter.count() - before; calls != 1 {
		t.Errorf("Create in an existing directory made %d NameNode calls, want 1", calls)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Create(ctx, "d/file"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create of an existing file = %v, want fs.ErrExist", err)
	}
	if _, err := f.Create(ctx, "d"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a directory = %v, want fs.ErrExist", err)
	}
}

// TestEachCallIsOneNameNodeCall: the calls a commit and a recovery make
// are one NameNode round trip each, where colinmarc's Open, ReadDir,
// Rename, Remove, RemoveAll and MkdirAll sent getFileInfo first (two: more
// than half of the NameNode calls per commit, docs/benchmarks.md) and a
// Create in a missing directory took three (create, mkdirs, create), and
// each still means what storage.FS promises, failures included.
func TestEachCallIsOneNameNodeCall(t *testing.T) {
	t.Parallel()
	f, counter := countedFS(t)
	ctx := context.Background()
	put := func(name, body string) {
		t.Helper()
		w, err := f.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	put("d/a", "alpha")
	put("d/b", "")
	put("full/x", "x")
	read := func() error {
		r, err := f.Open(ctx, "d/a")
		if err != nil {
			return err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err == nil && string(b) != "alpha" {
			err = fmt.Errorf("read %q, want %q", b, "alpha")
		}
		return err
	}
	list := func(name string, want ...string) func() error {
		return func() error {
			fis, err := f.ReadDir(ctx, name)
			if err != nil {
				return err
			}
			var got []string
			for _, fi := range fis {
				got = append(got, fi.Name())
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("ReadDir(%s) = %v, want %v", name, got, want)
			}
			return nil
		}
	}
	readEmpty := func() error {
		r, err := f.Open(ctx, "d/b")
		if err != nil {
			return err
		}
		defer r.Close()
		if b, err := io.ReadAll(r); err != nil || len(b) != 0 {
			return fmt.Errorf("read %q, %v; want nothing", b, err)
		}
		return nil
	}
	errNotDir := errors.New("any error but fs.ErrNotExist")
	createDeep := func() error {
		w, err := f.Create(ctx, "new/deeper/file")
		if err != nil {
			return err
		}
		return w.Close()
	}
	// The NameNode gives the directories a create makes the mode of the
	// nearest existing one, as for Java's FileSystem.create (which always
	// asks CreateParent).
	newDirMode := func() error {
		base, err := f.Stat(ctx, ".")
		if err != nil {
			return err
		}
		for _, d := range []string{"new", "new/deeper"} {
			fi, err := f.Stat(ctx, d)
			if err == nil && fi.Mode() != base.Mode() {
				err = fmt.Errorf("%s, made by Create, has mode %v, want its parent's %v", d, fi.Mode(), base.Mode())
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	cases := []struct {
		name  string
		call  func() error
		calls int   // NameNode round trips
		want  error // nil, an error it must match, or errNotDir
	}{
		{"create in missing directories", createDeep, 2, nil}, // create, and complete at Close
		{"the directories it made", newDirMode, 3, nil},
		{"open and read a file", read, 1, nil}, // getBlockLocations; the read goes to a DataNode
		{"open an empty file", readEmpty, 1, nil},
		{"open a missing file", func() error { _, err := f.Open(ctx, "d/none"); return err }, 1, fs.ErrNotExist},
		{"list a directory", list("d", "a", "b"), 1, nil},
		{"list a missing directory", list("none"), 1, fs.ErrNotExist},
		{"list a file", list("d/a"), 1, errNotDir},
		{"rename onto a new name", func() error { return f.Rename(ctx, "d/b", "d/c") }, 1, nil},
		{"rename onto a file", func() error { return f.Rename(ctx, "d/c", "d/a") }, 1, nil},
		{"rename onto a non-empty directory", func() error { return f.Rename(ctx, "d", "full") }, 1, errNotDir},
		{"list after the renames", list("d", "a"), 1, nil},
		{"make an existing directory", func() error { return f.MkdirAll(ctx, "d") }, 1, nil},
		{"make a directory over a file", func() error { return f.MkdirAll(ctx, "d/a") }, 1, fs.ErrExist},
		{"remove a missing file", func() error { return f.Remove(ctx, "d/none") }, 1, fs.ErrNotExist},
		{"remove a non-empty directory", func() error { return f.Remove(ctx, "full") }, 1, errNotDir},
		{"remove a file", func() error { return f.Remove(ctx, "full/x") }, 1, nil},
		{"remove an empty directory", func() error { return f.Remove(ctx, "full") }, 1, nil},
		{"remove a tree", func() error { return f.RemoveAll(ctx, "d") }, 1, nil},
		{"remove a missing tree", func() error { return f.RemoveAll(ctx, "d") }, 1, nil},
	}
	for _, tc := range cases {
		before := counter.count()
		err := tc.call()
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == errNotDir && (err == nil || errors.Is(err, fs.ErrNotExist)):
			t.Errorf("%s: err = %v, want an error other than fs.ErrNotExist", tc.name, err)
		case tc.want != nil && tc.want != errNotDir && !errors.Is(err, tc.want):
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		if calls := counter.count() - before; calls != tc.calls {
			t.Errorf("%s: %d NameNode calls, want %d", tc.name, calls, tc.calls)
		}
	}
}
