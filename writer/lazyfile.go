package writer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

// lazyFile is a temp file created when the first byte reaches it, or when
// it closes having received none.
//
// Why: an encoder that buffers (a Parquet row group, an Avro block) writes
// nothing for a while, often not before the file is closed, and creating
// the file on the record that opened it put two NameNode round trips (the
// create, and the first block's allocation when the magic bytes were
// written) on the poll loop for every file: with 64 partitions rotating
// about 450 files a million records, the workers waited 25 s on them in a
// 16 s run (docs/benchmarks.md, "Temp files created at the first write").
// Created later, they are paid where the file is written: most often in
// its commit, off the poll loop.
//
// Nothing of the commit protocol depends on when a temp file is created:
// it is never committed before Close has made it durable, and a temp file
// that never reached HDFS is one fewer to clean up (docs/design.md §5).
type lazyFile struct {
	ctx  context.Context // the Append's that opened it: Create honours it
	fs   storage.FS
	name string
	file storage.File
	err  error // Create's failure: sticky, the encoder's first bytes are lost
	// tried is set once Create was called: a create that failed may still
	// have created the file (the answer was lost), so discard removes it.
	tried bool
}

func (l *lazyFile) open() error {
	if l.file != nil || l.err != nil {
		return l.err
	}
	l.tried = true
	l.file, l.err = l.fs.Create(l.ctx, l.name)
	if l.err != nil {
		l.err = fmt.Errorf("create temp file: %w", l.err)
	}
	return l.err
}

func (l *lazyFile) Write(p []byte) (int, error) {
	if err := l.open(); err != nil {
		return 0, err
	}
	return l.file.Write(p)
}

// Close creates the file if nothing was written to it, then closes it.
func (l *lazyFile) Close() error {
	if err := l.open(); err != nil {
		return err
	}
	return l.file.Close()
}

// discard closes what was opened and removes what may have been created.
func (l *lazyFile) discard(ctx context.Context) error {
	if l.file != nil {
		l.file.Close()
	}
	if !l.tried {
		return nil
	}
	if err := l.fs.Remove(ctx, l.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
