// Package storage owns the file-system contract the sink writes through: a
// small subset of the os package that both HDFS (colinmarc/hdfs) and a local
// disk can honour, with the exact semantics the commit protocol relies on.
//
// Paths are slash-separated and absolute within the store ("/topics/t/...").
//
// Semantics every backend must provide (checked by storagetest.Conformance):
//   - Create is exclusive: it fails with an error matching fs.ErrExist when
//     the name exists, and creates missing parent directories.
//   - Data written to a File is durable only after Close returns nil. Close
//     may be retried after an error.
//   - Rename overwrites an existing destination *file*, but fails when the
//     destination is a non-empty directory. Renaming a directory onto a name
//     that does not exist is atomic, so "build a directory under a private
//     name, then rename it into place" publishes it exclusively: of two
//     racing publishers exactly one succeeds.
//   - Remove deletes a file or an empty directory; RemoveAll a whole tree and
//     succeeds when the name does not exist.
//   - ReadDir returns entries sorted by name; a missing directory is an error
//     matching fs.ErrNotExist.
//
// Contexts (docs/decisions.md D28). Every call takes the context of the work
// it belongs to, and honours it:
//   - A call whose context is done before it starts fails without taking
//     effect, with an error matching ctx.Err() (context.Canceled or
//     context.DeadlineExceeded) that names the operation and the path.
//   - A call whose context ends while it waits for the store returns then,
//     with such an error, as far as the backend can interrupt it: the HDFS
//     backend returns at once, a local disk's system calls cannot be
//     interrupted portably and finish first. Its outcome is unknown, exactly
//     as after a lost reply: the call may have taken effect or not, and the
//     commit protocol finds out by looking (docs/design.md §5).
//   - A File honours the context of the Create that opened it, in its Write
//     and its Close: io.Writer has no context, encoders write through it, and
//     a file belongs to one piece of work (a WAL segment's publish, or a
//     partition's temp file, written and committed under its connector's
//     store context). A reader from Open honours Open's context likewise.
//   - A context ending never fails another call whose context is live.
//
// Close on the store itself takes no context: it ends every call still under
// way.
package storage

import (
	"context"
	"io"
	"io/fs"
)

// FS is the store's file system.
type FS interface {
	Create(ctx context.Context, name string) (File, error)
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	Rename(ctx context.Context, oldpath, newpath string) error
	Remove(ctx context.Context, name string) error
	RemoveAll(ctx context.Context, name string) error
	ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error)
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	MkdirAll(ctx context.Context, name string) error
	Close() error
}

// File is a file open for writing. Its Write and Close honour the context
// of the Create that opened it.
type File interface {
	io.Writer
	// Close makes the written data durable. It may be called again after an
	// error; once it has returned nil further calls return nil.
	Close() error
}

// Interrupted is the error of a call on name that its context ended: a
// *fs.PathError naming the operation and the path, matching ctx.Err() and,
// when the context was cancelled with a cause, that cause too (errors.Is).
// Backends return it for a call whose context was done before it started,
// or that they stopped waiting for.
func Interrupted(ctx context.Context, op, name string) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		err = &causedError{err: err, cause: cause}
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// causedError is ctx.Err() with the cause the context was cancelled with.
type causedError struct{ err, cause error }

func (e *causedError) Error() string   { return e.err.Error() + " (" + e.cause.Error() + ")" }
func (e *causedError) Unwrap() []error { return []error{e.err, e.cause} }
