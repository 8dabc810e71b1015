package schema_test

import (
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/benchdata"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// BenchmarkValidateBenchRecords is the sink's per-record validation of
// tools/bench's own records (internal/benchdata), the workload whose
// 100 B case profiles the scan at a fifth of the sink's CPU.
func BenchmarkValidateBenchRecords(b *testing.B) {
	for _, size := range []string{"100B", "1KB"} {
		b.Run(size, func(b *testing.B) {
			datums, text, err := benchdata.Pool(size)
			if err != nil {
				b.Fatal(err)
			}
			s, err := schema.New(1, text)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(datums[0])))
			i := 0
			for b.Loop() {
				if err := s.Validate(datums[i%len(datums)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
