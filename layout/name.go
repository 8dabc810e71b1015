package layout

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
)

// committedName matches the reference connector's committed file names:
// a topic of letters, digits, '.', '_' and '-', then partition, start and end
// offsets separated by '+', then an optional extension.
var committedName = regexp.MustCompile(`^([a-zA-Z0-9._-]+)\+(\d+)\+(\d+)\+(\d+)(\.[A-Za-z0-9.]+)?$`)

// FileRange names the records a committed file holds.
type FileRange struct {
	Topic     string
	Partition int32
	Start     int64 // first Kafka offset in the file
	End       int64 // last Kafka offset in the file (inclusive)
	Ext       string
}

// FinalName formats the committed file name exactly as the reference does:
// <topic>+<partition>+<start>+<end><ext>, offsets zero-padded to pad digits.
func FinalName(topic string, partition int32, start, end int64, pad int, ext string) string {
	return fmt.Sprintf("%s+%d+%0*d+%0*d%s", topic, partition, pad, start, pad, end, ext)
}

// ParseFinalName parses a committed file name (a base name, or a path whose
// last element is one). ok is false for any other name, such as temp files.
func ParseFinalName(name string) (r FileRange, ok bool) {
	m := committedName.FindStringSubmatch(path.Base(name))
	if m == nil {
		return FileRange{}, false
	}
	p, err1 := strconv.ParseInt(m[2], 10, 32)
	start, err2 := strconv.ParseInt(m[3], 10, 64)
	end, err3 := strconv.ParseInt(m[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || end < start {
		return FileRange{}, false
	}
	return FileRange{Topic: m[1], Partition: int32(p), Start: start, End: end, Ext: m[5]}, true
}

// Superseded returns the committed files among paths that a compaction
// merged: files of an encoded directory whose compacted generation (among
// paths too) holds a file of the same partition covering their offsets.
// They stay in the store for the grace period after readers were switched
// (docs/design.md §12); counting them with the generation would count
// their records twice.
func (t Topic) Superseded(paths []string) map[string]bool {
	gens := map[string][]FileRange{} // encoded directory -> its generation's files
	for _, p := range paths {
		if enc, ok := t.EncodedDir(p); ok && path.Dir(p) == t.CompactedDir(enc) {
			if r, ok := ParseFinalName(p); ok {
				gens[enc] = append(gens[enc], r)
			}
		}
	}
	out := map[string]bool{}
	for _, p := range paths {
		enc, ok := t.EncodedDir(p)
		r, named := ParseFinalName(p)
		if !ok || !named || path.Dir(p) == t.CompactedDir(enc) {
			continue
		}
		for _, g := range gens[enc] {
			if g.Partition == r.Partition && g.Start <= r.Start && r.End <= g.End {
				out[p] = true
				break
			}
		}
	}
	return out
}
