// Package wal owns the sink's write-ahead log for one Kafka partition: a
// directory of immutable, individually published segments, each holding one
// framed, checksummed entry (content encoding lives in package wal/entry).
//
// The HDFS client offers no hflush/hsync and no lease recovery, and its
// Rename overwrites files, so the log is not appended to. Each segment is
// built in a private staging directory, closed (the only durability point on
// HDFS) and renamed into place as <seq>/. Renaming a directory onto an
// existing non-empty directory fails on HDFS and on Linux, so publication is
// atomic and exclusive, and the sequence number doubles as a fencing token:
// an owner that believes seq N is its last publishes N+1 and learns from
// ErrSeqTaken that another owner has claimed the partition. The format and
// protocol are described byte by byte in docs/wal.md.
package wal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

const (
	seqDigits     = 20 // fits every uint64; names sort in sequence order
	segmentFile   = "segment"
	stagingPrefix = ".staging-"
	// maxSegmentSize bounds how much Read loads; a legitimate segment holds
	// one entry of at most MaxFrameSize bytes.
	maxSegmentSize = MaxFrameSize + headerSize + 2*frameHeaderSize + endPayloadSize
)

// ErrSeqTaken means the segment number is already published by someone
// else: the caller no longer owns the partition and must stop writing.
var ErrSeqTaken = errors.New("segment sequence number already taken")

// fileSystem is the part of storage.FS the log uses. Every method of the
// Log takes the context its store calls run under.
type fileSystem interface {
	Create(ctx context.Context, name string) (storage.File, error)
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	Rename(ctx context.Context, oldpath, newpath string) error
	RemoveAll(ctx context.Context, name string) error
	ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error)
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
}

// Log is the WAL of one partition, stored under one directory. Its methods
// hold no state between calls and are safe for concurrent use; exclusion
// between writers comes from the publish protocol, not from the Log.
type Log struct {
	fsys fileSystem
	dir  string
}

// Open returns the log stored in dir (e.g. "<logs.dir>/<topic>/<partition>").
// It does no I/O: the directory is created by the first Publish.
func Open(fsys storage.FS, dir string) *Log {
	return &Log{fsys: fsys, dir: path.Clean(dir)}
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

func (l *Log) segmentDir(seq uint64) string {
	return path.Join(l.dir, fmt.Sprintf("%0*d", seqDigits, seq))
}

// SegmentPath returns the path of the segment file of seq.
func (l *Log) SegmentPath(seq uint64) string {
	return path.Join(l.segmentDir(seq), segmentFile)
}

// Segments lists published sequence numbers in ascending order. A missing
// directory is an empty log. Staging directories and foreign names are
// ignored.
func (l *Log) Segments(ctx context.Context) ([]uint64, error) {
	ls, err := l.List(ctx)
	return ls.Segments, err
}

// Listing is one listing of the log's directory: its published segments in
// ascending order and the names of its staging directories. A recovery
// that just listed the log to check its claim prunes and removes staging
// directories from that listing instead of listing twice more (a NameNode
// call each, per partition: issue 25's 10,000 partitions).
type Listing struct {
	Segments []uint64
	Staging  []string
}

// List lists the log's directory once. A missing directory is an empty log.
func (l *Log) List(ctx context.Context) (Listing, error) {
	infos, err := l.fsys.ReadDir(ctx, l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Listing{}, nil
	}
	if err != nil {
		return Listing{}, fmt.Errorf("wal: list %s: %w", l.dir, err)
	}
	var ls Listing
	for _, info := range infos {
		if seq, ok := parseSeq(info); ok {
			ls.Segments = append(ls.Segments, seq) // ReadDir sorts, and names are fixed-width
		} else if IsStaging(info.Name()) {
			ls.Staging = append(ls.Staging, info.Name())
		}
	}
	return ls, nil
}

func parseSeq(info fs.FileInfo) (uint64, bool) {
	name := info.Name()
	if !info.IsDir() || len(name) != seqDigits || strings.Trim(name, "0123456789") != "" {
		return 0, false
	}
	seq, err := strconv.ParseUint(name, 10, 64)
	return seq, err == nil
}

// Read returns the entry of published segment seq. A missing segment is an
// error matching fs.ErrNotExist; unreadable contents are a *CorruptionError.
func (l *Log) Read(ctx context.Context, seq uint64) (entry.Entry, error) {
	p := l.SegmentPath(seq)
	data, err := l.readFile(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := l.fsys.Stat(ctx, l.segmentDir(seq)); serr == nil {
			// Published directories always hold their file: a directory
			// without it is as incomplete as a torn tail.
			return entry.Entry{}, &CorruptionError{Path: p, Reason: "segment file missing", Err: ErrTornTail}
		}
	}
	if err != nil {
		return entry.Entry{}, fmt.Errorf("wal: read segment %d: %w", seq, err)
	}
	return decodeEntrySegment(p, data)
}

func (l *Log) readFile(ctx context.Context, p string) ([]byte, error) {
	r, err := l.fsys.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxSegmentSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSegmentSize {
		return nil, &CorruptionError{Path: p, Offset: maxSegmentSize, Reason: "segment exceeds size limit", Err: ErrBadFrame}
	}
	return data, nil
}

// encodeEntrySegment is the segment a Publish writes for e.
func encodeEntrySegment(e entry.Entry) ([]byte, error) {
	payload, err := entry.Encode(e)
	if err != nil {
		return nil, err
	}
	return EncodeSegment(payload), nil
}

// decodeEntrySegment parses a segment holding exactly one entry.
func decodeEntrySegment(p string, data []byte) (entry.Entry, error) {
	payloads, err := DecodeSegment(p, data)
	if err != nil {
		return entry.Entry{}, err
	}
	if len(payloads) != 1 {
		return entry.Entry{}, &CorruptionError{Path: p, Offset: headerSize,
			Reason: fmt.Sprintf("%d entries, want 1", len(payloads)), Err: ErrBadFrame}
	}
	e, err := entry.Decode(payloads[0])
	if err != nil {
		return entry.Entry{}, &CorruptionError{Path: p, Offset: headerSize + frameHeaderSize,
			Reason: "entry does not decode", Err: fmt.Errorf("%w: %w", ErrBadEntry, err)}
	}
	return e, nil
}

// Publish durably publishes e as segment seq: it writes the segment into a
// fresh staging directory, closes it, and renames the directory to its final
// name. If seq is already published by another writer it returns an error
// matching ErrSeqTaken. On every failure the staging directory is removed
// and no segment seq of this writer's is visible.
func (l *Log) Publish(ctx context.Context, seq uint64, e entry.Entry) error {
	data, err := encodeEntrySegment(e)
	if err != nil {
		return fmt.Errorf("wal: publish segment %d: %w", seq, err)
	}
	staging, err := l.stagingDir()
	if err != nil {
		return fmt.Errorf("wal: publish segment %d: %w", seq, err)
	}
	if err := l.publish(ctx, staging, seq, data); err != nil {
		if rerr := l.fsys.RemoveAll(ctx, staging); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove staging %s: %w", staging, rerr))
		}
		return fmt.Errorf("wal: publish segment %d in %s: %w", seq, l.dir, err)
	}
	return nil
}

// IsStaging reports whether name (a path or a base name) is a staging
// directory of Publish: a segment being built, not yet published.
func IsStaging(name string) bool { return strings.HasPrefix(path.Base(name), stagingPrefix) }

func (l *Log) stagingDir() (string, error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("staging name: %w", err)
	}
	return path.Join(l.dir, stagingPrefix+hex.EncodeToString(id[:])), nil
}

func (l *Log) publish(ctx context.Context, staging string, seq uint64, data []byte) error {
	if err := l.writeFile(ctx, path.Join(staging, segmentFile), data); err != nil {
		return l.lostTo(ctx, seq, err)
	}
	final := l.segmentDir(seq)
	err := l.fsys.Rename(ctx, staging, final)
	if err == nil {
		return nil
	}
	// Rename errors differ per backend, so decide by looking: if the final
	// name exists, either our rename took effect and only the reply was
	// lost (the published bytes are ours), or another writer holds seq.
	if _, serr := l.fsys.Stat(ctx, final); serr != nil {
		return fmt.Errorf("rename %s: %w", staging, err)
	}
	ours, rerr := l.holds(ctx, final, data)
	switch {
	case rerr != nil:
		// The segment stands, but whose it is cannot be told: the outcome
		// is unknown, never "taken". A caller that took it for taken would
		// discard the files of what may be its own published commit.
		return fmt.Errorf("rename %s: %w; reading segment %d back to see whose it is failed (outcome unknown): %w", staging, err, seq, rerr)
	case ours:
		return nil
	}
	return ErrSeqTaken
}

// lostTo is the error of a publish of seq whose staging segment could not
// be written. It never reached seq's name, so a segment seq that stands now
// is another writer's: the publish lost the number, and the error matches
// ErrSeqTaken as well as err. That is how an owner that claims seq and
// then removes the staging directories it lists (RemoveStagingListed)
// fails a publisher racing it: the loser's write or close finds its file
// gone. Said as "taken", a claim re-reads and claims the next number (a
// compaction's fence did not, and the compaction failed); a commit is
// fenced, as it was. When seq does not stand, or cannot be looked at, err
// is returned as it is.
func (l *Log) lostTo(ctx context.Context, seq uint64, err error) error {
	if _, serr := l.fsys.Stat(ctx, l.segmentDir(seq)); serr != nil {
		return err
	}
	return fmt.Errorf("%w: %w", ErrSeqTaken, err)
}

// holds reports whether the segment in dir has exactly the bytes data. Each
// entry carries its writer's epoch and a timestamp, so another writer's
// segment does not match. An error means the answer is unknown.
func (l *Log) holds(ctx context.Context, dir string, data []byte) (bool, error) {
	got, err := l.readFile(ctx, path.Join(dir, segmentFile))
	if err != nil {
		return false, err
	}
	return bytes.Equal(got, data), nil
}

func (l *Log) writeFile(ctx context.Context, name string, data []byte) error {
	f, err := l.fsys.Create(ctx, name)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close() // the write already failed; its error is the one to report
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

// Prune removes published segments numbered below below, lowest first, so
// that after a crash the remaining segments are still a contiguous suffix.
// It never removes the newest segment: its number is the fencing token and
// its entry the state a new owner starts from, and an emptied log would let
// a new owner restart at 0 below a fenced writer's next number.
func (l *Log) Prune(ctx context.Context, below uint64) error {
	ls, err := l.List(ctx)
	if err != nil {
		return err
	}
	return l.PruneListed(ctx, ls, below)
}

// PruneListed is Prune on the segments of an earlier listing: a segment
// published since is left for the next prune (removing fewer is always
// safe), and the newest listed one is never removed.
func (l *Log) PruneListed(ctx context.Context, ls Listing, below uint64) error {
	seqs := ls.Segments
	if len(seqs) > 0 {
		below = min(below, seqs[len(seqs)-1])
	}
	for _, seq := range seqs {
		if seq >= below {
			break
		}
		if err := l.fsys.RemoveAll(ctx, l.segmentDir(seq)); err != nil {
			return fmt.Errorf("wal: prune segment %d in %s: %w", seq, l.dir, err)
		}
	}
	return nil
}

// RemoveStaging removes staging directories left by failed or crashed
// publishers. Call it only as the partition's owner, after claiming: a
// fenced writer still publishing loses its staging directory and fails,
// which is the desired outcome.
func (l *Log) RemoveStaging(ctx context.Context) error {
	ls, err := l.List(ctx)
	if err != nil {
		return err
	}
	return l.RemoveStagingListed(ctx, ls)
}

// RemoveStagingListed is RemoveStaging on the staging directories of a
// listing made after claiming; one created since is the next recovery's.
func (l *Log) RemoveStagingListed(ctx context.Context, ls Listing) error {
	for _, name := range ls.Staging {
		if err := l.fsys.RemoveAll(ctx, path.Join(l.dir, name)); err != nil {
			return fmt.Errorf("wal: remove staging %s in %s: %w", name, l.dir, err)
		}
	}
	return nil
}
