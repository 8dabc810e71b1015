package json

import (
	"fmt"
	"io"

	"github.com/hdfs-sink/hdfs-sink/format/internal/sticky"
)

// lines holds the encoded lines of one file, for both formats of this
// package: they are written with one Write once limit bytes are pending,
// and on Flush and Close. After an error from the underlying writer every
// method returns it: the file is incomplete and must be discarded.
type lines struct {
	w      io.Writer
	limit  int
	name   string // names the format in errors: "json", "format string"
	closed error  // returned once closed
	buf    []byte
	status sticky.State
}

func newLines(w io.Writer, limit int, name string, closed error) lines {
	return lines{w: w, limit: limit, name: name, closed: closed}
}

// endLine ends the line just appended to buf, and writes the pending
// lines once they reach the limit.
func (l *lines) endLine() error {
	l.buf = append(l.buf, '\n')
	if len(l.buf) >= l.limit {
		return l.Flush()
	}
	return nil
}

// Flush writes the pending lines to w.
func (l *lines) Flush() error {
	if err := l.usable(); err != nil {
		return err
	}
	if len(l.buf) == 0 {
		return nil
	}
	if _, err := l.w.Write(l.buf); err != nil {
		return l.status.Fail(fmt.Errorf("%s: write %d bytes: %w", l.name, len(l.buf), err))
	}
	l.buf = l.buf[:0]
	return nil
}

// BytesBuffered is the number of encoded bytes not yet written to w.
func (l *lines) BytesBuffered() int { return len(l.buf) }

// Close flushes. It does not close w. A second Close returns the first
// one's result.
func (l *lines) Close() error {
	return l.status.Close(func() error {
		err := l.Flush()
		l.buf = nil
		return err
	})
}

func (l *lines) usable() error { return l.status.Usable(l.closed) }
