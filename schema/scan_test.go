package schema

import (
	"bytes"
	"errors"
	"testing"
)

// Each datum here once made goavro allocate gigabytes (a crash, not an
// error) or is a limit case; all must come back as *DatumError.
func TestNativeRejectsImpossibleBlocks(t *testing.T) {
	// Node{next: Node{next: ... null}}: each level is one union byte.
	deep := append(bytes.Repeat([]byte{0x02}, maxScanDepth), 0x00)
	tests := []struct {
		name, schema string
		datum        []byte
	}{
		{"array count 2^31-1", `{"type":"array","items":"string"}`, []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}},
		{"negative array count", `{"type":"array","items":"long"}`, []byte{0xfd, 0xff, 0xff, 0xff, 0x0f, 0x00}},
		{"map count 2^31-1", `{"type":"map","values":"int"}`, []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}},
		{"count above remaining bytes", `{"type":"array","items":"int"}`, []byte{0x08, 0x02, 0x02, 0x02}},
		{"zero-width items over cap", `{"type":"array","items":"null"}`, []byte{0x82, 0x80, 0x08, 0x00}},
		{"nested too deep", rec("Node", `{"name":"next","type":["null","Node"]}`), deep},
		{"bad varint", `"long"`, bytes.Repeat([]byte{0xff}, 11)},
		{"string past end", `"string"`, []byte{0x10, 'a'}},
		{"union index out of range", `["null","int"]`, []byte{0x04}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSchema(t, 4, tt.schema)
			_, err := s.Native(tt.datum)
			var de *DatumError
			if !errors.As(err, &de) || de.SchemaID != 4 {
				t.Fatalf("Native = %v, want *DatumError", err)
			}
		})
	}
}

// The checks do not reject what a valid encoder writes.
func TestNativeAcceptsLegalBlocks(t *testing.T) {
	tests := []struct {
		name, schema string
		datum        []byte
	}{
		{"zero-width items at cap", `{"type":"array","items":"null"}`, []byte{0x80, 0x80, 0x08, 0x00}},
		{"block with byte size", `{"type":"array","items":"int"}`, []byte{0x03, 0x04, 0x02, 0x04, 0x00}},
		{"two blocks", `{"type":"map","values":"int"}`, []byte{0x02, 0x02, 'a', 0x02, 0x02, 0x02, 'b', 0x04, 0x00}},
		{"empty records", `{"type":"array","items":{"type":"record","name":"E","fields":[]}}`, []byte{0x14, 0x00}},
		{"nesting at limit", rec("Node", `{"name":"next","type":["null","Node"]}`),
			append(bytes.Repeat([]byte{0x02}, maxScanDepth/2-1), 0x00)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := mustSchema(t, 4, tt.schema).Native(tt.datum); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// scanFields and skipCommon skip longs, strings and bytes without scan; at
// the edges of what fits they must decide as scan does: accept what goavro
// decodes whole, reject the rest. Each case is one field of a record (or
// its array items, map values), so it takes the fast path.
func TestFastSkipAgreesWithScan(t *testing.T) {
	tests := []struct {
		name, field string
		datum       []byte
		ok          bool
	}{
		{"one-byte long", `"long"`, []byte{0x7f}, true},
		{"nine-byte long", `"long"`, append(bytes.Repeat([]byte{0xff}, 8), 0x7f), true},
		{"ten-byte long", `"long"`, append(bytes.Repeat([]byte{0xff}, 9), 0x01), true},
		{"long cut short", `"long"`, []byte{0xff, 0xff}, false},
		{"eleven-byte long", `"long"`, bytes.Repeat([]byte{0xff}, 11), false},
		{"empty string", `"string"`, []byte{0x00}, true},
		{"string to the last byte", `"string"`, []byte{0x04, 'a', 'b'}, true},
		{"string one byte past the end", `"string"`, []byte{0x06, 'a', 'b'}, false},
		{"length -1", `"string"`, []byte{0x01}, false},
		{"length -2 with a byte after it", `"string"`, []byte{0x03, 'a'}, false},
		{"two-byte length", `"bytes"`, append([]byte{0x80, 0x01}, bytes.Repeat([]byte{'x'}, 64)...), true},
		{"two-byte length past the end", `"bytes"`, append([]byte{0x80, 0x01}, bytes.Repeat([]byte{'x'}, 63)...), false},
		{"no bytes at all", `"string"`, nil, false},
		// array items and map values take skipCommon, the same path
		{"array of one string to its end", `{"type":"array","items":"string"}`, []byte{0x02, 0x04, 'a', 'b', 0x00}, true},
		{"array item of length -2", `{"type":"array","items":"string"}`, []byte{0x02, 0x03, 'a', 0x00}, false},
		{"array of longs", `{"type":"array","items":"long"}`, []byte{0x04, 0xff, 0x7f, 0x01, 0x00}, true},
		{"map value of length -1", `{"type":"map","values":"bytes"}`, []byte{0x02, 0x02, 'k', 0x01, 0x00}, false},
		{"map value past the end", `{"type":"map","values":"bytes"}`, []byte{0x02, 0x02, 'k', 0x08, 'v', 0x00}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSchema(t, 6, rec("R", `{"name":"f","type":`+tt.field+`}`))
			err := s.Validate(tt.datum)
			if (err == nil) != tt.ok {
				t.Fatalf("Validate(%x) = %v, want accepted: %v", tt.datum, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrCorruptDatum) {
				t.Fatalf("Validate(%x) = %v, not ErrCorruptDatum", tt.datum, err)
			}
			_, rest, derr := s.Codec.NativeFromBinary(tt.datum)
			if decodes := derr == nil && len(rest) == 0; decodes != tt.ok {
				t.Fatalf("goavro decodes %x: %v (err %v, %d bytes left); the table is wrong", tt.datum, decodes, derr, len(rest))
			}
		})
	}
}
