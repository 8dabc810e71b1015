//go:build integration

package hdfs_test

import (
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestConformanceOnRealHDFS checks, on a real NameNode and DataNode, every
// file-system semantic the commit protocol relies on — above all that a
// directory renamed onto a non-empty directory is refused, so exactly one of
// several racing publishers wins.
func TestConformanceOnRealHDFS(t *testing.T) {
	cl := itest.HDFSClient(t)
	storagetest.Conformance(t, func(t *testing.T) storage.FS {
		dir := itest.HDFSDir(t, cl)
		fs, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI() + dir, User: "root"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fs.Close() })
		return fs
	})
}
