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
