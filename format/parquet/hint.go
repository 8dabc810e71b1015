package parquet

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/hdfs-sink/hdfs-sink/format"
)

// Arrow's builders grow from nothing by doubling, so a file of N bytes of
// strings allocates about 2N, zeroes it twice and copies about N on the
// way (37 % of BenchmarkWriteFiles' profile, docs/benchmarks.md). A Hint
// carries the sizes a partition's previous file reached to its next one,
// which reserves them in a few large steps instead.
//
// The steps keep the memory ceiling honest (docs/design.md §9): every
// reservation goes through the writer's counting allocator, so
// BytesBuffered counts it from the moment it is made, and a column is
// reserved only up to the next step above what it holds — the hint, a
// quarter of it, a sixteenth… — never the whole hint at its first
// record: a column counts at most 4× the data it holds (arrow's doubling
// alone: 2×).

// hintStepShift: steps are hint>>(k·hintStepShift), k = 0, 1, 2, …: the
// hint, a quarter of it, a sixteenth… Halves would copy as much as arrow's
// doubling does (BenchmarkWriteFiles: ×0.93 CPU, quarters ×0.78, the whole
// hint at once ×0.78).
const hintStepShift = 2

// colSize is what one binary builder held when a row group was written.
type colSize struct{ rows, data int }

// Hint is the sizes a file's binary columns reached, for the next file of
// the same partition and schema (format.SizeHint).
type Hint struct {
	schemaID int32
	cols     []colSize
}

var _ format.SizeHint = Hint{}

// Bytes is the column data the hint reserves in full.
func (h Hint) Bytes() int {
	n := 0
	for _, c := range h.cols {
		n += c.data
	}
	return n
}

// binaryBuilders lists the binary builders under bld (strings, bytes,
// enums, map keys, nested ones included) in a fixed order, so a Hint
// of the same schema lines up with them.
func binaryBuilders(bld array.Builder, out []*array.BinaryBuilder) []*array.BinaryBuilder {
	switch b := bld.(type) {
	case *array.StringBuilder:
		return append(out, b.BinaryBuilder)
	case *array.BinaryBuilder:
		return append(out, b)
	case *array.ListBuilder:
		return binaryBuilders(b.ValueBuilder(), out)
	case *array.MapBuilder:
		out = binaryBuilders(b.KeyBuilder(), out)
		return binaryBuilders(b.ItemBuilder(), out)
	case *array.StructBuilder:
		for i := range b.NumField() {
			out = binaryBuilders(b.FieldBuilder(i), out)
		}
	}
	return out
}

// UseHint makes the writer reserve its binary columns in steps toward
// h. A hint of another schema, or any other format's, is ignored.
func (w *Writer) UseHint(h format.SizeHint) {
	ph, ok := h.(Hint)
	if !ok || ph.schemaID != w.s.ID || len(ph.cols) != len(w.bins) {
		return
	}
	w.hint = ph.cols
	w.due = make([]int, len(w.bins))
}

// Hint is the hint for the partition's next file: per column the most a
// row group of this file held, but no less than half the hint this file
// was started with, so a file closed early (rotated for memory, a schema
// change) does not make the next one start from nothing.
func (w *Writer) Hint() format.SizeHint {
	cols := make([]colSize, len(w.bins))
	for i := range cols {
		cols[i] = w.seen[i]
		if i < len(w.hint) {
			cols[i].rows = max(cols[i].rows, w.hint[i].rows/2)
			cols[i].data = max(cols[i].data, w.hint[i].data/2)
		}
	}
	return Hint{schemaID: w.s.ID, cols: cols}
}

// noteSizes records what the binary builders hold before a row group is
// written and they are emptied.
func (w *Writer) noteSizes() {
	for i, b := range w.bins {
		w.seen[i].rows = max(w.seen[i].rows, b.Len())
		w.seen[i].data = max(w.seen[i].data, b.DataLen())
	}
	clear(w.due) // the builders start again from nothing

}

// reserveAhead moves each binary builder whose data reached its due
// length to the next step toward its hint. One compare per column and
// record otherwise: 100-byte records have little time to spare.
func (w *Writer) reserveAhead() {
	for i, b := range w.bins {
		if b.DataLen() >= w.due[i] {
			w.due[i] = w.reserveStep(b, w.hint[i])
		}
	}
}

// reserveStep reserves b's next step toward h, and its rows in
// proportion, and returns the data length at which to look again. Past
// the hint arrow grows it as before.
func (w *Writer) reserveStep(b *array.BinaryBuilder, h colSize) (due int) {
	n := b.DataLen()
	if b.DataCap() >= h.data {
		return math.MaxInt // the last step is taken (or arrow grew past it)
	}
	// room for a few more values of the average size so far
	margin := 4*n/max(b.Len(), 1) + 64
	if b.DataCap()-n >= margin {
		return b.DataCap() - margin + 1
	}
	step := nextStep(h.data, n+margin)
	// A step that would close the row group by itself (held bytes decide
	// it) is left to arrow: row groups stay as large as without a hint.
	if w.mem.held()+step-b.DataCap() >= w.opts.RowGroupBytes {
		return n + margin
	}
	b.ReserveData(step - n)
	if rows := max(h.rows/max(h.data/step, 1), b.Len()+1); rows > b.Cap() {
		b.Resize(rows)
	}
	return step - margin + 1
}

// nextStep is the smallest hint>>(k·hintStepShift) that is at least need,
// or need when the hint is smaller.
func nextStep(hint, need int) int {
	if need >= hint {
		return need
	}
	step := hint
	for step>>hintStepShift >= need && step>>hintStepShift > 0 {
		step >>= hintStepShift
	}
	return step
}
