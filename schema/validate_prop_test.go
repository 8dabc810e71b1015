package schema

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

// richSchema has every Avro type the scan distinguishes, so mutations hit
// each of its checks.
const richSchema = `{"type":"record","name":"Rich","fields":[
	{"name":"b","type":"boolean"},
	{"name":"i","type":"int"},
	{"name":"l","type":"long"},
	{"name":"f","type":"float"},
	{"name":"d","type":"double"},
	{"name":"s","type":"string"},
	{"name":"y","type":"bytes"},
	{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},
	{"name":"x","type":{"type":"fixed","name":"X","size":3}},
	{"name":"a","type":{"type":"array","items":["null","int"]}},
	{"name":"m","type":{"type":"map","values":"boolean"}},
	{"name":"dt","type":{"type":"int","logicalType":"date"}},
	{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}`

func richDatum(t testing.TB, s *Schema) []byte {
	t.Helper()
	b, err := s.Codec.BinaryFromNative(nil, map[string]any{
		"b": true, "i": int32(-7), "l": int64(1) << 40, "f": float32(1.5), "d": 2.25,
		"s": "héllo", "y": []byte{0, 1, 2}, "e": "C", "x": []byte("xyz"),
		"a": []any{nil, map[string]any{"int": int32(3)}}, "m": map[string]any{"k": false},
		"dt": int32(19000), "dec": big.NewRat(-12345, 100),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestValidateStrictness pins the checks a scan adds over skipping bytes:
// each datum below has a valid length but a value no Avro reader accepts.
func TestValidateStrictness(t *testing.T) {
	tests := []struct {
		name, schema string
		datum        []byte
	}{
		{"boolean byte 2", `"boolean"`, []byte{2}},
		{"enum index past the symbols", `{"type":"enum","name":"E","symbols":["A","B"]}`, []byte{0x04}},
		{"negative enum index", `{"type":"enum","name":"E","symbols":["A","B"]}`, []byte{0x01}},
		{"int wider than 32 bits", `"int"`, []byte{0x80, 0x80, 0x80, 0x80, 0x20}},
		{"int in six bytes", `"int"`, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSchema(t, 5, tt.schema)
			if err := s.Validate(tt.datum); !errors.Is(err, ErrCorruptDatum) {
				t.Fatalf("Validate(%x) = %v, want ErrCorruptDatum", tt.datum, err)
			}
		})
	}
}

// TestValidateAgreesWithDecode mutates a datum of every type at random:
// whatever Validate accepts must decode fully (the file we write it into
// must be readable), and whatever a full decode rejects Validate must
// reject. Validate may be stricter than goavro (int width), never laxer.
func TestValidateAgreesWithDecode(t *testing.T) {
	s := mustSchema(t, 1, richSchema)
	good := richDatum(t, s)
	if err := s.Validate(good); err != nil {
		t.Fatalf("valid datum rejected: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var accepted, rejected int
	for range 20000 {
		d := mutate(rng, good)
		verr := s.Validate(d)
		_, rest, derr := s.Codec.NativeFromBinary(d)
		decodes := derr == nil && len(rest) == 0
		if verr == nil && !decodes {
			t.Fatalf("Validate accepted %x, goavro: err %v, %d bytes left", d, derr, len(rest))
		}
		if verr != nil {
			rejected++
			if !errors.Is(verr, ErrCorruptDatum) {
				t.Fatalf("Validate(%x) = %v, not ErrCorruptDatum", d, verr)
			}
		} else {
			accepted++
		}
	}
	// Both outcomes must be exercised, or the test proves nothing.
	if accepted < 1000 || rejected < 1000 {
		t.Fatalf("accepted %d, rejected %d mutations: too one-sided", accepted, rejected)
	}
}

// mutate flips, sets, truncates or extends bytes of a copy of b.
func mutate(rng *rand.Rand, b []byte) []byte {
	d := append([]byte(nil), b...)
	switch rng.IntN(4) {
	case 0:
		d[rng.IntN(len(d))] ^= byte(1 << rng.IntN(8))
	case 1:
		d[rng.IntN(len(d))] = byte(rng.IntN(256))
	case 2:
		d = d[:rng.IntN(len(d))]
	default:
		d = append(d, byte(rng.IntN(256)))
	}
	return d
}

// BenchmarkValidate measures the scan of a datum of every type, alone and
// from parallel goroutines (partitions share their *Schema).
func BenchmarkValidate(b *testing.B) {
	s := mustSchema(b, 1, richSchema)
	datum := richDatum(b, s)
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if err := s.Validate(datum); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := s.Validate(datum); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
