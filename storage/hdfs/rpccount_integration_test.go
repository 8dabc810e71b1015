//go:build integration

package hdfs

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"net"
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

// TestCreateIsOneNameNodeCall: creating a file whose directory exists is
// one NameNode call, and a file that exists is still refused (fs.ErrExist).
// colinmarc's Create asked getFileInfo first: with 10,000 partitions (issue
// 25) that was one call more for every temp file and WAL segment.
func TestCreateIsOneNameNodeCall(t *testing.T) {
	t.Parallel()
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
	defer f.Close()
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
