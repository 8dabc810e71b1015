//go:build integration

package exactlyonce

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/layout"
)

// readerView is what a Hive reader of partition=<p> sees at one moment:
// the location the metastore names, and the committed names there.
type readerView struct {
	location string
	files    int
	next     int64 // the names tile [0, next) exactly
}

// look asks the metastore where partition=<p> is and checks that the
// committed names there tile offsets [0, next) with no gap and no overlap
// (the default partitioner writes each partition's offsets densely).
func (s *setup) look(ctx context.Context, db, table string, p int32) (readerView, error) {
	return s.lookAt(ctx, itest.MetastoreURI(), db, table, p)
}

// lookAt is look through the metastore at uri.
func (s *setup) lookAt(ctx context.Context, uri, db, table string, p int32) (readerView, error) {
	cl, err := hive.Dial(ctx, uri)
	if err != nil {
		return readerView{}, err
	}
	defer cl.Close()
	loc, err := cl.PartitionLocation(ctx, db, table, []string{fmt.Sprint(p)})
	if err != nil {
		return readerView{}, err
	}
	u, err := url.Parse(loc)
	if err != nil {
		return readerView{}, err
	}
	infos, err := s.fs.ReadDir(ctx, u.Path)
	if err != nil {
		return readerView{}, err
	}
	var ranges []layout.FileRange
	for _, fi := range infos {
		if r, ok := layout.ParseFinalName(fi.Name()); ok && !fi.IsDir() {
			ranges = append(ranges, r)
		}
	}
	sort.Slice(ranges, func(i, j int) bool { return ranges[i].Start < ranges[j].Start })
	v := readerView{location: u.Path, files: len(ranges)}
	for _, r := range ranges {
		if r.Start != v.next {
			return v, fmt.Errorf("reader of partition=%d at %s: file %d-%d after offsets up to %d: a record twice or missing", p, u.Path, r.Start, r.End, v.next-1)
		}
		v.next = r.End + 1
	}
	return v, nil
}

// TestCompactionWhileWriting: hundreds of small files of two partitions,
// compacted while producers and the daemon keep writing, with
// `hdfs-sink compact` SIGKILLed as each step begins (C2 to C8) and then
// run to its end. A reader asking the metastore in a loop never sees an
// offset twice, a gap, or fewer records than before; at the end every
// offset is in HDFS exactly once (read back), `verify` agrees, and Spark
// counts every record once through the Hive table.
func TestCompactionWhileWriting(t *testing.T) {
	t.Parallel()
	itest.RequireMetastore(t)
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "hs_")
	counts := map[int32]int64{}
	s.produce(counts, 2000)
	cfg := s.connector("compact", map[string]string{
		"hive.integration": "true", "hive.metastore.uris": itest.MetastoreURI(), "hive.database": db,
		"schema.compatibility": "BACKWARD", "flush.size": "10", "rotate.interval.ms": "1000",
	})
	d := s.start(cfg)
	s.waitCommitted(2000, 3*time.Minute)
	table := hive.TableName("${topic}", s.topic)
	hivePartitions(t, db, table, 2, 2*time.Minute)
	before := s.objects(t)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var produceErr error
	var readErr atomic.Pointer[error]
	looks := 0
	wg.Add(2)
	go func() { // producers keep writing
		defer wg.Done()
		for ctx.Err() == nil {
			mu.Lock()
			got, err := demodata.ProduceFrom(context.Background(), []string{itest.KafkaAddr()}, s.schemaID, s.topic, s.parts, 20, counts)
			if err != nil {
				produceErr = err
			}
			for p, c := range got {
				counts[p] = c
			}
			mu.Unlock()
			time.Sleep(time.Second) // a trickle: late files of a compacted directory stay small

		}
	}()
	go func() { // readers query the metastore's partitions in a loop
		defer wg.Done()
		last := map[int32]int64{}
		for ctx.Err() == nil {
			for p := range s.parts {
				v, err := s.look(context.Background(), db, table, p)
				if err == nil && v.next < last[p] {
					err = fmt.Errorf("reader of partition=%d sees offsets up to %d, fewer than the %d it saw before", p, v.next-1, last[p]-1)
				}
				if err != nil {
					readErr.Store(&err)
					return
				}
				last[p] = v.next
				looks++
			}
		}
	}()

	for _, step := range []string{"C2", "C3", "C4", "C5", "C6", "C7", "C8", ""} {
		code, out, errOut := s.compact(cfg, step)
		killed := code == -1
		if step != "" && !killed {
			t.Fatalf("compact with a crash at %s: exit %d, want SIGKILL\n%s%s", step, code, out, errOut)
		}
		if step == "" && code != 0 {
			t.Fatalf("compact to its end: exit %d\n%s%s", code, out, errOut)
		}
		t.Logf("compact, killed at %q: exit %d\n%s", step, code, out)
		if readErr.Load() != nil {
			break
		}
	}
	time.Sleep(5 * time.Second) // late commits land in the generation
	stop()
	wg.Wait()
	if produceErr != nil {
		t.Fatal(produceErr)
	}
	if err := readErr.Load(); err != nil {
		t.Fatalf("after %d looks: %v", looks, *err)
	}
	s.waitCommitted(total(counts), 3*time.Minute)
	d.stop()
	after := s.objects(t)
	rep := s.check(counts)
	for p := range s.parts {
		v, err := s.look(context.Background(), db, table, p)
		if err != nil || v.next != counts[p] || v.location != path.Join(s.topicsDir(), s.topic, layout.CompactedDirName, fmt.Sprintf("partition=%d", p)) {
			t.Fatalf("reader of partition=%d at the end: %+v, %v; want offsets up to %d in the generation", p, v, err, counts[p]-1)
		}
	}
	t.Logf("%d reader looks, never wrong; committed files %d -> %d, NameNode objects (files + directories under the topic) %d -> %d; %d records, read back exactly once (%d files)",
		looks, before.files, after.files, before.files+before.dirs, after.files+after.dirs, total(counts), len(rep.Files))
	res := itest.SparkSQL(t, fmt.Sprintf("SELECT count(*) AS n, count(DISTINCT partition, seq) AS d FROM %s.%s", db, table))
	if n := float64(total(counts)); len(res[0]) != 1 || res[0][0]["n"] != n || res[0][0]["d"] != n {
		t.Fatalf("Spark counts %v, want %v records, each once", res[0], n)
	}
}

// compact runs `hdfs-sink compact` on the connector, SIGKILLed as step
// begins ("" runs to the end); code -1 means killed.
func (s *setup) compact(cfg, step string) (int, string, string) {
	s.t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(binary(s.t), "compact", "--config", cfg, "--min-age", "0s", "--grace", "0s")
	cmd.Env = append(os.Environ(), "HDFS_SINK_COMPACT_CRASH_AT="+step)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	_ = cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

type objects struct{ files, dirs int }

// objects counts the files and directories below the topic's directory.
func (s *setup) objects(t *testing.T) objects {
	var o objects
	var walk func(dir string)
	walk = func(dir string) {
		infos, err := s.fs.ReadDir(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, fi := range infos {
			if fi.IsDir() {
				o.dirs++
				walk(path.Join(dir, fi.Name()))
			} else {
				o.files++
			}
		}
	}
	walk(path.Join(s.topicsDir(), s.topic))
	return o
}
