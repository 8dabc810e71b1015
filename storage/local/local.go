// Package local owns the storage.FS backend over the local operating-system
// file system. It exists for single-host deployments and for tests: it gives
// the commit protocol the same create/close/rename semantics as HDFS, and it
// makes every namespace change durable (fsync of the file and of the
// directories whose entries changed) before reporting success.
//
// Contexts: every call checks its context before it starts, and a file
// checks its Create's context before each Write and Close. A system call
// under way is not interrupted: Go cannot interrupt a read, write or fsync
// of a regular file portably, and a local disk does not hang the way a
// remote NameNode can.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

const (
	dirPerm  = 0o755
	filePerm = 0o644
)

// FS is a storage.FS whose names are resolved below a root directory.
type FS struct {
	root string
}

var _ storage.FS = (*FS)(nil)

// New returns a file system rooted at root: the store name "/topics/x" is the
// OS path <root>/topics/x. Names cannot escape root ("/../x" is "/x").
func New(root string) *FS {
	return &FS{root: root}
}

// osPath maps a store name to an OS path below the root.
func (l *FS) osPath(name string) string {
	return filepath.Join(l.root, filepath.FromSlash(path.Clean("/"+name)))
}

// Create creates name exclusively (O_EXCL), creating missing parents. The
// file's Write and Close check ctx.
func (l *FS) Create(ctx context.Context, name string) (storage.File, error) {
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "create", name)
	}
	p := l.osPath(name)
	if err := mkdirAll(filepath.Dir(p)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return nil, err
	}
	return &file{f: f, ctx: ctx}, nil
}

// Open opens name for reading.
func (l *FS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "open", name)
	}
	f, err := os.Open(l.osPath(name))
	if err != nil {
		return nil, err
	}
	return &reader{File: f, ctx: ctx, name: name}, nil
}

// reader checks Open's context before each Read.
type reader struct {
	*os.File
	ctx  context.Context
	name string
}

func (r *reader) Read(p []byte) (int, error) {
	if r.ctx.Err() != nil {
		return 0, storage.Interrupted(r.ctx, "read", r.name)
	}
	return r.File.Read(p)
}

// Rename renames oldpath to newpath, creating newpath's parent. As rename(2)
// it overwrites a destination file and fails (ENOTEMPTY or EEXIST) on a
// non-empty destination directory. Both parent directories are fsynced so the
// rename survives a power loss once Rename returns nil.
func (l *FS) Rename(ctx context.Context, oldpath, newpath string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "rename", oldpath)
	}
	op, np := l.osPath(oldpath), l.osPath(newpath)
	if err := mkdirAll(filepath.Dir(np)); err != nil {
		return err
	}
	if err := os.Rename(op, np); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(np)); err != nil {
		return err
	}
	if filepath.Dir(op) != filepath.Dir(np) {
		return syncDir(filepath.Dir(op))
	}
	return nil
}

// Remove deletes a file or an empty directory.
func (l *FS) Remove(ctx context.Context, name string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "remove", name)
	}
	p := l.osPath(name)
	if err := os.Remove(p); err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// RemoveAll deletes name and everything below it; a missing name is not an
// error.
func (l *FS) RemoveAll(ctx context.Context, name string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "removeall", name)
	}
	p := l.osPath(name)
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	err := syncDir(filepath.Dir(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the parent never existed: nothing was removed
	}
	return err
}

// ReadDir lists a directory sorted by name.
func (l *FS) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "readdir", name)
	}
	entries, err := os.ReadDir(l.osPath(name))
	if err != nil {
		return nil, err
	}
	infos := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed after the listing: as if listed a moment later
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// Stat describes name.
func (l *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "stat", name)
	}
	return os.Stat(l.osPath(name))
}

// MkdirAll creates name and missing parents.
func (l *FS) MkdirAll(ctx context.Context, name string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "mkdir", name)
	}
	return mkdirAll(l.osPath(name))
}

// Close releases nothing: the local backend holds no connection.
func (l *FS) Close() error { return nil }

// mkdirAll creates dir and its missing parents, fsyncing the parent of each
// directory it creates so the new entries are durable.
func mkdirAll(dir string) error {
	info, err := os.Stat(dir)
	if err == nil {
		if !info.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: errNotDir}
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

var errNotDir = errors.New("not a directory")

// syncDir fsyncs a directory so entries created, renamed or removed in it
// survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("sync dir: %w", serr)
	}
	return cerr
}

// file is a file open for writing. Close fsyncs the data and the parent
// directory. Both check ctx, Create's context, first.
type file struct {
	f      *os.File
	ctx    context.Context
	done   bool
	result error
}

func (w *file) Write(p []byte) (int, error) {
	if w.done {
		return 0, &fs.PathError{Op: "write", Path: w.f.Name(), Err: fs.ErrClosed}
	}
	if w.ctx.Err() != nil {
		return 0, storage.Interrupted(w.ctx, "write", w.f.Name())
	}
	return w.f.Write(p)
}

// Close fsyncs and closes the file, then fsyncs its directory. The result is
// sticky: after a failed fsync Linux may drop the dirty pages and report
// success on a second fsync ("fsyncgate"), so a retried Close returns the
// first error instead of pretending the data became durable.
func (w *file) Close() error {
	if w.done {
		return w.result
	}
	w.done = true
	if w.ctx.Err() != nil {
		w.f.Close() // not durable, but no descriptor left open
		w.result = storage.Interrupted(w.ctx, "close", w.f.Name())
		return w.result
	}
	serr := w.f.Sync()
	cerr := w.f.Close()
	switch {
	case serr != nil:
		w.result = fmt.Errorf("sync file: %w", serr)
	case cerr != nil:
		w.result = cerr
	default:
		w.result = syncDir(filepath.Dir(w.f.Name()))
	}
	return w.result
}
