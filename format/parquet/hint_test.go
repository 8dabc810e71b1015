package parquet

import (
	"bytes"
	"io"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// hintFrom writes n benchDatums to a file and returns its Hint.
func hintFrom(t *testing.T, s *schema.Schema, n int) format.SizeHint {
	t.Helper()
	w, err := NewWriter(io.Discard, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.WriteDatum(benchDatum(t, s, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Hint()
}

// payloadBuilder is the builder of benchSchema's ~1 KB string column.
func payloadBuilder(w *Writer) int { return len(w.bins) - 1 }

// TestHintReservesInStepsCountedInTheCeiling: a file started from its
// predecessor's hint reserves its large column a step at a time — never
// the whole hint at its first record — and every reserved byte is in
// BytesBuffered, which the memory ceiling adds up (docs/design.md §9).
func TestHintReservesInStepsCountedInTheCeiling(t *testing.T) {
	s := mustSchema(t, benchSchema)
	const rows = 2000
	h := hintFrom(t, s, rows).(Hint)
	full := h.cols[len(h.cols)-1].data
	w, err := NewWriter(io.Discard, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.UseHint(h)
	b := w.bins[payloadBuilder(w)]
	steps := map[int]bool{}
	for i := range rows {
		if err := w.WriteDatum(benchDatum(t, s, i)); err != nil {
			t.Fatal(err)
		}
		if i == 0 && w.BytesBuffered() >= full/4 {
			t.Fatalf("first record: %d bytes buffered, hint %d: the hint was reserved at once", w.BytesBuffered(), full)
		}
		if got := w.BytesBuffered(); got < b.DataCap() {
			t.Fatalf("record %d: %d bytes buffered but %d reserved: the reservation is not counted", i, got, b.DataCap())
		}
		if b.DataCap() > 4*b.DataLen()+64<<10 {
			t.Fatalf("record %d: %d reserved for %d bytes of data: more than a step ahead", i, b.DataCap(), b.DataLen())
		}
		steps[b.DataCap()] = true
	}
	up := func(n int) int { return (n + 63) &^ 63 } // arrow allocates in multiples of 64
	if !steps[up(full)] || !steps[up(full>>2)] {
		t.Errorf("capacities %v: want the hint %d and its quarter among them", steps, full)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHintFollowsTheFiles: the hint grows to a larger file at once and
// shrinks at most by half per file, so a file rotated early (for memory)
// does not leave its successor to grow from nothing.
func TestHintFollowsTheFiles(t *testing.T) {
	s := mustSchema(t, benchSchema)
	small, large := hintFrom(t, s, 100), hintFrom(t, s, 1600)
	next := func(from format.SizeHint, n int) int {
		w, err := NewWriter(io.Discard, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w.UseHint(from)
		for i := range n {
			if err := w.WriteDatum(benchDatum(t, s, i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return w.Hint().Bytes()
	}
	for _, c := range []struct {
		name     string
		from     format.SizeHint
		n        int
		min, max int
	}{
		{"larger file: the hint grows to it", small, 1600, large.Bytes(), large.Bytes()},
		{"file rotated early: half the hint", large, 10, large.Bytes() / 2, large.Bytes()/2 + 1},
		{"same size: unchanged", large, 1600, large.Bytes(), large.Bytes()},
	} {
		if got := next(c.from, c.n); got < c.min || got > c.max {
			t.Errorf("%s: next hint %d bytes, want %d..%d", c.name, got, c.min, c.max)
		}
	}
}

// TestHintChangesMemoryNotTheFile: the same records make the same rows,
// in no more row groups (they are cut by held bytes, reservations
// included), with a hint, with one of another schema (ignored) and with
// none.
func TestHintChangesMemoryNotTheFile(t *testing.T) {
	s := mustSchema(t, benchSchema)
	other, err := schema.New(s.ID+1, benchSchema)
	if err != nil {
		t.Fatal(err)
	}
	write := func(h format.SizeHint) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, s, Options{RowGroupBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if h != nil {
			w.UseHint(h)
		}
		for i := range 3000 {
			if err := w.WriteDatum(benchDatum(t, s, i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	want := write(nil)
	_, wantRows := dump(t, want)
	wantGroups := readMeta(t, want).NumRowGroups()
	for name, h := range map[string]format.SizeHint{
		"hint":                          hintFrom(t, s, 3000),
		"hint of four row groups' data": hintFrom(t, s, 4500), // one row group of 4.3 MB
		"other schema's hint":           hintFrom(t, other, 3000),
	} {
		got := write(h)
		if _, rows := dump(t, got); rows != wantRows {
			t.Errorf("%s: rows differ from the file without a hint", name)
		}
		if n := readMeta(t, got).NumRowGroups(); n > wantGroups {
			t.Errorf("%s: %d row groups, %d without a hint", name, n, wantGroups)
		}
	}
}
