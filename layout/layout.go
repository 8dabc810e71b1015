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
	"math"
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

// IsHidden reports whether a file name (one path element) is one Hadoop's
// readers skip as not data (FileInputFormat's hidden-file filter: a name
// starting with "_" or "."), such as a completeness marker's _SUCCESS.
func IsHidden(name string) bool { return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") }

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

// FinalNameBytes is len(FinalName(topic, p, start, end, pad, ext)) for a
// topic of topicBytes bytes, counted without building the name: an offset
// is printed at pad digits, or at all its digits when it has more.
func FinalNameBytes(topicBytes int, p int32, start, end int64, pad int, ext string) int {
	return topicBytes + len("+++") + decimalWidth(int64(p)) + max(pad, decimalWidth(start)) + max(pad, decimalWidth(end)) + len(ext)
}

// decimalWidth is how many bytes %d prints n in, its sign included.
func decimalWidth(n int64) int {
	w := 1
	if n < 0 {
		w++ // the sign
	}
	for n <= -10 || n >= 10 {
		n /= 10
		w++
	}
	return w
}

// MaxTopicBytes is the longest topic name whose committed files of
// partition p fit MaxNameBytes while offsets fit pad digits; negative when
// no topic name fits.
func MaxTopicBytes(p int32, pad int, ext string) int {
	return MaxNameBytes - FinalNameBytes(0, p, 0, 0, pad, ext)
}

// CheckNames fails when the committed file names of partition p are longer
// than MaxNameBytes with offsets printed at pad digits
// (filename.offset.zero.pad.width), as the reference connector names them.
// Run before anything of the partition is published (at assignment), and
// by check for listed topics, so that no commit is published whose rename
// can never succeed. Offsets that outgrow pad later lengthen the names:
// CheckCommitName guards each commit against that.
func (t Topic) CheckNames(p int32, pad int, ext string) error {
	if n := FinalNameBytes(len(t.Name), p, 0, 0, pad, ext); n > MaxNameBytes {
		return &NameError{Topic: t.Name, Partition: p, Pad: pad, Start: -1, End: -1, Length: n, MaxTopic: MaxTopicBytes(p, pad, ext)}
	}
	return nil
}

// CheckCommitName fails when the committed file name of partition p holding
// offsets start..end is longer than MaxNameBytes: the last guard before a
// commit is published, for offsets wider than pad. Length arithmetic only:
// it runs on every commit.
func (t Topic) CheckCommitName(p int32, start, end int64, pad int, ext string) error {
	if n := FinalNameBytes(len(t.Name), p, start, end, pad, ext); n > MaxNameBytes {
		return &NameError{Topic: t.Name, Partition: p, Pad: pad, Start: start, End: end, Length: n,
			MaxTopic: MaxNameBytes - FinalNameBytes(0, p, start, end, pad, ext)}
	}
	return nil
}

// HighestPartition is the highest partition number whose committed file
// names fit MaxNameBytes with offsets of pad digits; -1 when not even
// partition 0's do. check, which knows no partition count offline, says
// which partitions of a topic would be refused.
func (t Topic) HighestPartition(pad int, ext string) int64 {
	room := MaxTopicBytes(0, pad, ext) - len(t.Name) + 1 // digits the partition may take
	switch {
	case room < 1:
		return -1
	case room >= decimalWidth(math.MaxInt32):
		return math.MaxInt32
	}
	h := int64(1)
	for range room {
		h *= 10
	}
	return h - 1
}

// NameError says that committed file names of a topic's partition would be
// longer than the store allows in one name.
type NameError struct {
	Topic     string
	Partition int32
	Pad       int   // filename.offset.zero.pad.width
	Start     int64 // the refused commit's offsets; -1: checked before writing, offsets of Pad digits
	End       int64
	Length    int // bytes of the committed file name
	MaxTopic  int // the longest topic name that fits in its place
}

func (e *NameError) Error() string {
	if e.Start < 0 {
		return fmt.Sprintf("topic %q partition %d: committed file names would be %d bytes with offsets of %d digits (filename.offset.zero.pad.width), "+
			"more than the %d the store allows in one name; topics of at most %d characters can be written as partition %d with this format",
			e.Topic, e.Partition, e.Length, e.Pad, MaxNameBytes, max(e.MaxTopic, 0), e.Partition)
	}
	return fmt.Sprintf("topic %q partition %d offsets %d to %d: the committed file name would be %d bytes, more than the %d the store allows in one name "+
		"(offsets wider than filename.offset.zero.pad.width=%d print all their digits; topics of at most %d characters fit); "+
		"nothing was committed and the partition writes nothing more until an operator acts (docs/operations.md, \"Names too long\")",
		e.Topic, e.Partition, e.Start, e.End, e.Length, MaxNameBytes, e.Pad, max(e.MaxTopic, 0))
}
