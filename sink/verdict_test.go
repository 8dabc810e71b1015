package sink

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/storage/storagetest"
)

// v2NoDefault is a newer schema than demodata.Schema with a field the older
// one lacks and no default for it: under BACKWARD an older record cannot be
// read with it, so it is a bad record while v2 is the files' schema.
const v2NoDefault = `{"type":"record","name":"Order","namespace":"demo","fields":[{"name":"seq","type":"long"},{"name":"must","type":"string"}]}`

// verdictFixture is a partition history for the bad-record verdict: offsets
// 0-9 written with v2 and committed (flush.size 10), then older records.
type verdictFixture struct {
	*fixture
	reg    *registry.Memory
	v1, v2 *schema.Schema
}

func newVerdictFixture(t *testing.T) *verdictFixture {
	ctx := context.Background()
	f := newFixture(t, storagetest.NewMemFS())
	f.flushSize = 10
	reg := registry.NewMemory()
	id1, _ := reg.Register(demodata.Schema)
	id2, _ := reg.Register(v2NoDefault)
	v1, _ := reg.SchemaByID(ctx, id1)
	v2, _ := reg.SchemaByID(ctx, id2)
	f.sch = v1
	return &verdictFixture{fixture: f, reg: reg, v1: v1, v2: v2}
}

func (f *verdictFixture) owner() *partition {
	p := f.partition(nil)
	p.cfg.Compatibility = schema.CompatBackward
	p.cfg.SchemaByID = f.reg.SchemaByID
	return p
}

func (f *verdictFixture) v2Record(off int64) record {
	d, err := f.v2.Codec.BinaryFromNative(nil, map[string]any{"seq": off, "must": "x"})
	if err != nil {
		f.t.Fatal(err)
	}
	return record{Offset: off, Timestamp: time.Now(), Schema: f.v2, Datum: d}
}

// verdicts writes offsets 0-9 with v2 (committed by flush.size), then,
// after a recovery by a new owner if recoverAfter, offsets 10-14 with v1,
// and returns, per offset, whether it was a bad record.
func (f *verdictFixture) verdicts(recoverAfter bool) map[int64]bool {
	ctx := context.Background()
	p := f.owner()
	if _, err := p.resume(ctx, nil); err != nil {
		f.t.Fatal(err)
	}
	for off := int64(0); off < 10; off++ {
		if err := p.write(ctx, ctx, f.v2Record(off)); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := p.endBatch(ctx); err != nil {
		f.t.Fatal(err)
	}
	if recoverAfter {
		p = f.owner() // a crash or a rebalance: another owner resumes
		if next, err := p.resume(ctx, nil); err != nil || next != 10 {
			f.t.Fatalf("resume = %d, %v; want 10", next, err)
		}
	}
	bad := map[int64]bool{}
	for off := int64(10); off < 15; off++ {
		err := p.write(ctx, ctx, f.record(off))
		if err != nil && !isBadRecord(err) {
			f.t.Fatalf("offset %d: %v", off, err)
		}
		bad[off] = err != nil
	}
	return bad
}

// TestBadRecordVerdictDoesNotDependOnRecovery (N4): with BACKWARD and
// mixed writer versions, whether a record is bad (dead-lettered) or
// written is a function of the record and the committed state: the same
// with or without a crash or rebalance before it. Before the fix, a
// recovery forgot the committed files' schema, so the older records after
// it were written instead of rejected, and a record could end in both the
// dead-letter topic (first owner) and HDFS (next owner).
func TestBadRecordVerdictDoesNotDependOnRecovery(t *testing.T) {
	straight := newVerdictFixture(t).verdicts(false)
	recovered := newVerdictFixture(t).verdicts(true)
	for off, bad := range straight {
		if !bad {
			t.Fatalf("offset %d written: this test needs records v2 cannot read", off)
		}
		if recovered[off] != bad {
			t.Errorf("offset %d: bad=%v without a recovery, bad=%v after one", off, bad, recovered[off])
		}
	}
}

// flakyRegistry fails every lookup until healed.
type flakyRegistry struct {
	schema.Registry
	down bool
}

func (r *flakyRegistry) SchemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	if r.down {
		return nil, fmt.Errorf("dial tcp 127.0.0.1:8081: %w", errors.New("connection refused"))
	}
	return r.Registry.SchemaByID(ctx, id)
}

// TestSchemaRestoreFailureIsNotTheRecordsFault: when the registry cannot
// give the committed files' schema back after a recovery, the record is
// not judged (no bad record, nothing dead-lettered): the partition retries.
func TestSchemaRestoreFailureIsNotTheRecordsFault(t *testing.T) {
	ctx := context.Background()
	f := newVerdictFixture(t)
	f.verdicts(false)
	reg := &flakyRegistry{Registry: f.reg, down: true}
	p := f.owner()
	p.cfg.SchemaByID = reg.SchemaByID
	if _, err := p.resume(ctx, nil); err != nil {
		t.Fatal(err)
	}
	err := p.write(ctx, ctx, f.record(10))
	if err == nil || isBadRecord(err) {
		t.Fatalf("write while the registry is down = %v; want an error that is not the record's", err)
	}
	reg.down = false
	if err := p.write(ctx, ctx, f.record(10)); !isBadRecord(err) {
		t.Fatalf("write once the registry is back = %v; want the bad record it is", err)
	}
}
