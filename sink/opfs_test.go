package sink

import (
	"context"
	"io"
	"io/fs"
	"sync"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

// opFS numbers every storage call one owner makes (file writes and closes
// included) and lets a test act just before or just after call n: crash
// there, freeze there, or change the store under the owner's feet.
type opFS struct {
	storage.FS
	mu     sync.Mutex
	n      int                          // calls made so far
	before func(n int, op, name string) // nil: nothing
	after  func(n int, op, name string) // nil: nothing
}

func newOpFS(inner storage.FS) *opFS { return &opFS{FS: inner} }

// calls is how many storage calls the owner has made.
func (o *opFS) calls() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// do numbers one call and runs the hooks around it. The hooks run outside
// the lock, so a frozen owner blocks only itself.
func (o *opFS) do(op, name string, call func()) {
	o.mu.Lock()
	o.n++
	n, before, after := o.n, o.before, o.after
	o.mu.Unlock()
	if before != nil {
		before(n, op, name)
	}
	call()
	if after != nil {
		after(n, op, name)
	}
}

func (o *opFS) Create(ctx context.Context, name string) (f storage.File, err error) {
	o.do("create", name, func() { f, err = o.FS.Create(ctx, name) })
	if err != nil {
		return nil, err
	}
	return &opFile{File: f, fs: o, name: name}, nil
}

func (o *opFS) Open(ctx context.Context, name string) (r io.ReadCloser, err error) {
	o.do("open", name, func() { r, err = o.FS.Open(ctx, name) })
	return r, err
}

func (o *opFS) Rename(ctx context.Context, oldpath, newpath string) (err error) {
	o.do("rename", oldpath+" -> "+newpath, func() { err = o.FS.Rename(ctx, oldpath, newpath) })
	return err
}

func (o *opFS) Remove(ctx context.Context, name string) (err error) {
	o.do("remove", name, func() { err = o.FS.Remove(ctx, name) })
	return err
}

func (o *opFS) RemoveAll(ctx context.Context, name string) (err error) {
	o.do("removeall", name, func() { err = o.FS.RemoveAll(ctx, name) })
	return err
}

func (o *opFS) ReadDir(ctx context.Context, name string) (infos []fs.FileInfo, err error) {
	o.do("readdir", name, func() { infos, err = o.FS.ReadDir(ctx, name) })
	return infos, err
}

func (o *opFS) Stat(ctx context.Context, name string) (info fs.FileInfo, err error) {
	o.do("stat", name, func() { info, err = o.FS.Stat(ctx, name) })
	return info, err
}

// opFile numbers the writes and the close of a file.
type opFile struct {
	storage.File
	fs   *opFS
	name string
}

func (f *opFile) Write(p []byte) (n int, err error) {
	f.fs.do("write", f.name, func() { n, err = f.File.Write(p) })
	return n, err
}

func (f *opFile) Close() (err error) {
	f.fs.do("close", f.name, func() { err = f.File.Close() })
	return err
}
