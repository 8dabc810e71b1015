package writer

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

const fixtureTempDir = "/topics/+tmp/orders/3/00000000000000000001"

// counted puts a Counting store in front of the fixture's MemFS, with an
// Avro format emitting a block every blockRecords records (0: by size).
func counted(t *testing.T, blockRecords int) (*fixture, *storagetest.Counting) {
	f := newFixture(t)
	c := storagetest.NewCounting(f.mem)
	format, err := avro.New(avro.Options{BlockRecords: blockRecords})
	if err != nil {
		t.Fatal(err)
	}
	f.w.opts.FS, f.w.opts.Format = c, format
	return f, c
}

func (f *fixture) tempFiles(t *testing.T) int {
	t.Helper()
	infos, err := f.mem.ReadDir(context.Background(), fixtureTempDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return len(infos)
}

// TestTempFileCreatedAtFirstWrite: a temp file reaches the store when its
// encoder first writes, not with the record that opened it: with blocks by
// size, at Close; with a block a record, at the first Append.
func TestTempFileCreatedAtFirstWrite(t *testing.T) {
	for _, tc := range []struct {
		name               string
		blockRecords       int
		createdAfterAppend int
	}{
		{"blocks by size: created at close", 0, 0},
		{"a block a record: created by the first append", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c := counted(t, tc.blockRecords)
			for off := int64(0); off < 3; off++ {
				if err := f.append(t, "d=a", f.sch, off); err != nil {
					t.Fatal(err)
				}
			}
			if n := c.Calls()["create"]; n != tc.createdAfterAppend || f.tempFiles(t) != tc.createdAfterAppend {
				t.Fatalf("after 3 appends: %d creates, %d temp files; want %d", n, f.tempFiles(t), tc.createdAfterAppend)
			}
			closed, err := f.w.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(closed) != 1 || c.Calls()["create"] != 1 {
				t.Fatalf("closed %+v with %d creates; want one file, created once", closed, c.Calls()["create"])
			}
			if info, err := f.mem.Stat(context.Background(), closed[0].Temp); err != nil || info.Size() == 0 {
				t.Fatalf("closed temp file %s: %v, %v", closed[0].Temp, info, err)
			}
		})
	}
}

// TestLateCreateFailures: a create that fails when the file is first
// written fails Close, nothing can be committed, and Discard leaves no temp
// file, also when the create took effect and only its answer was lost.
// A file never created costs Discard no store call.
func TestLateCreateFailures(t *testing.T) {
	boom := errors.New("namenode in safe mode")
	for _, tc := range []struct {
		name        string
		inject      func(m *storagetest.MemFS)
		wantErr     error
		wantRemoves int
	}{
		{"create refused", func(m *storagetest.MemFS) {
			m.FailNext(storagetest.OpCreate, storagetest.PathContains("_tmp"), boom)
		}, boom, 1},
		{"create applied, answer lost", func(m *storagetest.MemFS) {
			m.FailNextAfter(storagetest.OpCreate, storagetest.PathContains("_tmp"), boom)
		}, boom, 1},
		{"never created", nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c := counted(t, 0)
			if err := f.append(t, "d=a", f.sch, 7); err != nil {
				t.Fatal(err)
			}
			if tc.inject != nil {
				tc.inject(f.mem)
				closed, err := f.w.Close()
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), "create temp file") || closed != nil {
					t.Fatalf("Close = %v, %v; want the create's error and nothing to commit", closed, err)
				}
			}
			if err := f.w.Discard(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := f.tempFiles(t); n != 0 || !f.w.Empty() {
				t.Fatalf("after Discard: %d temp files, writer empty %v", n, f.w.Empty())
			}
			if n := c.Calls()["remove"]; n != tc.wantRemoves {
				t.Fatalf("Discard removed %d times, want %d", n, tc.wantRemoves)
			}
		})
	}
}
