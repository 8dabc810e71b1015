package compact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// gatedFS lets the merge create its output only once the second input
// has been opened: a merge that reads ahead gets there, one that reads
// each input only when it needs it waits for ever (the test's bound).
type gatedFS struct {
	storage.FS
	second string
	opened chan struct{}
	bound  time.Duration
}

func (g *gatedFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if name == g.second {
		close(g.opened)
	}
	return g.FS.Open(ctx, name)
}

func (g *gatedFS) Create(ctx context.Context, name string) (storage.File, error) {
	if strings.HasPrefix(name, "/stage/") {
		select {
		case <-g.opened:
		case <-time.After(g.bound):
			return nil, errors.New("the output was created before the second input was read: no read-ahead")
		}
	}
	return g.FS.Create(ctx, name)
}

// parquetRun writes n one-record-per-offset Parquet inputs of partition 0.
func parquetRun(t *testing.T, fsys storage.FS, n int64) Run {
	t.Helper()
	f, s := testFormat(t, ".parquet"), testSchema(t, 1)
	var run Run
	for i := range n {
		name := commitFile(t, fsys, f, mergeLayout, "d=1", s, 0, i*3, i*3+2)
		r, _ := layout.ParseFinalName(name)
		run.Inputs = append(run.Inputs, Input{Path: name, Range: r})
	}
	return run
}

// TestParquetMergeReadsAhead: the next input is read while one is merged
// (the store's round trips overlap the merge's CPU); the merged file is
// still every record once, in order.
func TestParquetMergeReadsAhead(t *testing.T) {
	mem := storagetest.NewMemFS()
	run := parquetRun(t, mem, 4)
	gated := &gatedFS{FS: mem, second: run.Inputs[1].Path, opened: make(chan struct{}), bound: 10 * time.Second}
	outs, err := newTestCompactor(gated, ".parquet").mergeRun(bg, run, "/stage/m")
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := readSeqs(mem, outs[0].temp)
	if err != nil || len(seqs) != 12 || seqs[0] != 0 || seqs[11] != 11 {
		t.Fatalf("merged %v, %v; want offsets 0..11", seqs, err)
	}
}

// TestParquetReadAheadStops: whichever step fails — reading an input, an
// input that is not Parquet while the next is being read, or the output
// while inputs are read and decoded ahead — the merge fails naming it and
// no reading or decoding goroutine outlives it.
func TestParquetReadAheadStops(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(mem *storagetest.MemFS, run Run)
		want  string
	}{
		{"the third input cannot be opened", func(mem *storagetest.MemFS, run Run) {
			mem.FailNext(storagetest.OpOpen, storagetest.PathContains(run.Inputs[2].Path), errors.New("datanode gone"))
		}, "datanode gone"},
		{"the second input is not Parquet", func(mem *storagetest.MemFS, run Run) {
			if err := mem.Remove(bg, run.Inputs[1].Path); err != nil {
				t.Fatal(err)
			}
			touch(t, mem, run.Inputs[1].Path)
		}, "not a Parquet file"},
		{"the output cannot be created", func(mem *storagetest.MemFS, run Run) {
			mem.FailNext(storagetest.OpCreate, storagetest.PathContains("/stage/"), errors.New("namenode in safe mode"))
		}, "namenode in safe mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			mem := storagetest.NewMemFS()
			run := parquetRun(t, mem, 5)
			tc.spoil(mem, run)
			_, err := newTestCompactor(mem, ".parquet").mergeRun(bg, run, "/stage/m")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("merge: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestParquetMergeEndsWithItsContext: a merge whose context ends stops,
// with the context's error, and so does its reading.
func TestParquetMergeEndsWithItsContext(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	mem := storagetest.NewMemFS()
	run := parquetRun(t, mem, 5)
	ctx, cancel := context.WithCancel(bg)
	hung := mem.HangNext(storagetest.OpOpen, storagetest.PathContains(run.Inputs[3].Path))
	go func() { <-hung; cancel() }() // the store stops answering, then the caller gives up
	_, err := newTestCompactor(mem, ".parquet").mergeRun(ctx, run, "/stage/m")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("merge: %v, want context.Canceled", err)
	}
}

// TestParquetMergeDecodesAhead: the next input is decoded while a batch
// of the previous one is being encoded (the two halves of the merge's CPU
// overlap on two cores): with the first input's last batch taken and not
// yet released, decodeAhead takes the second input from the read-ahead by
// itself. Then every part comes, in order, and the goroutine ends.
func TestParquetMergeDecodesAhead(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	mem := storagetest.NewMemFS()
	run := parquetRun(t, mem, 2)
	var data [2][]byte
	for i, in := range run.Inputs {
		var err error
		if data[i], err = newTestCompactor(mem, ".parquet").readAll(bg, in); err != nil {
			t.Fatal(err)
		}
	}
	read := make(chan readInput)
	ctx, cancel := context.WithCancel(bg)
	parts, wait := decodeAhead(ctx, run.Inputs, read)
	defer func() { cancel(); wait() }()
	read <- readInput{data: data[0]}
	if p := <-parts; p.shape == nil {
		t.Fatalf("first part %+v, want the first input's shape", p)
	}
	encoding := <-parts
	if encoding.rec == nil || encoding.rec.NumRows() != 3 {
		t.Fatalf("second part %+v, want the first input's 3 rows", encoding)
	}
	select {
	case read <- readInput{data: data[1]}:
	case <-time.After(10 * time.Second):
		t.Fatal("the second input was not taken while the first one's rows were encoded: no decode-ahead")
	}
	encoding.rec.Release()
	var got []string
	for p := range parts {
		switch {
		case p.err != nil:
			t.Fatal(p.err)
		case p.shape != nil:
			got = append(got, "shape")
		case p.complete:
			got = append(got, "complete")
		default:
			got = append(got, fmt.Sprintf("%d rows", p.rec.NumRows()))
			p.rec.Release()
		}
	}
	if want := "[shape 3 rows complete]"; fmt.Sprint(got) != want {
		t.Fatalf("then %v, want %s", got, want)
	}
}

// TestReadAllWhateverTheListedSize: an input is read whole whether its
// listed size (the buffer's hint) is right, unknown, short or long.
func TestReadAllWhateverTheListedSize(t *testing.T) {
	mem := storagetest.NewMemFS()
	name := parquetRun(t, mem, 1).Inputs[0].Path
	fi, err := mem.Stat(bg, name)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := mem.Open(bg, name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		bytes int64
	}{{"right", fi.Size()}, {"unknown", 0}, {"short", fi.Size() / 3}, {"long", 2 * fi.Size()}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := newTestCompactor(mem, ".parquet").readAll(bg, Input{Path: name, Bytes: tc.bytes})
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes, %v; want the file's %d", len(got), err, len(want))
			}
		})
	}
}

// detachedFS creates files whose writes do not follow the caller's
// context, so a merge whose context ended could still finish its output.
type detachedFS struct{ storage.FS }

func (d detachedFS) Create(ctx context.Context, name string) (storage.File, error) {
	return d.FS.Create(context.WithoutCancel(ctx), name)
}

// TestParquetMergeCutShortIsNotAShortOutput: when the context ends while
// inputs are still to come, the merge fails even if its output could be
// finished: the decoding stopping (it may stop without passing an error
// on) is never taken for the end of the run. Repeated, since which of the
// reading and decoding goroutines notices the end first varies.
func TestParquetMergeCutShortIsNotAShortOutput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for range 20 {
		mem := storagetest.NewMemFS()
		run := parquetRun(t, mem, 5)
		ctx, cancel := context.WithCancel(bg)
		hung := mem.HangNext(storagetest.OpOpen, storagetest.PathContains(run.Inputs[3].Path))
		go func() { <-hung; cancel() }()
		outs, err := newTestCompactor(detachedFS{mem}, ".parquet").mergeRun(ctx, run, "/stage/m")
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("merge: %v (outputs %+v), want context.Canceled", err, outs)
		}
	}
}
