// Package writer owns the files one Kafka partition is writing: a temp file per
// output directory (encoded partition), their offsets and record counts, and the
// committed file names they will take. It knows nothing of the WAL: the sink
// decides when files are closed and how they are committed.
//
// A temp file is written and closed under the context of the Append that
// opened it (storage.File honours its Create's context), so Close takes
// none: a partition's files are opened and committed under one context.
package writer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Options says where a partition's files go.
type Options struct {
	FS        storage.FS
	Format    format.Format
	Layout    layout.Topic // where the topic's committed files go
	Partition int32
	Pad       int    // filename.offset.zero.pad.width
	TempDir   string // where this writer creates its temp files (private to the partition)
	Prefix    string // unique per owner incarnation, so temp names never collide
}

// A writer lives for one claim (docs/design.md §5), so what it learns of
// compacted directories is never older than its owner's claim: a
// compaction publishes its generation, then claims every partition,
// fencing owners that looked before (docs/design.md §12).

// Closed is a temp file that is complete and durable, with its final name.
type Closed struct {
	Temp, Final string
	Encoded     string // the output directory below <topics.dir>/<topic>
	Start, End  int64
	Records     int64
}

// Writer holds the open temp files of one Kafka partition. It is not safe for
// concurrent use: one partition is driven by one goroutine at a time.
type Writer struct {
	opts     Options
	files    map[string]*tempFile
	order    []string // encoded paths in first-write order, for deterministic commits
	records  int64
	schemaID int32
	opened   time.Time
	nextTemp int
	// compacted is, per output directory, the directory its files are
	// committed into: the directory itself, or its compacted generation
	// once that exists. Asked once per directory and writer.
	compacted map[string]string
}

type tempFile struct {
	ctx        context.Context // the Append's that opened it: the file honours it
	encoded    string
	temp       string
	file       storage.File
	written    *countingWriter
	rw         format.RecordWriter
	start, end int64
	count      int64
}

// New returns a Writer with no open files.
func New(opts Options) *Writer {
	return &Writer{opts: opts, files: map[string]*tempFile{}, compacted: map[string]string{}}
}

// Records is the number of records in the open files, across directories.
func (w *Writer) Records() int64 { return w.records }

// Empty reports whether no file is open.
func (w *Writer) Empty() bool { return len(w.files) == 0 }

// OpenFiles is how many temp files are open (one per output directory).
func (w *Writer) OpenFiles() int { return len(w.files) }

// SchemaID is the writer schema of the open files; ok is false when none is open.
func (w *Writer) SchemaID() (id int32, ok bool) { return w.schemaID, len(w.files) > 0 }

// OpenedAt is when the oldest open file was created.
func (w *Writer) OpenedAt() time.Time { return w.opened }

// OpenFileOverhead is what an open file costs beyond the data its encoder
// buffers: the HDFS client's packet buffers and the encoder's own state
// (a Parquet writer's schema and column writers). Measured with 1,000
// partitions writing Parquet: about 60 KB per open file, which the memory
// ceiling did not see until it was counted here.
const OpenFileOverhead = 64 << 10

// BytesBuffered is the memory held by the open files: what their encoders
// buffer plus OpenFileOverhead each.
func (w *Writer) BytesBuffered() int {
	n := 0
	for _, f := range w.files {
		n += f.rw.BytesBuffered() + OpenFileOverhead
	}
	return n
}

// Bytes is the size of the open files so far, buffered bytes included.
func (w *Writer) Bytes() int64 {
	var n int64
	for _, f := range w.files {
		n += f.written.n + int64(f.rw.BytesBuffered())
	}
	return n
}

// countingWriter counts what reaches the file.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Append writes one record's datum to the temp file of directory encoded,
// opening it if needed, under ctx: the file's writes and its Close honour
// the context it was opened with. All open files share one schema: the
// caller rotates before a record with another schema.
func (w *Writer) Append(ctx context.Context, encoded string, s *schema.Schema, offset int64, datum []byte, now time.Time) error {
	if len(w.files) > 0 && schemaID(s) != w.schemaID {
		return fmt.Errorf("writer: schema %d while files of schema %d are open", schemaID(s), w.schemaID)
	}
	f, err := w.file(ctx, encoded, s, now)
	if err != nil {
		return err
	}
	if err := f.rw.WriteDatum(datum); err != nil {
		return fmt.Errorf("write %s offset %d: %w", f.temp, offset, err)
	}
	if f.count == 0 {
		f.start = offset
	}
	f.end = offset
	f.count++
	w.records++
	return nil
}

func (w *Writer) file(ctx context.Context, encoded string, s *schema.Schema, now time.Time) (*tempFile, error) {
	if f, ok := w.files[encoded]; ok {
		return f, nil
	}
	w.nextTemp++
	temp := path.Join(w.opts.TempDir, fmt.Sprintf("%s-%d_tmp%s", w.opts.Prefix, w.nextTemp, w.opts.Format.Extension()))
	file, err := w.opts.FS.Create(ctx, temp)
	if err != nil {
		return nil, fmt.Errorf("create temp file: %w", err)
	}
	cw := &countingWriter{w: file}
	rw, err := w.opts.Format.NewWriter(cw, s)
	if err != nil {
		file.Close()
		w.opts.FS.Remove(ctx, temp)
		return nil, fmt.Errorf("start %s file %s: %w", w.opts.Format.Name(), temp, err)
	}
	f := &tempFile{ctx: ctx, encoded: encoded, temp: temp, file: file, written: cw, rw: rw}
	if len(w.files) == 0 {
		w.schemaID, w.opened = schemaID(s), now
	}
	w.files[encoded] = f
	w.order = append(w.order, encoded)
	return f, nil
}

// Close finishes every open file and makes it durable, each under the
// context it was opened with. On error the files stay open for Discard;
// nothing may be committed.
func (w *Writer) Close() ([]Closed, error) {
	out := make([]Closed, 0, len(w.order))
	for _, enc := range w.order {
		if err := w.followCompaction(w.files[enc]); err != nil {
			return nil, err
		}
	}
	for _, enc := range w.order {
		f := w.files[enc]
		if err := f.rw.Close(); err != nil {
			return nil, fmt.Errorf("finish %s: %w", f.temp, err)
		}
		if err := f.file.Close(); err != nil {
			return nil, fmt.Errorf("close %s: %w", f.temp, err)
		}
		final := w.opts.Layout.FinalPath(w.compacted[enc], w.opts.Partition, f.start, f.end, w.opts.Pad, w.opts.Format.Extension())
		out = append(out, Closed{
			Temp: f.temp, Final: final, Encoded: enc, Start: f.start, End: f.end, Records: f.count,
		})
	}
	w.reset()
	return out, nil
}

// followCompaction learns, once per directory, whether a compaction
// published a generation of it: files of a compacted directory are
// committed into its generation, where readers are (or are about to be)
// switched; the directory itself is never written again.
func (w *Writer) followCompaction(f *tempFile) error {
	if _, ok := w.compacted[f.encoded]; ok {
		return nil
	}
	gen := path.Join(layout.CompactedDirName, f.encoded)
	_, err := w.opts.FS.Stat(f.ctx, w.opts.Layout.CompactedDir(f.encoded))
	switch {
	case err == nil:
		w.compacted[f.encoded] = gen
	case errors.Is(err, fs.ErrNotExist):
		w.compacted[f.encoded] = f.encoded
	default:
		return fmt.Errorf("look for a compaction of %s: %w", f.encoded, err)
	}
	return nil
}

// schemaID is 0 for schemaless values (nil schema).
func schemaID(s *schema.Schema) int32 {
	if s == nil {
		return 0
	}
	return s.ID
}

// Discard closes what it can and removes every open temp file: their records
// were never committed and will be consumed again.
func (w *Writer) Discard(ctx context.Context) error {
	var errs []error
	for _, enc := range w.order {
		f := w.files[enc]
		f.file.Close()
		if err := w.opts.FS.Remove(ctx, f.temp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	w.reset()
	return errors.Join(errs...)
}

func (w *Writer) reset() {
	w.files = map[string]*tempFile{}
	w.order = nil
	w.records = 0
	w.opened = time.Time{}
}
