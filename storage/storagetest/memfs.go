package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Op names a MemFS operation that a fault can be injected into.
type Op uint8

// Operations that FailNext and FailNextAfter can target.
const (
	OpCreate Op = iota + 1
	OpWrite
	OpClose // File.Close
	OpRename
	OpRemove // Remove and RemoveAll
	OpReadDir
	OpStat
	OpOpen
)

var opNames = map[Op]string{
	OpCreate: "create", OpWrite: "write", OpClose: "close", OpRename: "rename",
	OpRemove: "remove", OpReadDir: "readdir", OpStat: "stat", OpOpen: "open",
}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return "op?"
}

// ErrCrashed is returned by writes and closes on file handles that were open
// when Crash was called: their process is considered dead.
var ErrCrashed = errors.New("storagetest: file handle lost in simulated crash")

// AnyPath matches every path.
func AnyPath(string) bool { return true }

// PathContains matches paths containing s.
func PathContains(s string) func(string) bool {
	return func(name string) bool { return strings.Contains(name, s) }
}

type fault struct {
	op    Op
	match func(string) bool
	err   error
	after bool // apply the operation, then fail (a lost reply)
	// hang: wait for the call's context to end, then fail with it, without
	// effect (a store that stopped answering); reached is closed then.
	hang    bool
	reached chan struct{}
}

type node struct {
	dir     bool
	data    []byte
	closed  bool // file: Close returned nil, data durable
	modTime time.Time
}

// MemFS is an in-memory storage.FS with the semantics of storage.FS (and of
// HDFS where they differ from POSIX only in detail) plus fault injection.
// It is safe for concurrent use.
//
// Visibility of unclosed files: a file exists in the namespace from Create
// on, and Open/Stat show the bytes written so far. Crash keeps exactly those
// bytes. Real HDFS, without hflush, shows readers only completed blocks, so
// it can expose less than MemFS; both cases are "a prefix of what was
// written", which is what readers must cope with.
//
// Contexts: a call whose context is done fails at once, without effect and
// without consuming a fault; a file's Write and Close use its Create's
// context, a reader's Read its Open's. HangNext makes a call wait for its
// context to end.
type MemFS struct {
	mu     sync.Mutex
	nodes  map[string]*node
	faults []fault
	epoch  int // incremented by Crash; handles from older epochs are dead
}

var _ storage.FS = (*MemFS)(nil)

// NewMemFS returns an empty MemFS holding only the root directory "/".
func NewMemFS() *MemFS {
	return &MemFS{nodes: map[string]*node{"/": {dir: true}}}
}

// FailNext makes the next op on a path accepted by match fail with err,
// without taking effect. For OpRename match sees both the old and the new
// path. Faults are one-shot and consumed in registration order.
func (m *MemFS) FailNext(op Op, match func(string) bool, err error) {
	m.addFault(fault{op: op, match: match, err: err})
}

// FailNextAfter is FailNext, except that the operation takes effect before
// err is returned: a reply lost after the server applied the call.
func (m *MemFS) FailNextAfter(op Op, match func(string) bool, err error) {
	m.addFault(fault{op: op, match: match, err: err, after: true})
}

// HangNext makes the next op on a path accepted by match hang until the
// call's context is done, as a store that stopped answering, and then fail
// with an error matching ctx.Err(), without effect. The channel is closed
// when the call starts hanging. For OpWrite and OpClose the context is the
// file's Create's. Hangs are faults: one-shot, in registration order.
func (m *MemFS) HangNext(op Op, match func(string) bool) <-chan struct{} {
	reached := make(chan struct{})
	m.addFault(fault{op: op, match: match, hang: true, reached: reached})
	return reached
}

func (m *MemFS) addFault(f fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = append(m.faults, f)
}

// takeFault removes and returns the first fault for op matching any name.
// The caller holds m.mu.
func (m *MemFS) takeFault(op Op, names ...string) (fault, bool) {
	for i, f := range m.faults {
		if f.op != op || !slices.ContainsFunc(names, f.match) {
			continue
		}
		m.faults = slices.Delete(m.faults, i, i+1)
		return f, true
	}
	return fault{}, false
}

// Crash simulates the death of every writer: files not yet closed stay in
// the namespace with the bytes written so far (as after HDFS lease
// recovery), and their handles fail with ErrCrashed from now on.
func (m *MemFS) Crash() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.epoch++
	for _, n := range m.nodes {
		if !n.dir {
			n.closed = true
		}
	}
}

func clean(name string) string { return path.Clean("/" + name) }

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// mkdirAll creates dir and its parents; the caller holds m.mu.
func (m *MemFS) mkdirAll(dir string) error {
	if n, ok := m.nodes[dir]; ok {
		if !n.dir {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		return nil
	}
	if err := m.mkdirAll(path.Dir(dir)); err != nil {
		return err
	}
	m.nodes[dir] = &node{dir: true, modTime: time.Now()}
	return nil
}

// hang waits, unlocked, for ctx to end and returns the error of a call
// that it ended. The caller holds m.mu, and holds it again on return.
func (m *MemFS) hang(ctx context.Context, f fault, op Op, name string) error {
	m.mu.Unlock()
	defer m.mu.Lock()
	close(f.reached)
	<-ctx.Done()
	return storage.Interrupted(ctx, op.String(), name)
}

// Create creates name exclusively, creating missing parents. The file's
// Write and Close use ctx.
func (m *MemFS) Create(ctx context.Context, name string) (storage.File, error) {
	name = clean(name)
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "create", name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var file *memFile
	err := m.faulted(ctx, OpCreate, func() error {
		if _, ok := m.nodes[name]; ok {
			return pathErr("create", name, fs.ErrExist)
		}
		if err := m.mkdirAll(path.Dir(name)); err != nil {
			return err
		}
		n := &node{modTime: time.Now()}
		m.nodes[name] = n
		file = &memFile{fs: m, ctx: ctx, name: name, node: n, epoch: m.epoch}
		return nil
	}, name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

// faulted runs apply under the faults registered for op on names: a fault
// fails the call before apply, or after it (a reply lost once the server
// applied the call), or hangs it until ctx ends. The caller holds m.mu.
func (m *MemFS) faulted(ctx context.Context, op Op, apply func() error, names ...string) error {
	f, faulty := m.takeFault(op, names...)
	if faulty && f.hang {
		return m.hang(ctx, f, op, names[0])
	}
	if faulty && !f.after {
		return f.err
	}
	if err := apply(); err != nil {
		return err
	}
	if faulty {
		return f.err
	}
	return nil
}

// read is what every read does first: clean the name, check ctx, lock,
// take its fault, look the node up; then it runs f on the node, still
// locked.
func (m *MemFS) read(ctx context.Context, op Op, verb, name string, f func(name string, n *node) error) error {
	name = clean(name)
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, verb, name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.takeFault(op, name); ok && f.hang {
		return m.hang(ctx, f, op, name)
	} else if ok {
		return f.err
	}
	n, ok := m.nodes[name]
	if !ok {
		return pathErr(verb, name, fs.ErrNotExist)
	}
	return f(name, n)
}

// Open returns a reader over a snapshot of name's current contents; its
// Read checks ctx.
func (m *MemFS) Open(ctx context.Context, name string) (r io.ReadCloser, err error) {
	err = m.read(ctx, OpOpen, "open", name, func(name string, n *node) error {
		if n.dir {
			return pathErr("open", name, syscall.EISDIR)
		}
		r = &memReader{Reader: bytes.NewReader(bytes.Clone(n.data)), ctx: ctx, name: name}
		return nil
	})
	return r, err
}

// memReader reads a snapshot, checking Open's context first.
type memReader struct {
	*bytes.Reader
	ctx  context.Context
	name string
}

func (r *memReader) Read(p []byte) (int, error) {
	if r.ctx.Err() != nil {
		return 0, storage.Interrupted(r.ctx, "read", r.name)
	}
	return r.Reader.Read(p)
}

func (r *memReader) Close() error { return nil }

// Rename moves oldpath (and, for a directory, its tree) to newpath, creating
// newpath's parent. It overwrites a destination file or empty directory of
// the same kind and fails on a non-empty destination directory.
func (m *MemFS) Rename(ctx context.Context, oldpath, newpath string) error {
	oldpath, newpath = clean(oldpath), clean(newpath)
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "rename", oldpath)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.faulted(ctx, OpRename, func() error { return m.rename(oldpath, newpath) }, oldpath, newpath)
}

func (m *MemFS) rename(oldpath, newpath string) error {
	linkErr := func(err error) error {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	src, ok := m.nodes[oldpath]
	switch {
	case !ok:
		return linkErr(fs.ErrNotExist)
	case oldpath == "/" || strings.HasPrefix(newpath, oldpath+"/"):
		return linkErr(syscall.EINVAL)
	case oldpath == newpath:
		return nil
	}
	if dst, ok := m.nodes[newpath]; ok {
		if err := m.checkRenameTarget(src, dst, newpath); err != nil {
			return linkErr(err)
		}
	}
	if err := m.mkdirAll(path.Dir(newpath)); err != nil {
		return err
	}
	m.move(oldpath, newpath)
	return nil
}

// checkRenameTarget applies rename(2)'s rules for an existing destination.
func (m *MemFS) checkRenameTarget(src, dst *node, newpath string) error {
	switch {
	case src.dir && !dst.dir:
		return syscall.ENOTDIR
	case !src.dir && dst.dir:
		return syscall.EISDIR
	case dst.dir && m.hasChildren(newpath):
		return syscall.ENOTEMPTY // matches fs.ErrExist
	}
	return nil
}

func (m *MemFS) hasChildren(dir string) bool {
	for name := range m.nodes {
		if strings.HasPrefix(name, dir+"/") {
			return true
		}
	}
	return false
}

// move re-keys oldpath and its subtree under newpath; the caller holds m.mu.
func (m *MemFS) move(oldpath, newpath string) {
	m.nodes[newpath] = m.nodes[oldpath]
	delete(m.nodes, oldpath)
	for name, n := range m.nodes {
		if rest, ok := strings.CutPrefix(name, oldpath+"/"); ok {
			m.nodes[newpath+"/"+rest] = n
			delete(m.nodes, name)
		}
	}
}

// Remove deletes a file or an empty directory.
func (m *MemFS) Remove(ctx context.Context, name string) error {
	name = clean(name)
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "remove", name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.faulted(ctx, OpRemove, func() error { return m.remove(name) }, name)
}

func (m *MemFS) remove(name string) error {
	n, ok := m.nodes[name]
	switch {
	case !ok:
		return pathErr("remove", name, fs.ErrNotExist)
	case name == "/":
		return pathErr("remove", name, syscall.EBUSY)
	case n.dir && m.hasChildren(name):
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(m.nodes, name)
	return nil
}

// RemoveAll deletes name and its subtree; a missing name is not an error.
func (m *MemFS) RemoveAll(ctx context.Context, name string) error {
	name = clean(name)
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "removeall", name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.faulted(ctx, OpRemove, func() error {
		for n := range m.nodes {
			if n != "/" && (n == name || strings.HasPrefix(n, name+"/") || name == "/") {
				delete(m.nodes, n)
			}
		}
		return nil
	}, name)
}

// ReadDir lists a directory's direct children sorted by name.
func (m *MemFS) ReadDir(ctx context.Context, name string) (infos []fs.FileInfo, err error) {
	err = m.read(ctx, OpReadDir, "readdir", name, func(name string, n *node) error {
		if !n.dir {
			return pathErr("readdir", name, syscall.ENOTDIR)
		}
		for child, cn := range m.nodes {
			if child != "/" && path.Dir(child) == name {
				infos = append(infos, newInfo(child, cn))
			}
		}
		slices.SortFunc(infos, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
		return nil
	})
	return infos, err
}

// Stat describes name.
func (m *MemFS) Stat(ctx context.Context, name string) (info fs.FileInfo, err error) {
	err = m.read(ctx, OpStat, "stat", name, func(name string, n *node) error {
		info = newInfo(name, n)
		return nil
	})
	return info, err
}

// MkdirAll creates name and missing parents.
func (m *MemFS) MkdirAll(ctx context.Context, name string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "mkdir", clean(name))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mkdirAll(clean(name))
}

// Close is a no-op: MemFS holds no connection.
func (m *MemFS) Close() error { return nil }

// memFile is a handle on a file being written. Writes go to the node, which
// follows renames of the file or its directories (as an inode does).
type memFile struct {
	fs    *MemFS
	ctx   context.Context // Create's
	name  string
	node  *node
	epoch int
	done  bool
}

func (w *memFile) Write(p []byte) (int, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if err := w.usable("write"); err != nil {
		return 0, err
	}
	if f, ok := w.fs.takeFault(OpWrite, w.name); ok && f.hang {
		return 0, w.fs.hang(w.ctx, f, OpWrite, w.name)
	} else if ok {
		if f.after {
			w.node.data = append(w.node.data, p...)
		}
		return 0, f.err
	}
	w.node.data = append(w.node.data, p...)
	w.node.modTime = time.Now()
	return len(p), nil
}

// Close marks the data durable; after it has returned nil it always does.
func (w *memFile) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if w.done {
		return nil
	}
	if err := w.usable("close"); err != nil {
		return err
	}
	if !w.fs.linked(w.node) {
		// As HDFS's complete() on a deleted file: the data has nowhere to go.
		return pathErr("close", w.name, fs.ErrNotExist)
	}
	f, faulty := w.fs.takeFault(OpClose, w.name)
	if faulty && f.hang {
		return w.fs.hang(w.ctx, f, OpClose, w.name)
	}
	if faulty && !f.after {
		return f.err
	}
	w.done = true
	w.node.closed = true
	if faulty {
		return f.err
	}
	return nil
}

// linked reports whether n is still in the namespace; the caller holds fs.mu.
func (m *MemFS) linked(n *node) bool {
	for _, x := range m.nodes {
		if x == n {
			return true
		}
	}
	return false
}

// usable reports why the handle cannot be used; the caller holds fs.mu.
func (w *memFile) usable(op string) error {
	switch {
	case w.ctx.Err() != nil:
		return storage.Interrupted(w.ctx, op, w.name)
	case w.epoch != w.fs.epoch:
		return pathErr(op, w.name, ErrCrashed)
	case w.done:
		return pathErr(op, w.name, fs.ErrClosed)
	}
	return nil
}

type memInfo struct {
	name    string
	size    int64
	dir     bool
	modTime time.Time
}

func newInfo(name string, n *node) memInfo {
	return memInfo{name: path.Base(name), size: int64(len(n.data)), dir: n.dir, modTime: n.modTime}
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return i.modTime }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
