package pqgo_experiment

import (
	"bytes"
	"strings"
	"testing"
)

// TestBadDatumLeavesNothing: a datum that does not decode fails with an
// error naming the field, and nothing of it reaches the file: the writer
// goes on, and its file equals arrow-go's of the good datums alone.
func TestBadDatumLeavesNothing(t *testing.T) {
	wl := workloads(t)[0] // bench 1 KB: every kind of column, a map and a list
	good := wl.datums[:600]
	d := good[1]
	cases := []struct {
		name, datum, wantErr string
	}{
		{"truncated in the payload", string(d[:len(d)-5]), "field payload"},
		{"truncated in the map", string(d[:len(d)-700]), "field attrs"},
		{"trailing bytes", string(d) + "\x00", "bytes after the record"},
		{"bad union index", string(unionBranch(t, d)), "field referrer"},
		{"empty", "", "field id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, wl.s, Options{PageRows: DefaultPageRows})
			if err != nil {
				t.Fatal(err)
			}
			for i, g := range good {
				if i == 300 {
					err := w.WriteDatum([]byte(c.datum))
					if err == nil || !strings.Contains(err.Error(), c.wantErr) {
						t.Fatalf("bad datum: error %v, want one naming %q", err, c.wantErr)
					}
				}
				if err := w.WriteDatum(g); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			compareValues(t, readTable(t, writeArrowGo(t, wl.s, good)), readTable(t, buf.Bytes()))
		})
	}
}

// unionBranch returns d with the referrer union's branch index set to 2
// (out of range). The index follows 13 fields of varying width, so it is
// found by decoding d up to it.
func unionBranch(t *testing.T, d []byte) []byte {
	t.Helper()
	w, err := NewWriter(&bytes.Buffer{}, workloads(t)[0].s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), d...)
	rest := b
	for _, dec := range w.root[:13] { // id … flag
		if rest, err = dec.put(w, rest, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	b[len(b)-len(rest)] = 4 // zig-zag 2
	return b
}
