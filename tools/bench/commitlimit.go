package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sync"
	"sync/atomic"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// The commit limit (-commit-limit) is the machine's limit for the
// many-partition targets of issue 25, measured as bench measures the
// others: the same services, no Kafka, no sink. With many partitions the
// sink is bound by committed files per second, not by bytes, and a
// committed file costs NameNode round trips whoever writes it. Two
// variants, each a file per partition directory as the assignment case's
// first commits are:
//
//   - "file": write a temp file, close it, rename it into its partition's
//     directory (created by the first rename there). The least any writer
//     that publishes by rename pays per committed file (Confluent's
//     connector and Flink's FileSink do the same, and more).
//   - "file+wal": the same and a 256-byte log segment per commit, built in
//     a staging directory and renamed into place: the floor of hdfs-sink's
//     protocol (wal.Log.Publish's calls, without the sink).
//
// Writers files are committed at once, the way the sink's Parallelism
// commits partitions at once.
const (
	commitVariantFile    = "file"
	commitVariantFileWAL = "file+wal"
)

// commitLimitRow is one variant at one concurrency.
type commitLimitRow struct {
	Variant      string           `json:"variant"`
	Writers      int              `json:"writers"`
	Connections  int              `json:"hdfs_connections"`
	Files        int64            `json:"files"`
	Seconds      float64          `json:"seconds"`
	CPUSeconds   float64          `json:"cpu_seconds"`
	FilesPerSec  float64          `json:"files_per_second"`
	Calls        map[string]int64 `json:"store_calls"`
	CallsPerFile float64          `json:"store_calls_per_file"`
}

// runCommitLimitCase is the child side: spec.Partitions files of
// spec.FileBytes, spec.Writers at a time, variant spec.Format.
func runCommitLimitCase(ctx context.Context, spec caseSpec) (caseResult, error) {
	store, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: itest.DefaultHDFSUser, Connections: spec.HDFSConns})
	if err != nil {
		return caseResult{}, err
	}
	defer store.Close()
	counted := storagetest.NewCounting(store)
	data := bytes.Repeat([]byte("x"), int(spec.FileBytes))
	segment := bytes.Repeat([]byte("w"), 256)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, max(1, spec.Writers))
	res := caseResult{Files: int64(spec.Partitions)}
	m := startMeter()
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < res.Files && errs[w] == nil; i = next.Add(1) - 1 {
				errs[w] = commitOne(ctx, counted, spec, int(i), data, segment)
			}
		}()
	}
	wg.Wait()
	m.stop(&res)
	res.Calls = callsOf(counted)
	res.Bytes = res.Files * spec.FileBytes
	return res, errors.Join(errs...)
}

// commitOne commits file i into partition directory p<i>.
func commitOne(ctx context.Context, fsys storage.FS, spec caseSpec, i int, data, segment []byte) error {
	tmp := path.Join(spec.Dir, "tmp", fmt.Sprintf("f%06d", i))
	final := path.Join(spec.Dir, "final", fmt.Sprintf("p%06d", i), fmt.Sprintf("f%06d", i))
	if err := writeRaw(ctx, fsys, tmp, data, int64(len(data))); err != nil {
		return err
	}
	if spec.Format == commitVariantFileWAL {
		staging := path.Join(spec.Dir, "wal", fmt.Sprintf("p%06d", i), ".staging-"+fmt.Sprint(i))
		if err := writeRaw(ctx, fsys, path.Join(staging, "segment"), segment, int64(len(segment))); err != nil {
			return err
		}
		if err := fsys.Rename(ctx, staging, path.Join(path.Dir(staging), fmt.Sprintf("%020d", 1))); err != nil {
			return fmt.Errorf("commit limit: publish %s: %w", staging, err)
		}
	}
	if err := fsys.Rename(ctx, tmp, final); err != nil {
		return fmt.Errorf("commit limit: rename %s: %w", tmp, err)
	}
	return nil
}

// runCommitLimit is the parent side: every variant at every concurrency,
// interleaved round by round so that both variants see the same machine.
func (e *env) runCommitLimit(o options) ([]commitLimitRow, error) {
	var rows []commitLimitRow
	var errs []error
	for round := range max(1, o.repeat) {
		for _, writers := range o.commitWriters {
			for _, variant := range []string{commitVariantFile, commitVariantFileWAL} {
				spec := caseSpec{Kind: "commitlimit", Format: variant, Partitions: o.commitFiles, FileBytes: o.commitFileBytes,
					Writers: writers, HDFSConns: o.commitConns,
					Dir: e.dir(fmt.Sprintf("commitlimit/r%d-w%d-%s", round, writers, variant))}
				fmt.Fprintf(os.Stderr, "bench: commit limit round %d: %s, %d at a time\n", round+1, variant, writers)
				res, err := child(o.binary, spec)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				rows = append(rows, commitLimitRowOf(spec, res))
			}
		}
	}
	return rows, errors.Join(errs...)
}

func commitLimitRowOf(spec caseSpec, res caseResult) commitLimitRow {
	row := commitLimitRow{Variant: spec.Format, Writers: spec.Writers, Connections: spec.HDFSConns, Files: res.Files,
		Seconds: res.Seconds, CPUSeconds: res.CPUSeconds, Calls: res.Calls}
	if res.Seconds > 0 {
		row.FilesPerSec = float64(res.Files) / res.Seconds
	}
	if res.Files > 0 {
		row.CallsPerFile = float64(sumCalls(res.Calls)) / float64(res.Files)
	}
	return row
}

func printCommitLimit(w io.Writer, rows []commitLimitRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\ncommit limit (files committed per second by the bare HDFS client, no Kafka, no sink; store calls per file: creates and renames, a create with its block and close being 3 NameNode calls):")
	fmt.Fprintln(w, "| variant | at once | NameNode connections | files | seconds | files/s | store calls/file | CPU-s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		conns := fmt.Sprint(r.Connections)
		if r.Connections == 0 {
			conns = "default"
		}
		fmt.Fprintf(w, "| %s | %d | %s | %d | %.2f | %.0f | %.1f | %.2f |\n",
			r.Variant, r.Writers, conns, r.Files, r.Seconds, r.FilesPerSec, r.CallsPerFile, r.CPUSeconds)
	}
}
