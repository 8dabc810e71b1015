package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
)

// TestNumberConverters: the bytes are what Kafka's serializers write
// (ShortSerializer, IntegerSerializer, LongSerializer, FloatSerializer,
// DoubleSerializer: big-endian), read back as the Avro value.
func TestNumberConverters(t *testing.T) {
	be := binary.BigEndian
	for _, tc := range []struct {
		kind NumberKind
		in   []byte
		want any
	}{
		{Short, be.AppendUint16(nil, uint16(0xffff)), int32(-1)},
		{Integer, be.AppendUint32(nil, uint32(1<<31)), int32(math.MinInt32)},
		{Long, be.AppendUint64(nil, uint64(1)<<40), int64(1) << 40},
		{Float, be.AppendUint32(nil, math.Float32bits(-1.5)), float32(-1.5)},
		{Double, be.AppendUint64(nil, math.Float64bits(12.25)), 12.25},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			n := NewNumber(tc.kind)
			v, err := n.Convert(context.Background(), "t", tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Schema.Native(v.Datum)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, %v; want %#v", got, err, tc.want)
			}
			if _, err := n.Convert(context.Background(), "t", append(tc.in, 0)); !errors.Is(err, ErrConversion) {
				t.Fatalf("a wrong size: got %v, want ErrConversion", err)
			}
		})
	}
}

func TestStringKey(t *testing.T) {
	v, err := String{}.Convert(context.Background(), "t", []byte("héllo"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v.Schema.Native(v.Datum); err != nil || got != "héllo" {
		t.Fatalf("got %#v, %v", got, err)
	}
}
