package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/storage/local"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// TestCommitOneLeavesWhatACommitLeaves checks that each variant of the
// commit limit does the store work it claims to measure: the file under its
// partition's final name with every byte, no temp file left, and for
// file+wal a published segment and no staging directory.
func TestCommitOneLeavesWhatACommitLeaves(t *testing.T) {
	for _, tc := range []struct {
		variant     string
		wantSegment bool
		creates     int
		renames     int
	}{
		{commitVariantFile, false, 1, 1},
		{commitVariantFileWAL, true, 2, 2},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			ctx := context.Background()
			counted := storagetest.NewCounting(local.New(t.TempDir()))
			spec := caseSpec{Format: tc.variant, Dir: "run", FileBytes: 1000}
			data := make([]byte, spec.FileBytes)
			if err := commitOne(ctx, counted, spec, 7, data, []byte("segment")); err != nil {
				t.Fatal(err)
			}
			f, err := counted.Open(ctx, "run/final/p000007/f000007")
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(f)
			f.Close()
			if err != nil || len(got) != len(data) {
				t.Fatalf("committed file: %d bytes, %v; want %d", len(got), err, len(data))
			}
			if _, err := counted.Stat(ctx, "run/tmp/f000007"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("temp file after the commit: %v, want it gone", err)
			}
			infos, _ := counted.ReadDir(ctx, "run/wal/p000007")
			var names []string
			for _, info := range infos {
				names = append(names, info.Name())
			}
			if tc.wantSegment != (len(names) == 1 && names[0] == "00000000000000000001") {
				t.Errorf("wal directory holds %v; want a published segment: %v", names, tc.wantSegment)
			}
			calls := counted.Calls()
			if calls["create"] != tc.creates || calls["rename"] != tc.renames {
				t.Errorf("store calls %v; want %d creates and %d renames", calls, tc.creates, tc.renames)
			}
		})
	}
}
