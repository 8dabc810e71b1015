// Package layout owns where the sink's files live in the store and how they
// are named: a topic's committed files, its partitions' private temp
// directories, their WAL directories, and the reference connector's
// committed file name with its parser. Every package that builds or reads
// one of these paths (sink, writer, verify, Hive, cmd) asks this package, so
// the commit protocol's correctness, which rests on these paths, is argued
// against one definition (docs/design.md §2). It imports nothing of this
// module.
package layout

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// TempDirName is the directory under topics.dir that holds temp files, as
// in the reference connector. Nothing below it is committed data.
const TempDirName = "+tmp"

// IsTempDir reports whether a directory name (one path element) holds temp
// files, so walks over committed data skip it.
func IsTempDir(name string) bool { return strings.HasPrefix(name, TempDirName) }

// Topic is the layout of one topic's files. TopicsDir and LogsDir are
// topics.dir and logs.dir with ${topic} expanded, absolute in the store.
type Topic struct {
	TopicsDir string
	LogsDir   string
	Name      string
}

// Dir is <topics.dir>/<topic>: the committed files, below their encoded
// partition directories.
func (t Topic) Dir() string { return path.Join(t.TopicsDir, t.Name) }

// PartitionDir is the directory the default partitioner writes Kafka
// partition p into: <topics.dir>/<topic>/partition=<p>.
func (t Topic) PartitionDir(p int32) string {
	return path.Join(t.Dir(), fmt.Sprintf("partition=%d", p))
}

// TempRoot is <topics.dir>/+tmp/<topic>/<p>: private to Kafka partition p
// (the reference shares its temp directories by encoded partition), so
// recovery of p can remove the orphans of p, a dead process's included,
// without guessing whose file is whose.
func (t Topic) TempRoot(p int32) string {
	return path.Join(t.TopicsDir, TempDirName, t.Name, fmt.Sprint(p))
}

// claimDigits is the width of a claim directory's name: every uint64 fits,
// and names sort in claim order (as WAL segment names do).
const claimDigits = 20

// ClaimTempDir is TempRoot(p)/<claim seq, 20 digits>: where the owner whose
// claim is WAL segment seq creates its temp files. Temp paths are unique per
// claim, not only per process, and recovery under claim S removes only
// what lies below claim directories < S, never a newer owner's files.
func (t Topic) ClaimTempDir(p int32, seq uint64) string {
	return path.Join(t.TempRoot(p), fmt.Sprintf("%0*d", claimDigits, seq))
}

// ParseClaimDir returns the claim sequence number a directory name below
// TempRoot stands for; ok is false for any other name.
func ParseClaimDir(name string) (seq uint64, ok bool) {
	if len(name) != claimDigits || strings.Trim(name, "0123456789") != "" {
		return 0, false
	}
	seq, err := strconv.ParseUint(name, 10, 64)
	return seq, err == nil
}

// TopicTempDir is <topics.dir>/+tmp/<topic>: the temp roots of all its partitions.
func (t Topic) TopicTempDir() string { return path.Join(t.TopicsDir, TempDirName, t.Name) }

// WALDir is <logs.dir>/<topic>/<p>, the directory of p's WAL segments.
func (t Topic) WALDir(p int32) string { return path.Join(t.LogsDir, t.Name, fmt.Sprint(p)) }

// FinalPath is where a committed file of partition p holding offsets
// start..end goes: <topics.dir>/<topic>/<encoded>/<final name>.
func (t Topic) FinalPath(encoded string, p int32, start, end int64, pad int, ext string) string {
	return path.Join(t.Dir(), encoded, FinalName(t.Name, p, start, end, pad, ext))
}

// EncodedDir is the encoded partition directory a committed file lies in:
// the directory of final relative to Dir(), as FinalPath built it. It is
// what the Hive table registers as a partition's location. ok is false when
// final does not lie below a directory of Dir() (a file directly in Dir(),
// below a temp directory, or of another topics.dir).
func (t Topic) EncodedDir(final string) (encoded string, ok bool) {
	rel, found := strings.CutPrefix(path.Dir(path.Clean(final)), t.Dir()+"/")
	if !found || rel == "" || slices.ContainsFunc(strings.Split(rel, "/"), IsTempDir) {
		return "", false
	}
	return rel, true
}

// MaxNameBytes is the longest name one path element may have: HDFS's
// dfs.namenode.fs-limits.max-component-length default and Linux's NAME_MAX.
const MaxNameBytes = 255

// maxOffsetDigits is the widest an int64 offset prints.
const maxOffsetDigits = 19

// CheckNames fails when a committed file name of partition p could exceed
// MaxNameBytes: the topic's name plus the partition and two offsets of the
// widest possible value. Run before anything of the partition is published,
// so that a commit never stands whose rename can never succeed.
func (t Topic) CheckNames(p int32, pad int, ext string) error {
	width := max(pad, maxOffsetDigits)
	longest := len(t.Name) + 3 + len(strconv.Itoa(int(p))) + 2*width + len(ext)
	if longest > MaxNameBytes {
		return &NameError{Topic: t.Name, Partition: p, Length: longest}
	}
	return nil
}

// NameError says that a topic's committed file names would be too long.
type NameError struct {
	Topic     string
	Partition int32
	Length    int // of the longest possible committed file name
}

func (e *NameError) Error() string {
	suffix := e.Length - len(e.Topic)
	return fmt.Sprintf("topic %q partition %d: committed file names can reach %d bytes, more than the %d the store allows in one name; "+
		"topics of at most %d characters can be written with this format", e.Topic, e.Partition, e.Length, MaxNameBytes, MaxNameBytes-suffix)
}
