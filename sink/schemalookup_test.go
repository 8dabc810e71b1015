package sink

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
)

// lookupConnector is a connector whose registry is a real registry client
// (against a fake Confluent registry) that already holds schema 1.
func lookupConnector(tb testing.TB) *Connector {
	fake := srfake.New()
	tb.Cleanup(fake.Close)
	fake.SeedSchema("orders-value", 1, 1, sr.Schema{Schema: demodata.Schema})
	reg, err := registry.NewClient(registry.ClientConfig{URLs: []string{fake.URL()}})
	if err != nil {
		tb.Fatal(err)
	}
	c := &Connector{cfg: withDefaults(Config{Registry: reg})}
	if _, err := c.schemaByID(context.Background(), 1); err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestCachedSchemaLookupAllocatesNothing (issue 25): the per-record schema
// lookup of a cached id builds no deadline, timer or context: nothing is
// allocated. (The bounded wait, D19, applies to lookups that go to the
// registry.)
func TestCachedSchemaLookupAllocatesNothing(t *testing.T) {
	c := lookupConnector(t)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := c.schemaByID(ctx, 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a cached schema lookup allocates %.1f times; want 0", allocs)
	}
}

// BenchmarkSchemaLookup compares, in one run, the per-record lookup of a
// cached schema with what it cost before issue 25: a 30 s deadline built
// around every lookup. `go test -bench SchemaLookup -benchmem ./sink`.
func BenchmarkSchemaLookup(b *testing.B) {
	c := lookupConnector(b)
	ctx := context.Background()
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.schemaByID(ctx, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("deadline-per-record", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			if _, err := c.cfg.Registry.SchemaByID(lctx, 1); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
}
