// Package storagetest owns the checks and fakes for storage.FS backends: a
// conformance suite that pins down every semantic documented in package
// storage, and MemFS, an in-memory backend with fault injection and crash
// simulation for testing code that writes through storage.FS.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Conformance runs the storage.FS contract against the backend newFS makes.
// Each subtest calls newFS once and expects an empty file system (names are
// absolute, e.g. "/a/b"); newFS should register its own cleanup.
func Conformance(t *testing.T, newFS func(t *testing.T) storage.FS) {
	tests := []struct {
		name string
		run  func(t *testing.T, fsys storage.FS)
	}{
		{"CreateIsExclusive", testCreateExclusive},
		{"CreateMakesParents", testCreateParents},
		{"WriteCloseOpen", testWriteCloseOpen},
		{"CloseTwice", testCloseTwice},
		{"MissingIsErrNotExist", testMissing},
		{"RenameOverwritesFile", testRenameOverwritesFile},
		{"RenameMakesParents", testRenameParents},
		{"RenameDirOntoNonEmptyDirFails", testRenameDirNonEmpty},
		{"RenameDirOntoMissingName", testRenameDirMissing},
		{"RacingPublishersOneWins", testRacingPublishers},
		{"ReadDirSorted", testReadDirSorted},
		{"RemoveFileAndEmptyDir", testRemove},
		{"RemoveNonEmptyDirFails", testRemoveNonEmpty},
		{"RemoveAll", testRemoveAll},
		{"MkdirAllIdempotent", testMkdirAll},
		{"DoneContextFailsWithoutEffect", testDoneContext},
		{"FileHonoursCreateContext", testFileContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newFS(t))
		})
	}
}

// writeFile creates name with data and closes it, failing the test on error.
func writeFile(t *testing.T, fsys storage.FS, name, data string) {
	t.Helper()
	f, err := fsys.Create(t.Context(), name)
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	if _, err := io.WriteString(f, data); err != nil {
		t.Fatalf("Write(%q): %v", name, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close(%q): %v", name, err)
	}
}

// readFile returns name's contents, failing the test on error.
func readFile(t *testing.T, fsys storage.FS, name string) string {
	t.Helper()
	r, err := fsys.Open(t.Context(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %q: %v", name, err)
	}
	return string(b)
}

// mustHold fails the test unless name holds exactly want.
func mustHold(t *testing.T, fsys storage.FS, name, want, what string) {
	t.Helper()
	if got := readFile(t, fsys, name); got != want {
		t.Fatalf("%s: %s holds %q, want %q", what, name, got, want)
	}
}

func mustNotExist(t *testing.T, fsys storage.FS, name string) {
	t.Helper()
	if _, err := fsys.Stat(t.Context(), name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat(%q) = %v, want fs.ErrNotExist", name, err)
	}
}

func testCreateExclusive(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/a/f", "first")
	f, err := fsys.Create(t.Context(), "/a/f")
	if !errors.Is(err, fs.ErrExist) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("second Create = %v, want fs.ErrExist", err)
	}
	mustHold(t, fsys, "/a/f", "first", "contents after refused Create")
}

func testCreateParents(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/x/y/z/f", "")
	for _, dir := range []string{"/x", "/x/y", "/x/y/z"} {
		info, err := fsys.Stat(t.Context(), dir)
		if err != nil || !info.IsDir() {
			t.Fatalf("Stat(%q) = %v, %v; want a directory", dir, info, err)
		}
	}
}

func testWriteCloseOpen(t *testing.T, fsys storage.FS) {
	want := bytes.Repeat([]byte("0123456789"), 10000)
	f, err := fsys.Create(t.Context(), "/d/big")
	if err != nil {
		t.Fatal(err)
	}
	for chunk := range slices.Chunk(want, 4096) {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	mustHold(t, fsys, "/d/big", string(want), "read back")
	info, err := fsys.Stat(t.Context(), "/d/big")
	if err != nil || info.IsDir() || info.Size() != int64(len(want)) || info.Name() != "big" {
		t.Fatalf("Stat = %+v, %v; want file big of %d bytes", info, err, len(want))
	}
}

func testCloseTwice(t *testing.T, fsys storage.FS) {
	f, err := fsys.Create(t.Context(), "/c")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close after success = %v, want nil", err)
	}
}

func testMissing(t *testing.T, fsys storage.FS) {
	checks := map[string]func() error{
		"Open":    func() error { _, err := fsys.Open(t.Context(), "/nope"); return err },
		"Stat":    func() error { _, err := fsys.Stat(t.Context(), "/nope/deeper"); return err },
		"ReadDir": func() error { _, err := fsys.ReadDir(t.Context(), "/nope"); return err },
		"Remove":  func() error { return fsys.Remove(t.Context(), "/nope") },
		"Rename":  func() error { return fsys.Rename(t.Context(), "/nope", "/other") },
	}
	for name, call := range checks {
		if err := call(); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of a missing name = %v, want fs.ErrNotExist", name, err)
		}
	}
}

func testRenameParents(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/m/src", "moved")
	if err := fsys.Rename(t.Context(), "/m/src", "/m/x/y/dst"); err != nil {
		t.Fatalf("Rename into a missing directory = %v, want nil (parents made)", err)
	}
	mustHold(t, fsys, "/m/x/y/dst", "moved", "renamed file")
	if err := fsys.Rename(t.Context(), "/m/gone", "/m/z/dst"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Rename of a missing file into a missing directory = %v, want fs.ErrNotExist", err)
	}
}

func testRenameOverwritesFile(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/r/src", "new")
	writeFile(t, fsys, "/r/dst", "old")
	if err := fsys.Rename(t.Context(), "/r/src", "/r/dst"); err != nil {
		t.Fatalf("Rename onto a file = %v, want nil (overwrite)", err)
	}
	mustHold(t, fsys, "/r/dst", "new", "destination")
	mustNotExist(t, fsys, "/r/src")
}

func testRenameDirNonEmpty(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/p/staging/seg", "mine")
	writeFile(t, fsys, "/p/final/seg", "theirs")
	if err := fsys.Rename(t.Context(), "/p/staging", "/p/final"); err == nil {
		t.Fatal("Rename of a directory onto a non-empty directory = nil, want an error")
	}
	mustHold(t, fsys, "/p/final/seg", "theirs", "a failed rename changed the destination")
	mustHold(t, fsys, "/p/staging/seg", "mine", "a failed rename changed the source")
}

func testRenameDirMissing(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/m/staging/sub/f", "data")
	if err := fsys.Rename(t.Context(), "/m/staging", "/m/final"); err != nil {
		t.Fatalf("Rename of a directory onto a missing name = %v", err)
	}
	mustHold(t, fsys, "/m/final/sub/f", "data", "moved file")
	mustNotExist(t, fsys, "/m/staging")
	mustNotExist(t, fsys, "/m/staging/sub/f")
}

// testRacingPublishers is the property the WAL's fencing rests on: of K
// publishers renaming private directories onto one name, exactly one wins
// and the published directory is entirely the winner's.
func testRacingPublishers(t *testing.T, fsys storage.FS) {
	const k = 8
	for i := range k {
		writeFile(t, fsys, fmt.Sprintf("/race/.staging-%d/seg", i), fmt.Sprint(i))
	}
	errs := make([]error, k)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range k {
		wg.Go(func() {
			<-start
			errs[i] = fsys.Rename(t.Context(), fmt.Sprintf("/race/.staging-%d", i), "/race/final")
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("publishers %d and %d both won", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("no publisher won: %v", errs)
	}
	mustHold(t, fsys, "/race/final/seg", fmt.Sprint(winner), "published contents")
	infos, err := fsys.ReadDir(t.Context(), "/race/final")
	if err != nil || len(infos) != 1 {
		t.Fatalf("published dir holds %d entries (%v), want 1", len(infos), err)
	}
}

func testReadDirSorted(t *testing.T, fsys storage.FS) {
	names := []string{"m", "b", "00000000000000000010", "a", "00000000000000000002", ".staging-x", "z"}
	for _, n := range names {
		if n == "m" {
			if err := fsys.MkdirAll(t.Context(), "/ls/m"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeFile(t, fsys, "/ls/"+n, n)
	}
	infos, err := fsys.ReadDir(t.Context(), "/ls")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, info := range infos {
		got = append(got, info.Name())
		if info.IsDir() != (info.Name() == "m") {
			t.Errorf("%s: IsDir = %v", info.Name(), info.IsDir())
		}
	}
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, want) {
		t.Fatalf("ReadDir names = %q, want %q", got, want)
	}
}

func testRemove(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/rm/dir/f", "x")
	if err := fsys.Remove(t.Context(), "/rm/dir/f"); err != nil {
		t.Fatalf("Remove(file) = %v", err)
	}
	mustNotExist(t, fsys, "/rm/dir/f")
	if err := fsys.Remove(t.Context(), "/rm/dir"); err != nil {
		t.Fatalf("Remove(empty dir) = %v", err)
	}
	mustNotExist(t, fsys, "/rm/dir")
}

func testRemoveNonEmpty(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/rn/dir/f", "x")
	if err := fsys.Remove(t.Context(), "/rn/dir"); err == nil {
		t.Fatal("Remove(non-empty dir) = nil, want an error")
	}
	mustHold(t, fsys, "/rn/dir/f", "x", "a failed remove changed the file")
}

func testRemoveAll(t *testing.T, fsys storage.FS) {
	if err := fsys.RemoveAll(t.Context(), "/never/existed"); err != nil {
		t.Fatalf("RemoveAll(missing) = %v, want nil", err)
	}
	writeFile(t, fsys, "/ra/t/a/f", "x")
	writeFile(t, fsys, "/ra/t/b", "y")
	writeFile(t, fsys, "/ra/keep", "z")
	if err := fsys.RemoveAll(t.Context(), "/ra/t"); err != nil {
		t.Fatalf("RemoveAll(tree) = %v", err)
	}
	mustNotExist(t, fsys, "/ra/t")
	mustNotExist(t, fsys, "/ra/t/a/f")
	mustHold(t, fsys, "/ra/keep", "z", "RemoveAll changed a sibling")
}

func testMkdirAll(t *testing.T, fsys storage.FS) {
	for range 2 {
		if err := fsys.MkdirAll(t.Context(), "/mk/a/b"); err != nil {
			t.Fatalf("MkdirAll = %v", err)
		}
	}
	infos, err := fsys.ReadDir(t.Context(), "/mk/a/b")
	if err != nil || len(infos) != 0 {
		t.Fatalf("ReadDir(new dir) = %v, %v; want empty", infos, err)
	}
}

// testDoneContext: a call whose context is done before it starts fails
// with an error matching ctx.Err() and takes no effect.
func testDoneContext(t *testing.T, fsys storage.FS) {
	writeFile(t, fsys, "/cx/f", "kept")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := map[string]func() error{
		"Create":    func() error { _, err := fsys.Create(ctx, "/cx/new"); return err },
		"Open":      func() error { _, err := fsys.Open(ctx, "/cx/f"); return err },
		"Rename":    func() error { return fsys.Rename(ctx, "/cx/f", "/cx/moved") },
		"Remove":    func() error { return fsys.Remove(ctx, "/cx/f") },
		"RemoveAll": func() error { return fsys.RemoveAll(ctx, "/cx") },
		"ReadDir":   func() error { _, err := fsys.ReadDir(ctx, "/cx"); return err },
		"Stat":      func() error { _, err := fsys.Stat(ctx, "/cx/f"); return err },
		"MkdirAll":  func() error { return fsys.MkdirAll(ctx, "/cx/dir") },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error matching context.Canceled", name, err)
		}
	}
	mustHold(t, fsys, "/cx/f", "kept", "calls with a cancelled context changed the file")
	for _, name := range []string{"/cx/new", "/cx/moved", "/cx/dir"} {
		mustNotExist(t, fsys, name)
	}
}

// testFileContext: a file's Write and Close honour the context of the
// Create that opened it; a file whose context ended is never durable.
func testFileContext(t *testing.T, fsys storage.FS) {
	ctx, cancel := context.WithCancel(t.Context())
	f, err := fsys.Create(ctx, "/fc/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, "before"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.WriteString(f, "after"); !errors.Is(err, context.Canceled) {
		t.Errorf("Write after its Create's context ended = %v, want an error matching context.Canceled", err)
	}
	if err := f.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close after its Create's context ended = %v, want an error matching context.Canceled", err)
	}
}
