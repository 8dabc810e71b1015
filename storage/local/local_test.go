package local_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/local"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Conformance(t, func(t *testing.T) storage.FS {
		return local.New(t.TempDir())
	})
}

func TestNamesStayBelowRoot(t *testing.T) {
	root := t.TempDir()
	fsys := local.New(filepath.Join(root, "store"))
	f, err := fsys.Create(t.Context(), "/../../escape")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "store", "escape")); err != nil {
		t.Fatalf("file not created below root: %v", err)
	}
}

func TestErrorsArePathErrors(t *testing.T) {
	fsys := local.New(t.TempDir())
	_, err := fsys.Open(t.Context(), "/missing")
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open(missing) = %v, want *fs.PathError matching fs.ErrNotExist", err)
	}
}

func TestWriteAfterClose(t *testing.T) {
	fsys := local.New(t.TempDir())
	f, err := fsys.Create(t.Context(), "/f")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("Write after Close = %v, want fs.ErrClosed", err)
	}
}

func TestCreateUnderFileFails(t *testing.T) {
	fsys := local.New(t.TempDir())
	f, err := fsys.Create(t.Context(), "/file")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := fsys.Create(t.Context(), "/file/child"); err == nil {
		t.Fatal("Create below a file = nil, want an error")
	}
}
