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
package storage

import (
	"io"
	"io/fs"
)

// FS is the store's file system.
type FS interface {
	Create(name string) (File, error)
	Open(name string) (io.ReadCloser, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	RemoveAll(name string) error
	ReadDir(name string) ([]fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	MkdirAll(name string) error
	Close() error
}

// File is a file open for writing.
type File interface {
	io.Writer
	// Close makes the written data durable. It may be called again after an
	// error; once it has returned nil further calls return nil.
	Close() error
}
