//go:build integration

package exactlyonce

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/layout"
)

// TestDaemonCompactsWhileWriting: the daemon's own compaction policy
// (hdfs.sink.compaction.*), no `hdfs-sink compact`. Two partitions are
// written in small files while producers keep sending; the daemon
// compacts each partition's directory itself (both in one pass, so the
// writers meet the compaction's fence and pause once), switches its Hive partition
// to the generation, and goes on writing there once its writers got past
// the compaction's fence, which they recognise (recovering at once, not
// after a rebalance's 30 s). A reader asking the metastore in a loop never
// sees an offset twice, a gap, or fewer records than before; at the end
// every offset is in HDFS exactly once and the Hive partitions are at the
// generations, holding every record.
func TestDaemonCompactsWhileWriting(t *testing.T) {
	t.Parallel()
	itest.RequireMetastore(t)
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "cp_")
	counts := map[int32]int64{}
	s.produce(counts, 200) // ten files of each partition, committed before the policy's second pass (8 s)
	cfg := s.connector("policy", hiveOn(db, map[string]string{"flush.size": "10",
		"hdfs.sink.compaction.enabled": "true", "hdfs.sink.compaction.min.age.ms": "0", "hdfs.sink.compaction.min.files": "10",
		"hdfs.sink.compaction.interval.ms": "8000", "hdfs.sink.compaction.grace.ms": "0",
		"hdfs.sink.compaction.pace.ms": "0"})) // back to back: one fence pause, as the test means
	d := s.start(cfg)
	began := time.Now() // after the first start, which builds the binary
	table := hive.TableName("${topic}", s.topic)
	gen := func(p int32) string {
		return path.Join(s.topicsDir(), s.topic, layout.CompactedDirName, fmt.Sprintf("partition=%d", p))
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var produceErr, readErr error
	switched := map[int32]bool{}
	wg.Add(2)
	go func() { // producers keep writing
		defer wg.Done()
		for ctx.Err() == nil {
			mu.Lock()
			got, err := demodata.ProduceFrom(context.Background(), []string{itest.KafkaAddr()}, s.schemaID, s.topic, s.parts, 10, counts)
			if err != nil {
				produceErr = err
			}
			for p, c := range got {
				counts[p] = c
			}
			mu.Unlock()
			time.Sleep(time.Second)
		}
	}()
	go func() { // readers query the metastore's partitions in a loop
		defer wg.Done()
		last := map[int32]int64{}
		for ctx.Err() == nil {
			for p := range s.parts {
				v, err := s.look(context.Background(), db, table, p)
				if errors.Is(err, hive.ErrNotFound) {
					continue // not registered yet
				}
				if err == nil && v.next < last[p] {
					err = fmt.Errorf("reader of partition=%d sees offsets up to %d, fewer than the %d it saw before", p, v.next-1, last[p]-1)
				}
				mu.Lock()
				if err != nil {
					readErr = err
				}
				switched[p] = switched[p] || v.location == gen(p)
				mu.Unlock()
				if err != nil {
					return
				}
				last[p] = v.next
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	both := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return (switched[0] && switched[1]) || readErr != nil
	}
	deadline := time.Now().Add(time.Minute)
	for !both() && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	mu.Lock()
	atSwitch := total(counts)
	mu.Unlock()
	t.Logf("both partitions switched %.1f s after the start, %d records produced", time.Since(began).Seconds(), atSwitch)
	// A writer meets the fence at its first commit after the compaction's
	// claim, so the producers go on until one has: the switch can come
	// after a partition's last commit and before the next second's records.
	for deadline := time.Now().Add(30 * time.Second); !d.logContains("by a compaction's fence") && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	// Writing goes on into the generations once the writers are past the fence.
	s.waitCommitted(atSwitch, time.Minute)
	t.Logf("those records committed %.1f s after the start", time.Since(began).Seconds())
	stop()
	wg.Wait()
	if produceErr != nil || readErr != nil {
		t.Fatalf("producers: %v; readers: %v", produceErr, readErr)
	}
	if !switched[0] || !switched[1] {
		t.Fatalf("the daemon switched partitions %v to their generations within a minute, want both", switched)
	}
	s.waitCommitted(total(counts), time.Minute)
	st := compactionStatus(t, d.status())
	for deadline := time.Now().Add(30 * time.Second); st["compacted"] != float64(2) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond) // counted after the switch's last steps
		st = compactionStatus(t, d.status())
	}
	if !d.logContains("by a compaction's fence") {
		t.Fatal("the daemon's writers did not recognise the compaction's fence (they then wait 30 s, as for a rebalance)")
	}
	d.stop()
	s.check(counts)
	for p := range s.parts {
		v, err := s.look(context.Background(), db, table, p)
		if err != nil || v.next != counts[p] || v.location != gen(p) {
			t.Fatalf("reader of partition=%d at the end: %+v, %v; want offsets up to %d in the generation", p, v, err, counts[p]-1)
		}
	}
	if st["compacted"] != float64(2) || st["files_before"].(float64) < 20 || st["last_error"] != nil {
		t.Fatalf("/status compaction = %v, want 2 directories compacted from at least 20 files", st)
	}
	t.Logf("/status compaction: %v; %d records, exactly once", st, total(counts))
}

// TestHive4Compaction: the daemon's compaction policy against Hive
// Metastore 4 (the switch is one alter_partition there too). Each
// partition's ten small files are merged, the Hive partition's location
// moves to the generation, and a reader asking HMS 4 where each partition
// is finds there every offset once (the names tile them, as for the
// HMS 3 tests' reader); every record is read back from HDFS exactly once.
// Not Spark: its Hive 2.3 client cannot ask HMS 4 for a table
// (TestHive4TablesAndFiles), and reading the files costs a minute.
func TestHive4Compaction(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	db := itest.UniqueName(t, "c4_")
	counts := map[int32]int64{}
	s.produce(counts, 200) // ten files of ten records per partition
	d := s.start(s.connector("hive4compact", map[string]string{
		"hive.integration": "true", "hive.metastore.uris": itest.Metastore4URI(), "hive.database": db,
		"schema.compatibility": "BACKWARD", "flush.size": "10",
		"hdfs.sink.compaction.enabled": "true", "hdfs.sink.compaction.min.age.ms": "0", "hdfs.sink.compaction.min.files": "5",
		"hdfs.sink.compaction.interval.ms": "1000", "hdfs.sink.compaction.grace.ms": "0", "hdfs.sink.compaction.pace.ms": "0",
	}))
	table := hive.TableName("${topic}", s.topic)
	gen := func(p int32) string {
		return path.Join(s.topicsDir(), s.topic, layout.CompactedDirName, fmt.Sprintf("partition=%d", p))
	}
	for p := range s.parts {
		s.waitPartitionLocationAt(itest.Metastore4URI(), db, table, fmt.Sprintf("partition=%d", p), gen(p), 45*time.Second)
	}
	s.waitCommitted(200, time.Minute)
	// The location switch comes before the compaction's last steps (the
	// delta, the marker); /status counts a directory after them.
	st := compactionStatus(t, d.status())
	for deadline := time.Now().Add(30 * time.Second); st["compacted"] != float64(2) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		st = compactionStatus(t, d.status())
	}
	d.stop()
	s.check(counts)
	if st["compacted"] != float64(2) || st["last_error"] != nil {
		t.Fatalf("/status compaction = %v, want both directories compacted", st)
	}
	for p := range s.parts {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		v, err := s.lookAt(ctx, itest.Metastore4URI(), db, table, p)
		cancel()
		if err != nil || v.location != gen(p) || v.next != counts[p] || v.files >= 10 {
			t.Fatalf("reader of partition=%d through HMS 4: %+v, %v; want offsets up to %d in fewer than 10 files at %s", p, v, err, counts[p]-1, gen(p))
		}
	}
	t.Logf("HMS 4: %s.%s partitions switched to their generations, every offset once; /status %v", db, table, st)
}

// compactionStatus is the compaction of the one topic of the one
// connector in a /status document.
func compactionStatus(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	conns, _ := doc["connectors"].([]any)
	if len(conns) != 1 {
		t.Fatalf("/status connectors: %v", doc["connectors"])
	}
	byTopic, _ := conns[0].(map[string]any)["compaction"].(map[string]any)
	for _, st := range byTopic {
		return st.(map[string]any)
	}
	t.Fatalf("/status has no compaction: %v", conns[0])
	return nil
}
