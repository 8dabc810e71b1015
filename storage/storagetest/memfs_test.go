package storagetest_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

func TestMemFSConformance(t *testing.T) {
	storagetest.Conformance(t, func(*testing.T) storage.FS { return storagetest.NewMemFS() })
}

var errInjected = errors.New("injected")

func create(t *testing.T, m *storagetest.MemFS, name, data string) storage.File {
	t.Helper()
	f, err := m.Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, data); err != nil {
		t.Fatal(err)
	}
	return f
}

func contents(t *testing.T, m *storagetest.MemFS, name string) string {
	t.Helper()
	r, err := m.Open(t.Context(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

// peek returns name's contents, or "" when it cannot be opened.
func peek(m *storagetest.MemFS, name string) string {
	r, err := m.Open(context.Background(), name)
	if err != nil {
		return ""
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

func exists(m *storagetest.MemFS, name string) bool {
	_, err := m.Stat(context.Background(), name)
	return err == nil
}

// TestFailNext checks, per op, that an injected fault is returned once,
// leaves no effect, and that the retried call succeeds.
func TestFailNext(t *testing.T) {
	tests := []struct {
		op       storagetest.Op
		call     func(m *storagetest.MemFS, f storage.File) error
		noEffect func(m *storagetest.MemFS) bool
	}{
		{storagetest.OpCreate,
			func(m *storagetest.MemFS, _ storage.File) error {
				_, err := m.Create(context.Background(), "/d/new")
				return err
			},
			func(m *storagetest.MemFS) bool { return !exists(m, "/d/new") }},
		{storagetest.OpWrite,
			func(_ *storagetest.MemFS, f storage.File) error { _, err := f.Write([]byte("+")); return err },
			func(m *storagetest.MemFS) bool { return peek(m, "/d/open") == "o" }},
		{storagetest.OpClose,
			func(_ *storagetest.MemFS, f storage.File) error { return f.Close() },
			func(*storagetest.MemFS) bool { return true }},
		{storagetest.OpRename,
			func(m *storagetest.MemFS, _ storage.File) error {
				return m.Rename(context.Background(), "/d/file", "/d/moved")
			},
			func(m *storagetest.MemFS) bool { return exists(m, "/d/file") && !exists(m, "/d/moved") }},
		{storagetest.OpRemove,
			func(m *storagetest.MemFS, _ storage.File) error { return m.Remove(context.Background(), "/d/file") },
			func(m *storagetest.MemFS) bool { return exists(m, "/d/file") }},
		{storagetest.OpReadDir,
			func(m *storagetest.MemFS, _ storage.File) error {
				_, err := m.ReadDir(context.Background(), "/d")
				return err
			},
			func(*storagetest.MemFS) bool { return true }},
		{storagetest.OpStat,
			func(m *storagetest.MemFS, _ storage.File) error {
				_, err := m.Stat(context.Background(), "/d/file")
				return err
			},
			func(*storagetest.MemFS) bool { return true }},
		{storagetest.OpOpen,
			func(m *storagetest.MemFS, _ storage.File) error {
				_, err := m.Open(context.Background(), "/d/file")
				return err
			},
			func(*storagetest.MemFS) bool { return true }},
	}
	for _, tc := range tests {
		t.Run(tc.op.String(), func(t *testing.T) {
			m := storagetest.NewMemFS()
			if err := create(t, m, "/d/file", "f").Close(); err != nil {
				t.Fatal(err)
			}
			open := create(t, m, "/d/open", "o")
			m.FailNext(tc.op, storagetest.PathContains("/elsewhere"), errors.New("must not fire"))
			m.FailNext(tc.op, storagetest.AnyPath, errInjected)
			if err := tc.call(m, open); !errors.Is(err, errInjected) {
				t.Fatalf("first call = %v, want the injected error", err)
			}
			if !tc.noEffect(m) {
				t.Fatal("the failed call took effect")
			}
			if err := tc.call(m, open); err != nil {
				t.Fatalf("retry = %v, want nil (faults are one-shot)", err)
			}
		})
	}
}

// TestFailNextAfter checks that a lost reply still applies the operation.
func TestFailNextAfter(t *testing.T) {
	m := storagetest.NewMemFS()
	if err := create(t, m, "/s/seg", "x").Close(); err != nil {
		t.Fatal(err)
	}
	m.FailNextAfter(storagetest.OpRename, storagetest.PathContains("/final"), errInjected)
	if err := m.Rename(t.Context(), "/s", "/final"); !errors.Is(err, errInjected) {
		t.Fatalf("Rename = %v, want the injected error", err)
	}
	if got := contents(t, m, "/final/seg"); got != "x" {
		t.Fatalf("renamed file = %q, want the rename applied", got)
	}
}

func TestCrashKeepsWrittenBytesAndKillsHandles(t *testing.T) {
	m := storagetest.NewMemFS()
	done := create(t, m, "/c/done", "complete")
	if err := done.Close(); err != nil {
		t.Fatal(err)
	}
	open := create(t, m, "/c/open", "partial")
	m.Crash()
	if got := contents(t, m, "/c/open"); got != "partial" {
		t.Fatalf("unclosed file after crash = %q, want the bytes written so far", got)
	}
	if _, err := open.Write([]byte("more")); !errors.Is(err, storagetest.ErrCrashed) {
		t.Fatalf("Write on a crashed handle = %v, want ErrCrashed", err)
	}
	if err := open.Close(); !errors.Is(err, storagetest.ErrCrashed) {
		t.Fatalf("Close on a crashed handle = %v, want ErrCrashed", err)
	}
	if err := done.Close(); err != nil {
		t.Fatalf("Close after a successful Close = %v, want nil even after a crash", err)
	}
	if got := contents(t, m, "/c/done"); got != "complete" {
		t.Fatalf("closed file after crash = %q", got)
	}
}

func TestWritesFollowRenamedDirectory(t *testing.T) {
	m := storagetest.NewMemFS()
	f := create(t, m, "/st/seg", "ab")
	if err := m.Rename(t.Context(), "/st", "/pub"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, m, "/pub/seg"); got != "abc" {
		t.Fatalf("got %q, want %q", got, "abc")
	}
}

func TestCloseOfRemovedFileFails(t *testing.T) {
	m := storagetest.NewMemFS()
	f := create(t, m, "/st/seg", "ab")
	if err := m.RemoveAll(t.Context(), "/st"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Close of a removed file = %v, want fs.ErrNotExist", err)
	}
}

func TestRenameErrors(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     error
	}{
		{"dir onto non-empty dir", "/dir", "/full", fs.ErrExist},
		{"missing source", "/nope", "/x", fs.ErrNotExist},
		{"dir into itself", "/dir", "/dir/sub", nil},
		{"dir onto file", "/dir", "/file", nil},
		{"file onto dir", "/file", "/empty", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := storagetest.NewMemFS()
			for _, name := range []string{"/dir/a", "/full/b", "/file"} {
				if err := create(t, m, name, "x").Close(); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.MkdirAll(t.Context(), "/empty"); err != nil {
				t.Fatal(err)
			}
			err := m.Rename(t.Context(), tc.old, tc.new)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Rename = %v, want an error matching %v", err, tc.want)
			}
		})
	}
}

// TestHangNext: a hung call waits for its context, fails with it and
// takes no effect, while other calls go on; a file's hang waits for its
// Create's context.
func TestHangNext(t *testing.T) {
	tests := []struct {
		op       storagetest.Op
		call     func(ctx context.Context, m *storagetest.MemFS) error
		noEffect func(m *storagetest.MemFS) bool
	}{
		{storagetest.OpCreate,
			func(ctx context.Context, m *storagetest.MemFS) error { _, err := m.Create(ctx, "/h/new"); return err },
			func(m *storagetest.MemFS) bool { return !exists(m, "/h/new") }},
		{storagetest.OpRename,
			func(ctx context.Context, m *storagetest.MemFS) error { return m.Rename(ctx, "/h/file", "/h/moved") },
			func(m *storagetest.MemFS) bool { return exists(m, "/h/file") && !exists(m, "/h/moved") }},
		{storagetest.OpRemove,
			func(ctx context.Context, m *storagetest.MemFS) error { return m.RemoveAll(ctx, "/h") },
			func(m *storagetest.MemFS) bool { return exists(m, "/h/file") }},
		{storagetest.OpStat,
			func(ctx context.Context, m *storagetest.MemFS) error { _, err := m.Stat(ctx, "/h/file"); return err },
			func(*storagetest.MemFS) bool { return true }},
		{storagetest.OpWrite,
			func(ctx context.Context, m *storagetest.MemFS) error {
				f, err := m.Create(ctx, "/h/w")
				if err == nil {
					_, err = f.Write([]byte("lost"))
				}
				return err
			},
			func(m *storagetest.MemFS) bool { return peek(m, "/h/w") == "" }},
		{storagetest.OpClose,
			func(ctx context.Context, m *storagetest.MemFS) error {
				f, err := m.Create(ctx, "/h/c")
				if err == nil {
					err = f.Close()
				}
				return err
			},
			func(*storagetest.MemFS) bool { return true }},
	}
	for _, tc := range tests {
		t.Run(tc.op.String(), func(t *testing.T) {
			m := storagetest.NewMemFS()
			if err := create(t, m, "/h/file", "f").Close(); err != nil {
				t.Fatal(err)
			}
			reached := m.HangNext(tc.op, storagetest.AnyPath)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- tc.call(ctx, m) }()
			<-reached
			if !exists(m, "/h/file") {
				t.Fatal("other calls fail or wait while a call hangs")
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("hung call = %v, want an error matching context.Canceled", err)
			}
			if !tc.noEffect(m) {
				t.Fatal("the hung call took effect")
			}
		})
	}
}

// TestDoneContextKeepsFaults: a call refused for its context does not
// consume the fault the next call is to meet.
func TestDoneContextKeepsFaults(t *testing.T) {
	m := storagetest.NewMemFS()
	m.FailNext(storagetest.OpStat, storagetest.AnyPath, errInjected)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Stat(ctx, "/"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stat with a cancelled context = %v", err)
	}
	if _, err := m.Stat(t.Context(), "/"); !errors.Is(err, errInjected) {
		t.Fatalf("next Stat = %v, want the injected fault", err)
	}
}
