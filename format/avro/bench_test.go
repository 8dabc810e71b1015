package avro

import (
	"fmt"
	"io"
	"testing"

	"github.com/linkedin/goavro/v2"
)

// benchCases are the record sizes the brief asks for; the payload is sized
// so that the whole datum is close to the name.
var benchCases = []struct {
	name    string
	payload int
}{{"100B", 53}, {"1KB", 953}}

var benchCodecs = []string{"null", "deflate", "snappy"}

// BenchmarkWriteDatum measures the pass-through writer: raw datums copied
// into blocks, compressed, framed.
func BenchmarkWriteDatum(b *testing.B) {
	s := mustSchema(b, testSchema)
	for _, bc := range benchCases {
		datums := testDatums(b, s, 1024, bc.payload)
		for _, codec := range benchCodecs {
			b.Run(fmt.Sprintf("%s/%s", codec, bc.name), func(b *testing.B) {
				w, err := NewWriter(io.Discard, s, Options{Codec: codec})
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(avgLen(datums))
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if err := w.WriteDatum(datums[i%len(datums)]); err != nil {
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

// BenchmarkGoavroOCFAppend is the baseline on the same data with goavro's
// OCFWriter. "append" gives it pre-decoded values in batches the size of
// our blocks (its best case: one block per Append call); "decode+append"
// adds the datum decode a sink would need before it, the real alternative
// to pass-through.
func BenchmarkGoavroOCFAppend(b *testing.B) {
	s := mustSchema(b, testSchema)
	for _, bc := range benchCases {
		datums := testDatums(b, s, 1024, bc.payload)
		natives := make([]any, len(datums))
		for i, d := range datums {
			v, err := s.Native(d)
			if err != nil {
				b.Fatal(err)
			}
			natives[i] = v
		}
		batch := max(1, DefaultBlockBytes/int(avgLen(datums)))
		for _, codec := range benchCodecs {
			for _, decode := range []bool{false, true} {
				mode := "append"
				if decode {
					mode = "decode+append"
				}
				b.Run(fmt.Sprintf("%s/%s/%s", codec, bc.name, mode), func(b *testing.B) {
					w, err := goavro.NewOCFWriter(goavro.OCFConfig{W: io.Discard, Codec: s.Codec, CompressionName: codec})
					if err != nil {
						b.Fatal(err)
					}
					b.SetBytes(avgLen(datums))
					b.ReportAllocs()
					pending := make([]any, 0, batch)
					for i := 0; b.Loop(); i++ {
						v := natives[i%len(natives)]
						if decode {
							if v, err = s.Native(datums[i%len(datums)]); err != nil {
								b.Fatal(err)
							}
						}
						if pending = append(pending, v); len(pending) == batch {
							if err := w.Append(pending); err != nil {
								b.Fatal(err)
							}
							pending = pending[:0]
						}
					}
				})
			}
		}
	}
}

func avgLen(datums [][]byte) int64 {
	var n int
	for _, d := range datums {
		n += len(d)
	}
	return int64(n / len(datums))
}

// TestBenchDataSizes keeps the benchmark names honest.
func TestBenchDataSizes(t *testing.T) {
	s := mustSchema(t, testSchema)
	for _, bc := range benchCases {
		n := avgLen(testDatums(t, s, 64, bc.payload))
		want := map[string]int64{"100B": 100, "1KB": 1000}[bc.name]
		if n < want*9/10 || n > want*11/10 {
			t.Errorf("%s datums average %d bytes", bc.name, n)
		}
	}
}
