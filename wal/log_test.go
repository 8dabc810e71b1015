package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/local"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

const logDir = "/logs/orders/3"

var backends = map[string]func(t testing.TB) storage.FS{
	"mem":   func(testing.TB) storage.FS { return storagetest.NewMemFS() },
	"local": func(t testing.TB) storage.FS { return local.New(t.TempDir()) },
}

func claim(epoch string) entry.Entry {
	return entry.Entry{Kind: entry.KindClaim, Epoch: epoch, Owner: "host:1", Topic: "orders",
		Partition: 3, CommittedOffset: -1, UnixMillis: 1700000000000}
}

func commitEntry(epoch string, offset int64) entry.Entry {
	return entry.Entry{Kind: entry.KindCommit, Epoch: epoch, Owner: "host:1", Topic: "orders",
		Partition: 3, CommittedOffset: offset, UnixMillis: 1700000000001,
		Files: []entry.FileMove{{Temp: "/tmp/x", Final: "/topics/orders/x", StartOffset: 0, EndOffset: offset, Records: offset + 1}}}
}

func publish(t *testing.T, l *Log, seq uint64, e entry.Entry) {
	t.Helper()
	if err := l.Publish(t.Context(), seq, e); err != nil {
		t.Fatalf("Publish(%d): %v", seq, err)
	}
}

func segments(t *testing.T, l *Log) []uint64 {
	t.Helper()
	seqs, err := l.Segments(t.Context())
	if err != nil {
		t.Fatalf("Segments: %v", err)
	}
	return seqs
}

// stagingDirs lists leftover staging directories of l.
func stagingDirs(t *testing.T, fsys storage.FS, l *Log) []string {
	t.Helper()
	infos, err := fsys.ReadDir(t.Context(), l.Dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, info := range infos {
		if strings.HasPrefix(info.Name(), stagingPrefix) {
			names = append(names, info.Name())
		}
	}
	return names
}

func TestPublishRead(t *testing.T) {
	for name, newFS := range backends {
		t.Run(name, func(t *testing.T) {
			l := Open(newFS(t), logDir)
			if got := segments(t, l); len(got) != 0 {
				t.Fatalf("Segments of a missing dir = %v, want empty", got)
			}
			want := []entry.Entry{claim("a"), commitEntry("a", 9), commitEntry("a", 19)}
			for i, e := range want {
				publish(t, l, uint64(i), e)
			}
			if got := segments(t, l); !reflect.DeepEqual(got, []uint64{0, 1, 2}) {
				t.Fatalf("Segments = %v, want [0 1 2]", got)
			}
			for i, e := range want {
				got, err := l.Read(t.Context(), uint64(i))
				if err != nil || !reflect.DeepEqual(got, e) {
					t.Fatalf("Read(%d) = %+v, %v; want %+v", i, got, err, e)
				}
			}
			if _, err := l.Read(t.Context(), 7); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Read(unpublished) = %v, want fs.ErrNotExist", err)
			}
		})
	}
}

func TestPublishSeqTaken(t *testing.T) {
	for name, newFS := range backends {
		t.Run(name, func(t *testing.T) {
			fsys := newFS(t)
			l := Open(fsys, logDir)
			publish(t, l, 5, claim("new-owner"))
			err := l.Publish(t.Context(), 5, commitEntry("old-owner", 3))
			if !errors.Is(err, ErrSeqTaken) {
				t.Fatalf("Publish onto a taken seq = %v, want ErrSeqTaken", err)
			}
			if got, err := l.Read(t.Context(), 5); err != nil || got.Epoch != "new-owner" {
				t.Fatalf("Read(5) = %+v, %v; want the first publisher's entry", got, err)
			}
			if s := stagingDirs(t, fsys, l); len(s) != 0 {
				t.Fatalf("staging dirs left: %v", s)
			}
		})
	}
}

// TestPublishRace: K writers publish the same seq; exactly one wins, the
// others are fenced, and readers see the winner's complete segment.
func TestPublishRace(t *testing.T) {
	const k = 8
	for name, newFS := range backends {
		t.Run(name, func(t *testing.T) {
			fsys := newFS(t)
			l := Open(fsys, logDir)
			errs := make([]error, k)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range k {
				wg.Go(func() {
					<-start
					errs[i] = l.Publish(t.Context(), 1, claim(fmt.Sprint("epoch-", i)))
				})
			}
			close(start)
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("writers %d and %d both published", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, ErrSeqTaken):
					t.Fatalf("writer %d: %v, want nil or ErrSeqTaken", i, err)
				}
			}
			if winner < 0 {
				t.Fatal("no writer published")
			}
			got, err := l.Read(t.Context(), 1)
			if err != nil || got.Epoch != fmt.Sprint("epoch-", winner) {
				t.Fatalf("Read = %+v, %v; want the winner's entry", got, err)
			}
			if s := stagingDirs(t, fsys, l); len(s) != 0 {
				t.Fatalf("staging dirs left: %v", s)
			}
		})
	}
}

var errInjected = errors.New("injected")

// TestPublishFailures: a failure at any step leaves neither a staging
// directory nor a published segment, and the error says what failed.
func TestPublishFailures(t *testing.T) {
	tests := []storagetest.Op{storagetest.OpCreate, storagetest.OpWrite, storagetest.OpClose, storagetest.OpRename}
	for _, op := range tests {
		t.Run(op.String(), func(t *testing.T) {
			m := storagetest.NewMemFS()
			l := Open(m, logDir)
			m.FailNext(op, storagetest.PathContains(stagingPrefix), errInjected)
			err := l.Publish(t.Context(), 0, claim("a"))
			if !errors.Is(err, errInjected) || errors.Is(err, ErrSeqTaken) {
				t.Fatalf("Publish = %v, want the injected error", err)
			}
			if got := segments(t, l); len(got) != 0 {
				t.Fatalf("published after a failure: %v", got)
			}
			if s := stagingDirs(t, m, l); len(s) != 0 {
				t.Fatalf("staging dirs left: %v", s)
			}
			publish(t, l, 0, claim("a")) // the log is usable afterwards
		})
	}
}

// TestPublishFailureCleanupFails: when even the cleanup fails, both errors
// are reported and the leftover is removable by RemoveStaging.
func TestPublishFailureCleanupFails(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	errCleanup := errors.New("cleanup failed")
	m.FailNext(storagetest.OpClose, storagetest.AnyPath, errInjected)
	m.FailNext(storagetest.OpRemove, storagetest.AnyPath, errCleanup)
	err := l.Publish(t.Context(), 0, claim("a"))
	if !errors.Is(err, errInjected) || !errors.Is(err, errCleanup) {
		t.Fatalf("Publish = %v, want both errors", err)
	}
	if s := stagingDirs(t, m, l); len(s) != 1 {
		t.Fatalf("staging dirs = %v, want the one cleanup could not remove", s)
	}
	if err := l.RemoveStaging(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := stagingDirs(t, m, l); len(s) != 0 {
		t.Fatalf("staging dirs after RemoveStaging: %v", s)
	}
}

// TestPublishLostRenameReply: the rename took effect but its reply was lost;
// Publish recognises its own bytes and succeeds.
func TestPublishLostRenameReply(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	m.FailNextAfter(storagetest.OpRename, storagetest.AnyPath, errInjected)
	if err := l.Publish(t.Context(), 4, claim("a")); err != nil {
		t.Fatalf("Publish = %v, want nil: the segment is ours", err)
	}
	if got, err := l.Read(t.Context(), 4); err != nil || got.Epoch != "a" {
		t.Fatalf("Read = %+v, %v", got, err)
	}
}

// TestPublishRenameFailsStatFails: when the outcome cannot be checked the
// rename error is returned, not a false ErrSeqTaken.
func TestPublishRenameFailsStatFails(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	m.FailNext(storagetest.OpRename, storagetest.AnyPath, errInjected)
	m.FailNext(storagetest.OpStat, storagetest.AnyPath, errors.New("stat failed"))
	err := l.Publish(t.Context(), 0, claim("a"))
	if !errors.Is(err, errInjected) || errors.Is(err, ErrSeqTaken) {
		t.Fatalf("Publish = %v, want the rename error", err)
	}
}

// TestPublishLosesItsStaging: a publisher whose staging segment cannot be
// written while another writer's segment seq stands (an owner that claimed
// seq removed the staging directories it listed, this one among them) has
// lost the number: ErrSeqTaken, with the write's error. Without a segment
// seq, or when it cannot be looked at, the write's error alone.
func TestPublishLosesItsStaging(t *testing.T) {
	for _, tc := range []struct {
		name      string
		published bool // another writer holds seq 5
		statFails bool
		wantTaken bool
	}{
		{"another writer holds the number", true, false, true},
		{"nobody holds it", false, false, false},
		{"the number cannot be looked at", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := storagetest.NewMemFS()
			l := Open(m, logDir)
			if tc.published {
				publish(t, Open(m, logDir), 5, claim("owner"))
			}
			m.FailNext(storagetest.OpClose, storagetest.PathContains(stagingPrefix), errInjected)
			if tc.statFails {
				m.FailNext(storagetest.OpStat, storagetest.AnyPath, errors.New("stat failed"))
			}
			err := l.Publish(t.Context(), 5, claim("compaction"))
			if !errors.Is(err, errInjected) || errors.Is(err, ErrSeqTaken) != tc.wantTaken {
				t.Fatalf("Publish = %v; want the close error, taken %v", err, tc.wantTaken)
			}
			if s := stagingDirs(t, m, l); len(s) != 0 {
				t.Fatalf("staging dirs left: %v", s)
			}
		})
	}
}

func TestPublishRejectsInvalidEntry(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	if err := l.Publish(t.Context(), 0, entry.Entry{}); !errors.Is(err, entry.ErrInvalid) {
		t.Fatalf("Publish(invalid) = %v, want entry.ErrInvalid", err)
	}
	if _, err := m.Stat(t.Context(), logDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an invalid entry touched the store: %v", err)
	}
}

// TestCrashDuringPublish: a writer dies after writing part of its segment;
// nothing is published, and the new owner cleans up and continues.
func TestCrashDuringPublish(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	publish(t, l, 0, claim("old"))
	f, err := m.Create(t.Context(), logDir+"/"+stagingPrefix+"dead/"+segmentFile)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := encodeEntrySegment(commitEntry("old", 5))
	if _, err := f.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if got := segments(t, l); !reflect.DeepEqual(got, []uint64{0}) {
		t.Fatalf("Segments after crash = %v, want [0]", got)
	}
	if err := l.RemoveStaging(t.Context()); err != nil {
		t.Fatal(err)
	}
	publish(t, l, 1, claim("new"))
	if s := stagingDirs(t, m, l); len(s) != 0 {
		t.Fatalf("staging dirs left: %v", s)
	}
}

func TestReadCorrupt(t *testing.T) {
	valid, _ := encodeEntrySegment(claim("a"))
	badEntry := EncodeSegment([]byte{entry.Version, 9})
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"torn", valid[:len(valid)-1], ErrTornTail},
		{"checksum", append(bytes.Clone(valid[:len(valid)-1]), valid[len(valid)-1]^0xff), ErrChecksum},
		{"two entries", EncodeSegment([]byte("a"), []byte("b")), ErrBadFrame},
		{"no entry", EncodeSegment(), ErrBadFrame},
		{"entry does not decode", badEntry, ErrBadEntry},
		{"empty", nil, ErrBadHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := storagetest.NewMemFS()
			l := Open(m, logDir)
			writeRaw(t, m, l.SegmentPath(2), tc.data)
			_, err := l.Read(t.Context(), 2)
			var ce *CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, tc.want) || ce.Path != l.SegmentPath(2) {
				t.Fatalf("Read = %v, want *CorruptionError for %s matching %v", err, l.SegmentPath(2), tc.want)
			}
		})
	}
}

func TestReadEntryErrorIsInspectable(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	writeRaw(t, m, l.SegmentPath(0), EncodeSegment([]byte{entry.Version + 1}))
	_, err := l.Read(t.Context(), 0)
	var de *entry.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, entry.ErrVersion) {
		t.Fatalf("Read = %v, want a wrapped *entry.DecodeError matching ErrVersion", err)
	}
}

func TestReadDirWithoutFile(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	if err := m.MkdirAll(t.Context(), l.segmentDir(3)); err != nil {
		t.Fatal(err)
	}
	_, err := l.Read(t.Context(), 3)
	var ce *CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, ErrTornTail) {
		t.Fatalf("Read = %v, want a torn-tail *CorruptionError", err)
	}
}

func writeRaw(t *testing.T, fsys storage.FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSegmentsIgnoresForeignNames(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	publish(t, l, 12, claim("a"))
	for _, dir := range []string{"123", "abcdefghijklmnopqrst", "-0000000000000000001", stagingPrefix + "x", "99999999999999999999"} {
		if err := m.MkdirAll(t.Context(), logDir+"/"+dir); err != nil {
			t.Fatal(err)
		}
	}
	writeRaw(t, m, logDir+"/00000000000000000001", nil) // a file, not a segment dir
	if got := segments(t, l); !reflect.DeepEqual(got, []uint64{12}) {
		t.Fatalf("Segments = %v, want [12]", got)
	}
}

func TestSegmentsListError(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	m.FailNext(storagetest.OpReadDir, storagetest.AnyPath, errInjected)
	if _, err := l.Segments(t.Context()); !errors.Is(err, errInjected) {
		t.Fatalf("Segments = %v, want the ReadDir error", err)
	}
}

func TestPrune(t *testing.T) {
	for name, newFS := range backends {
		t.Run(name, func(t *testing.T) {
			l := Open(newFS(t), logDir)
			if err := l.Prune(t.Context(), 10); err != nil {
				t.Fatalf("Prune of a missing log = %v", err)
			}
			for seq := range uint64(5) {
				publish(t, l, seq, claim("a"))
			}
			if err := l.Prune(t.Context(), 0); err != nil {
				t.Fatal(err)
			}
			if got := segments(t, l); len(got) != 5 {
				t.Fatalf("Prune(0) removed segments: %v", got)
			}
			if err := l.Prune(t.Context(), 3); err != nil {
				t.Fatal(err)
			}
			if got := segments(t, l); !reflect.DeepEqual(got, []uint64{3, 4}) {
				t.Fatalf("Segments after Prune(3) = %v, want [3 4]", got)
			}
			if err := l.Prune(t.Context(), 100); err != nil {
				t.Fatal(err)
			}
			if got := segments(t, l); !reflect.DeepEqual(got, []uint64{4}) {
				t.Fatalf("Segments after Prune(100) = %v, want the newest [4] kept", got)
			}
		})
	}
}

// TestPruneStopsAtFailure: a failed removal leaves a contiguous suffix.
func TestPruneStopsAtFailure(t *testing.T) {
	m := storagetest.NewMemFS()
	l := Open(m, logDir)
	for seq := range uint64(4) {
		publish(t, l, seq, claim("a"))
	}
	m.FailNext(storagetest.OpRemove, storagetest.PathContains("00000000000000000001"), errInjected)
	if err := l.Prune(t.Context(), 3); !errors.Is(err, errInjected) {
		t.Fatalf("Prune = %v, want the injected error", err)
	}
	if got := segments(t, l); !reflect.DeepEqual(got, []uint64{1, 2, 3}) {
		t.Fatalf("Segments = %v, want [1 2 3]", got)
	}
}

func TestRemoveStaging(t *testing.T) {
	for name, newFS := range backends {
		t.Run(name, func(t *testing.T) {
			fsys := newFS(t)
			l := Open(fsys, logDir)
			if err := l.RemoveStaging(t.Context()); err != nil {
				t.Fatalf("RemoveStaging of a missing log = %v", err)
			}
			publish(t, l, 0, claim("a"))
			writeRaw(t, fsys, logDir+"/"+stagingPrefix+"1/"+segmentFile, []byte("partial"))
			if err := fsys.MkdirAll(t.Context(), logDir+"/"+stagingPrefix+"2"); err != nil {
				t.Fatal(err)
			}
			if err := l.RemoveStaging(t.Context()); err != nil {
				t.Fatal(err)
			}
			if s := stagingDirs(t, fsys, l); len(s) != 0 {
				t.Fatalf("staging dirs left: %v", s)
			}
			if got := segments(t, l); !reflect.DeepEqual(got, []uint64{0}) {
				t.Fatalf("Segments = %v, want [0]", got)
			}
		})
	}
}

func TestSegmentPathLayout(t *testing.T) {
	l := Open(storagetest.NewMemFS(), "/logs/t/0/")
	if got, want := l.SegmentPath(42), "/logs/t/0/00000000000000000042/segment"; got != want {
		t.Fatalf("SegmentPath = %q, want %q", got, want)
	}
}

// FuzzDecode: the segment decoder never panics, fails only with a
// *CorruptionError, and accepts only bytes it would write itself.
func FuzzDecode(f *testing.F) {
	valid, _ := encodeEntrySegment(commitEntry("e", 5))
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add(EncodeSegment())
	f.Add(EncodeSegment([]byte("x"), []byte("y")))
	f.Add([]byte("HSWAL\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decodeEntrySegment("seg", data)
		if err != nil {
			var ce *CorruptionError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CorruptionError", err)
			}
			return
		}
		again, err := encodeEntrySegment(e)
		if err != nil {
			t.Fatalf("decoded entry does not re-encode: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", data, again)
		}
	})
}

func BenchmarkPublishLocal(b *testing.B) {
	l := Open(local.New(b.TempDir()), logDir)
	e := commitEntry("bench", 100)
	var seq uint64
	for b.Loop() {
		if err := l.Publish(b.Context(), seq, e); err != nil {
			b.Fatal(err)
		}
		seq++
	}
}

func BenchmarkPublishMem(b *testing.B) {
	l := Open(storagetest.NewMemFS(), logDir)
	e := commitEntry("bench", 100)
	var seq uint64
	for b.Loop() {
		if err := l.Publish(b.Context(), seq, e); err != nil {
			b.Fatal(err)
		}
		seq++
	}
}

func BenchmarkReadLocal(b *testing.B) {
	l := Open(local.New(b.TempDir()), logDir)
	if err := l.Publish(b.Context(), 0, commitEntry("bench", 100)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := l.Read(b.Context(), 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestListedCleanupLeavesLaterEntries: pruning and staging removal from an
// earlier listing delete what it listed and leave what appeared since (a
// fenced writer's late staging directory or segment) to the next pass.
func TestListedCleanupLeavesLaterEntries(t *testing.T) {
	for name, newFS := range backends {
		t.Run(name, func(t *testing.T) {
			fsys := newFS(t)
			l := Open(fsys, logDir)
			for seq := uint64(2); seq < 5; seq++ {
				publish(t, l, seq, claim("a"))
			}
			writeRaw(t, fsys, logDir+"/"+stagingPrefix+"old/"+segmentFile, []byte("partial"))
			ls, err := l.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ls.Segments, []uint64{2, 3, 4}) || !reflect.DeepEqual(ls.Staging, []string{stagingPrefix + "old"}) {
				t.Fatalf("List = %+v, want segments [2 3 4] and one staging directory", ls)
			}
			publish(t, l, 1, claim("late")) // at a number pruning had freed
			writeRaw(t, fsys, logDir+"/"+stagingPrefix+"late/"+segmentFile, []byte("partial"))
			if err := l.PruneListed(t.Context(), ls, 100); err != nil {
				t.Fatal(err)
			}
			if err := l.RemoveStagingListed(t.Context(), ls); err != nil {
				t.Fatal(err)
			}
			if got := segments(t, l); !reflect.DeepEqual(got, []uint64{1, 4}) {
				t.Fatalf("Segments = %v, want [1 4]: the listed ones pruned but the newest, the late one left", got)
			}
			if s := stagingDirs(t, fsys, l); len(s) != 1 {
				t.Fatalf("staging dirs = %v, want only the late one", s)
			}
		})
	}
}
