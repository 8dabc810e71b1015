package main

import (
	"io"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/format/parquet"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// Micro-benchmarks on the harness's own workloads (benchstat-friendly:
// go test -run '^$' -bench . -count 10 ./tools/bench). format/avro, format/parquet
// and wal have their own; these add the per-record steps of the sink on the
// 20-field record: validate, decode to native, encode, and file names.

func benchSchema(b *testing.B, size string) (*schema.Schema, [][]byte) {
	b.Helper()
	pool, text, err := datumPool(size)
	if err != nil {
		b.Fatal(err)
	}
	s, err := schema.New(1, text)
	if err != nil {
		b.Fatal(err)
	}
	return s, pool
}

func BenchmarkValidate(b *testing.B) {
	for _, size := range []string{"1KB", "100B"} {
		b.Run(size, func(b *testing.B) {
			s, pool := benchSchema(b, size)
			b.SetBytes(int64(len(pool[0])))
			for i := 0; b.Loop(); i++ {
				if err := s.Validate(pool[i%len(pool)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNative is the decode the time-based partitioner pays per record.
func BenchmarkNative(b *testing.B) {
	s, pool := benchSchema(b, "1KB")
	b.SetBytes(int64(len(pool[0])))
	for i := 0; b.Loop(); i++ {
		if _, err := s.Native(pool[i%len(pool)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	type enc interface {
		WriteDatum([]byte) error
		Close() error
	}
	newers := map[string]func(*schema.Schema) (enc, error){
		"avro-snappy": func(s *schema.Schema) (enc, error) {
			return avro.NewWriter(io.Discard, s, avro.Options{Codec: "snappy"})
		},
		"parquet-snappy": func(s *schema.Schema) (enc, error) { return parquet.NewWriter(io.Discard, s, parquet.Options{}) },
	}
	for _, name := range []string{"avro-snappy", "parquet-snappy"} {
		for _, size := range []string{"1KB", "100B"} {
			b.Run(name+"/"+size, func(b *testing.B) {
				s, pool := benchSchema(b, size)
				w, err := newers[name](s)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(pool[0])))
				for i := 0; b.Loop(); i++ {
					if err := w.WriteDatum(pool[i%len(pool)]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

func BenchmarkFileName(b *testing.B) {
	name := layout.FinalName("orders-eu", 17, 1_234_567, 1_244_566, 10, ".avro")
	b.Run("format", func(b *testing.B) {
		for i := int64(0); b.Loop(); i++ {
			_ = layout.FinalName("orders-eu", 17, i, i+9999, 10, ".avro")
		}
	})
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, ok := layout.ParseFinalName(name); !ok {
				b.Fatalf("%q not parsed", name)
			}
		}
	})
}

// TestWorkloadSizes keeps the workloads the sizes the docs call them and
// checks every datum is valid for its schema (a bad pool would measure the
// dead-letter path instead of the write path).
func TestWorkloadSizes(t *testing.T) {
	for _, tc := range []struct {
		size   string
		lo, hi int
	}{{"1KB", 800, 1200}, {"100B", 60, 140}} {
		pool, text, err := datumPool(tc.size)
		if err != nil {
			t.Fatal(err)
		}
		s, err := schema.New(1, text)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for i, d := range pool {
			if err := s.Validate(d); err != nil {
				t.Fatalf("%s datum %d: %v", tc.size, i, err)
			}
			total += len(d)
		}
		if avg := total / len(pool); avg < tc.lo || avg > tc.hi {
			t.Errorf("%s: average datum %d B, want %d..%d", tc.size, avg, tc.lo, tc.hi)
		}
	}
}
