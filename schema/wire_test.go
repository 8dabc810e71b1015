package schema

import (
	"bytes"
	"errors"
	"testing"
)

func TestParseWireFailures(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		reason FrameReason
	}{
		{"nil", nil, ReasonEmpty},
		{"empty", []byte{}, ReasonEmpty},
		{"wrong magic", []byte{1, 0, 0, 0, 1, 2}, ReasonMagic},
		{"json value", []byte(`{"a":1}`), ReasonMagic},
		{"magic only", []byte{0}, ReasonTooShort},
		{"four bytes", []byte{0, 0, 0, 1}, ReasonTooShort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseWire(tt.in)
			if !errors.Is(err, ErrNotFramed) {
				t.Fatalf("err = %v, want ErrNotFramed", err)
			}
			var fe *FrameError
			if !errors.As(err, &fe) || fe.Reason != tt.reason || fe.Len != len(tt.in) {
				t.Fatalf("err = %#v, want reason %q len %d", err, tt.reason, len(tt.in))
			}
		})
	}
}

func TestParseWire(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		id    int32
		datum []byte
	}{
		{"empty datum", []byte{0, 0, 0, 0, 7}, 7, []byte{}},
		{"big id", []byte{0, 0x7f, 0xff, 0xff, 0xff, 0x02}, 1<<31 - 1, []byte{2}},
		{"datum", []byte{0, 0, 0, 1, 0, 'a', 'b'}, 256, []byte("ab")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, datum, err := ParseWire(tt.in)
			if err != nil || id != tt.id || !bytes.Equal(datum, tt.datum) {
				t.Fatalf("ParseWire = %d, %x, %v; want %d, %x", id, datum, err, tt.id, tt.datum)
			}
			if got := AppendWire(nil, id, datum); !bytes.Equal(got, tt.in) {
				t.Fatalf("AppendWire = %x, want %x", got, tt.in)
			}
		})
	}
}
