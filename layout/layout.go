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

// TopicTempDir is <topics.dir>/+tmp/<topic>: the temp roots of all its partitions.
func (t Topic) TopicTempDir() string { return path.Join(t.TopicsDir, TempDirName, t.Name) }

// WALDir is <logs.dir>/<topic>/<p>, the directory of p's WAL segments.
func (t Topic) WALDir(p int32) string { return path.Join(t.LogsDir, t.Name, fmt.Sprint(p)) }

// FinalPath is where a committed file of partition p holding offsets
// start..end goes: <topics.dir>/<topic>/<encoded>/<final name>.
func (t Topic) FinalPath(encoded string, p int32, start, end int64, pad int, ext string) string {
	return path.Join(t.Dir(), encoded, FinalName(t.Name, p, start, end, pad, ext))
}
