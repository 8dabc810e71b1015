package main

import (
	"context"
	"io"
	"io/fs"
	"sync"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

// countingFS counts the calls a piece of work makes on the store, by
// operation, and the bytes it reads: each call is one NameNode RPC or
// more (Create and a file's Close are several), so the counts are the
// NameNode cost of a compaction; bytes read against the inputs' size say
// whether each input was read once.
type countingFS struct {
	storage.FS
	mu        sync.Mutex
	calls     map[string]int64
	bytesRead int64
}

func newCountingFS(fsys storage.FS) *countingFS {
	return &countingFS{FS: fsys, calls: map[string]int64{}}
}

func (c *countingFS) count(op string) {
	c.mu.Lock()
	c.calls[op]++
	c.mu.Unlock()
}

// snapshot is a copy of the counts.
func (c *countingFS) snapshot() (map[string]int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out, c.bytesRead
}

func (c *countingFS) Create(ctx context.Context, name string) (storage.File, error) {
	c.count("create")
	return c.FS.Create(ctx, name)
}

func (c *countingFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	c.count("open")
	rc, err := c.FS.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &countingReader{ReadCloser: rc, fs: c}, nil
}

func (c *countingFS) Rename(ctx context.Context, oldpath, newpath string) error {
	c.count("rename")
	return c.FS.Rename(ctx, oldpath, newpath)
}

func (c *countingFS) Remove(ctx context.Context, name string) error {
	c.count("remove")
	return c.FS.Remove(ctx, name)
}

func (c *countingFS) RemoveAll(ctx context.Context, name string) error {
	c.count("removeall")
	return c.FS.RemoveAll(ctx, name)
}

func (c *countingFS) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	c.count("readdir")
	return c.FS.ReadDir(ctx, name)
}

func (c *countingFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	c.count("stat")
	return c.FS.Stat(ctx, name)
}

func (c *countingFS) MkdirAll(ctx context.Context, name string) error {
	c.count("mkdirall")
	return c.FS.MkdirAll(ctx, name)
}

type countingReader struct {
	io.ReadCloser
	fs *countingFS
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.fs.mu.Lock()
	r.fs.bytesRead += int64(n)
	r.fs.mu.Unlock()
	return n, err
}

// sumCalls is the number of store calls in counts.
func sumCalls(counts map[string]int64) int64 {
	var n int64
	for _, v := range counts {
		n += v
	}
	return n
}
