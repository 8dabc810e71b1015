package sink

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
	"github.com/hdfs-sink/hdfs-sink/wal"
)

// TestAssignmentDoesNotWaitForLeftovers: a recovery hands what its claim
// fenced to the janitor, so a removal that hangs delays neither the
// assignment nor the commits after it; a stop ends the hung removal; the
// next recovery removes the leftovers.
func TestAssignmentDoesNotWaitForLeftovers(t *testing.T) {
	const parts = 2
	k := newKafkaFixture(t, parts, testTopic)
	mem := k.fs.(*storagetest.MemFS)
	produce := func(from, to int64) { k.produceRange(parts, from, to) }
	produce(0, 100)
	cfg := k.config("leftovers")
	first := start(t, cfg)
	waitFor(t, "first commits", func() bool { return committedRecords(k.fs) == parts*100 })
	first.stop()
	if err, ok := first.wait(30 * time.Second); !ok || err != nil {
		t.Fatalf("first connector: stopped=%v err=%v", ok, err)
	}

	// What a crashed owner leaves: a temp directory of an old claim, and a
	// WAL staging directory.
	ctx := t.Context()
	oldClaim := "/topics/+tmp/" + testTopic + "/0/00000000000000000000"
	staging := "/logs/" + testTopic + "/0/.staging-left-by-a-crash"
	for _, dir := range []string{oldClaim, staging} {
		if err := mem.MkdirAll(ctx, dir); err != nil {
			t.Fatal(err)
		}
	}
	hung := mem.HangNext(storagetest.OpRemove, func(name string) bool { return name == oldClaim })

	second := start(t, cfg)
	produce(100, 200)
	<-hung
	waitFor(t, "commits while a leftover's removal hangs", func() bool { return committedRecords(k.fs) == parts*200 })
	second.stop()
	if err, ok := second.wait(10 * time.Second); !ok || err != nil {
		t.Fatalf("second connector with a hung removal: stopped=%v err=%v", ok, err)
	}
	if _, err := mem.Stat(ctx, oldClaim); err != nil {
		t.Fatalf("the hung removal took effect: %v", err)
	}

	third := start(t, cfg)
	waitFor(t, "leftovers removed by the next recovery", func() bool {
		_, e1 := mem.Stat(ctx, oldClaim)
		_, e2 := mem.Stat(ctx, staging)
		return errors.Is(e1, fs.ErrNotExist) && errors.Is(e2, fs.ErrNotExist)
	})
	third.janitor.idle()
	want := map[int32]int64{0: 200, 1: 200}
	if _, err := verify.Check(ctx, k.fs, verify.Options{TopicsDir: "/topics", Topic: testTopic, Want: want, SeqField: "seq"}); err != nil {
		t.Fatal(err)
	}
}

// TestJanitorStop: a stopped janitor drops its queue, ends the removal
// under way, and takes nothing more.
func TestJanitorStop(t *testing.T) {
	mem := storagetest.NewMemFS()
	ctx := context.Background()
	var dirs []string
	for _, d := range []string{"a", "b", "c"} {
		dir := "/tmp/" + d + "/00000000000000000000"
		if err := mem.MkdirAll(ctx, dir); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	hung := mem.HangNext(storagetest.OpRemove, func(name string) bool { return strings.HasPrefix(name, "/tmp/a/") })
	j := newJanitor(1)
	for _, d := range []string{"a", "b"} {
		j.add(&leftovers{fs: mem, log: wal.Open(mem, "/logs/"+d), logger: testLogger(), tempRoot: "/tmp/" + d, claim: 1})
	}
	<-hung
	j.stop()
	j.add(&leftovers{fs: mem, log: wal.Open(mem, "/logs/c"), logger: testLogger(), tempRoot: "/tmp/c", claim: 1})
	j.idle()
	for _, dir := range dirs {
		if _, err := mem.Stat(ctx, dir); err != nil {
			t.Errorf("%s removed after stop: %v", dir, err)
		}
	}
}

// TestJanitorHold: while an assignment holds the janitor no removal
// starts; its release starts them.
func TestJanitorHold(t *testing.T) {
	mem := storagetest.NewMemFS()
	ctx := context.Background()
	dir := "/tmp/a/00000000000000000000"
	if err := mem.MkdirAll(ctx, dir); err != nil {
		t.Fatal(err)
	}
	j := newJanitor(2)
	defer j.stop()
	j.hold()
	j.add(&leftovers{fs: mem, log: wal.Open(mem, "/logs/a"), logger: testLogger(), tempRoot: "/tmp/a", claim: 1})
	j.idle() // no worker started: returns at once
	if _, err := mem.Stat(ctx, dir); err != nil {
		t.Fatalf("removed while held: %v", err)
	}
	j.release()
	j.idle()
	if _, err := mem.Stat(ctx, dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after release: %v, want it removed", err)
	}
}

// idle waits until nothing is queued or under way.
func (j *janitor) idle() {
	j.wg.Wait()
}
