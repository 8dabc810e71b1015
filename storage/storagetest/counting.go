package storagetest

import (
	"context"
	"io"
	"io/fs"
	"sync"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Counting wraps a storage.FS and counts its calls by operation: on HDFS
// each is at least one NameNode call (a Create is two with the file's
// Close, which is not counted here), so tests can measure what a piece of
// work costs the NameNode, independent of the backend's speed. It also
// counts the bytes read through the files it opens (whether a piece of
// work read each input once).
type Counting struct {
	storage.FS
	mu        sync.Mutex
	calls     map[string]int
	bytesRead int64
}

var _ storage.FS = (*Counting)(nil)

// NewCounting counts the calls made on fsys.
func NewCounting(fsys storage.FS) *Counting { return &Counting{FS: fsys, calls: map[string]int{}} }

func (c *Counting) count(op string) {
	c.mu.Lock()
	c.calls[op]++
	c.mu.Unlock()
}

// Calls is a copy of the counts by operation ("readdir", "stat", "open",
// "create", "rename", "remove", "removeall", "mkdirall").
func (c *Counting) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

// Total is the number of calls so far.
func (c *Counting) Total() int {
	n := 0
	for _, v := range c.Calls() {
		n += v
	}
	return n
}

// BytesRead is how many bytes were read from the files opened so far.
func (c *Counting) BytesRead() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytesRead
}

// Reset sets every count to zero.
func (c *Counting) Reset() {
	c.mu.Lock()
	c.calls, c.bytesRead = map[string]int{}, 0
	c.mu.Unlock()
}

func (c *Counting) Create(ctx context.Context, name string) (storage.File, error) {
	c.count("create")
	return c.FS.Create(ctx, name)
}

func (c *Counting) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	c.count("open")
	rc, err := c.FS.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &countingReader{ReadCloser: rc, c: c}, nil
}

// countingReader adds what it reads to its Counting's bytes.
type countingReader struct {
	io.ReadCloser
	c *Counting
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.c.mu.Lock()
	r.c.bytesRead += int64(n)
	r.c.mu.Unlock()
	return n, err
}

func (c *Counting) Rename(ctx context.Context, oldpath, newpath string) error {
	c.count("rename")
	return c.FS.Rename(ctx, oldpath, newpath)
}

func (c *Counting) Remove(ctx context.Context, name string) error {
	c.count("remove")
	return c.FS.Remove(ctx, name)
}

func (c *Counting) RemoveAll(ctx context.Context, name string) error {
	c.count("removeall")
	return c.FS.RemoveAll(ctx, name)
}

func (c *Counting) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	c.count("readdir")
	return c.FS.ReadDir(ctx, name)
}

func (c *Counting) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	c.count("stat")
	return c.FS.Stat(ctx, name)
}

func (c *Counting) MkdirAll(ctx context.Context, name string) error {
	c.count("mkdirall")
	return c.FS.MkdirAll(ctx, name)
}
