// Package verify owns the exactly-once checks: Check, used by the demo and
// the integration and crash tests, reads every committed file of a topic
// back and proves each offset that was produced is present exactly once;
// Audit, behind `hdfs-sink verify`, compares committed file names with
// Kafka's log offsets and the WAL head without knowing what was produced.
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Options says what to expect.
type Options struct {
	TopicsDir string // absolute in the store, ${topic} expanded
	Topic     string
	// Want is, per partition, the offsets that must be present: [0, Want[p]).
	Want map[int32]int64
	// SeqField, when set, names a long field that the producer set to the
	// record's offset; every record is checked against its file position.
	SeqField string
	// Skip is, per partition, a range [from, to) of offsets that must be
	// absent (skipped by an offsets reset); SeqField only.
	Skip map[int32][2]int64
}

// File is one committed file.
type File struct {
	Path    string
	Range   layout.FileRange
	Records int64
	Seqs    []int64 // the SeqField of each record, when asked for
}

// Report is what was found.
type Report struct {
	Files     []File
	Records   int64
	TempFiles []string // files still in the topic's temp directories
}

// Check reads every committed file and returns an error describing the first
// duplicate, gap, miscount or unexpected record it finds.
func Check(ctx context.Context, fsys storage.FS, o Options) (Report, error) {
	var rep Report
	topic := layout.Topic{TopicsDir: o.TopicsDir, Name: o.Topic}
	root := topic.Dir()
	var paths []string
	if err := storage.WalkFiles(ctx, fsys, root, layout.IsTempDir, func(p string) error {
		if !layout.IsHidden(path.Base(p)) { // compaction and completeness markers: readers skip them too
			paths = append(paths, p)
		}
		return nil
	}); err != nil {
		return rep, err
	}
	superseded := topic.Superseded(paths)
	for _, p := range paths {
		if superseded[p] {
			continue // merged by a compaction: its generation holds the records
		}
		r, ok := layout.ParseFinalName(p)
		if !ok || r.Topic != o.Topic {
			return rep, fmt.Errorf("unexpected file in %s: %s", root, p)
		}
		read := readAvro
		switch {
		case strings.HasSuffix(p, ".parquet"):
			read = readParquet
		case strings.HasSuffix(p, ".json"):
			read = readJSONLines
		}
		f, err := read(ctx, fsys, p, r, o.SeqField)
		if err != nil {
			return rep, err
		}
		rep.Files = append(rep.Files, f)
		rep.Records += f.Records
	}
	listTemp(ctx, fsys, topic.TopicTempDir(), &rep.TempFiles)
	if o.SeqField != "" {
		return rep, exactlyOnce(rep.Files, o.Want, o.Skip)
	}
	return rep, tile(rep.Files, o.Want)
}

// exactlyOnce checks every record's own offset: each of [0, want) once per
// partition, and each file's name spanning exactly its first and last
// record. It holds for partitioners that interleave offsets across
// directories, where files are not dense ranges.
func exactlyOnce(files []File, want map[int32]int64, skip map[int32][2]int64) error {
	seen := map[int32]map[int64]string{}
	var errs []error
	for _, f := range files {
		p := f.Range.Partition
		if _, ok := want[p]; !ok {
			return fmt.Errorf("partition %d: files for a partition nothing was produced to", p)
		}
		if seen[p] == nil {
			seen[p] = map[int64]string{}
		}
		if len(f.Seqs) == 0 || f.Seqs[0] != f.Range.Start || f.Seqs[len(f.Seqs)-1] != f.Range.End {
			errs = append(errs, fmt.Errorf("%s: name says offsets %d-%d, records span %v", f.Path, f.Range.Start, f.Range.End, span(f.Seqs)))
		}
		for _, off := range f.Seqs {
			if other, dup := seen[p][off]; dup {
				errs = append(errs, fmt.Errorf("partition %d offset %d written twice: %s and %s", p, off, other, f.Path))
			}
			seen[p][off] = f.Path
		}
	}
	for p, n := range want {
		sk := skip[p]
		for off := int64(0); off < n; off++ {
			_, ok := seen[p][off]
			skipped := off >= sk[0] && off < sk[1]
			if !ok && !skipped {
				errs = append(errs, fmt.Errorf("partition %d offset %d missing", p, off))
				break
			}
			if ok && skipped {
				errs = append(errs, fmt.Errorf("partition %d offset %d committed, though it was skipped", p, off))
				break
			}
		}
		if got, want := int64(len(seen[p])), n-(sk[1]-sk[0]); got != want {
			errs = append(errs, fmt.Errorf("partition %d: %d distinct offsets committed, want %d", p, got, want))
		}
	}
	return errors.Join(errs...)
}

func span(seqs []int64) string {
	if len(seqs) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%d-%d", seqs[0], seqs[len(seqs)-1])
}

// tile checks that each partition's files cover [0, want) without overlap or gap.
func tile(files []File, want map[int32]int64) error {
	byPart := map[int32][]File{}
	for _, f := range files {
		byPart[f.Range.Partition] = append(byPart[f.Range.Partition], f)
	}
	for p := range byPart {
		if _, ok := want[p]; !ok {
			return fmt.Errorf("partition %d: files for a partition nothing was produced to", p)
		}
	}
	var errs []error
	for p, n := range want {
		fs := byPart[p]
		sort.Slice(fs, func(i, j int) bool { return fs[i].Range.Start < fs[j].Range.Start })
		next := int64(0)
		for _, f := range fs {
			switch {
			case f.Range.Start < next:
				errs = append(errs, fmt.Errorf("partition %d: offsets %d-%d of %s written twice (already had up to %d)", p, f.Range.Start, f.Range.End, f.Path, next-1))
			case f.Range.Start > next:
				errs = append(errs, fmt.Errorf("partition %d: offsets %d-%d missing (next file %s)", p, next, f.Range.Start-1, f.Path))
			}
			if got := f.Range.End - f.Range.Start + 1; got != f.Records {
				errs = append(errs, fmt.Errorf("%s: name says %d records, file holds %d", f.Path, got, f.Records))
			}
			next = max(next, f.Range.End+1)
		}
		if next != n {
			errs = append(errs, fmt.Errorf("partition %d: committed up to offset %d, want %d", p, next-1, n-1))
		}
	}
	return errors.Join(errs...)
}

func readAvro(ctx context.Context, fsys storage.FS, p string, r layout.FileRange, seqField string) (File, error) {
	f := File{Path: p, Range: r}
	rc, err := fsys.Open(ctx, p)
	if err != nil {
		return f, err
	}
	defer rc.Close()
	ocf, err := goavro.NewOCFReader(rc)
	if err != nil {
		return f, fmt.Errorf("%s: not an Avro container file: %w", p, err)
	}
	for ocf.Scan() {
		v, err := ocf.Read()
		if err != nil {
			return f, fmt.Errorf("%s: record %d: %w", p, f.Records, err)
		}
		if seqField != "" {
			seq, err := seqOf(v, seqField)
			if err == nil {
				err = f.addSeq(seq)
			}
			if err != nil {
				return f, fmt.Errorf("%s: record %d: %w", p, f.Records, err)
			}
		}
		f.Records++
	}
	if err := ocf.Err(); err != nil && !errors.Is(err, io.EOF) {
		return f, fmt.Errorf("%s: %w", p, err)
	}
	return f, nil
}

// addSeq appends the next record's offset; offsets rise within a file.
func (f *File) addSeq(seq int64) error {
	if n := len(f.Seqs); n > 0 && seq <= f.Seqs[n-1] {
		return fmt.Errorf("offset %d after %d: out of order", seq, f.Seqs[n-1])
	}
	f.Seqs = append(f.Seqs, seq)
	return nil
}

func seqOf(v any, field string) (int64, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return 0, fmt.Errorf("record is %T, not a record", v)
	}
	seq, ok := m[field].(int64)
	if !ok {
		return 0, fmt.Errorf("field %q is %T, want long", field, m[field])
	}
	return seq, nil
}

// listTemp lists every file below dir, a temp directory (which WalkFiles
// is told to skip).
func listTemp(ctx context.Context, fsys storage.FS, dir string, out *[]string) {
	infos, err := fsys.ReadDir(ctx, dir)
	if err != nil {
		return
	}
	for _, fi := range infos {
		p := path.Join(dir, fi.Name())
		if fi.IsDir() {
			listTemp(ctx, fsys, p, out)
		} else {
			*out = append(*out, p)
		}
	}
}

// CountByNames sums the record ranges named by committed files without
// reading them: cheap enough to poll while a daemon works.
func CountByNames(ctx context.Context, fsys storage.FS, topicsDir, topic string) (int64, error) {
	var paths []string
	t := layout.Topic{TopicsDir: topicsDir, Name: topic}
	err := storage.WalkFiles(ctx, fsys, t.Dir(), layout.IsTempDir, func(p string) error {
		paths = append(paths, p)
		return nil
	})
	superseded := t.Superseded(paths)
	var n int64
	for _, p := range paths {
		if r, ok := layout.ParseFinalName(p); ok && r.Topic == topic && !superseded[p] {
			n += r.End - r.Start + 1
		}
	}
	return n, err
}
