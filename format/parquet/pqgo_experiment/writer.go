package pqgo_experiment

import (
	"fmt"
	"io"
	"math/big"
	"reflect"
	"strings"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// The settings format/parquet gives arrow-go (writer.go there).
const (
	pageBytes = 64 << 10 // data pages, and the dictionary size before falling back to PLAIN
	createdBy = "hdfs-sink (parquet-go experiment)"
)

// batchRows rows are decoded into per-column values before they are
// handed to parquet-go's column writers, which cost a call per column
// and batch rather than per value.
const batchRows = 256

// DefaultPageRows: every column ends its data page after this many rows
// (if the page is not full before). parquet-go cuts a dictionary-encoded page by
// the size of its indexes and checks the dictionary's size only when it
// cuts one, so without this a file of 14,000 rows is one page per column
// and no dictionary ever falls back to PLAIN; arrow-go checks after each
// batch of 1,024 values and falls back once the dictionary passes
// pageBytes. Cutting pages at 1,024 rows gives the same fallback, so
// both encoders do the same work on high-cardinality columns.
const DefaultPageRows = 1024

// Options configure a Writer.
type Options struct {
	// PageRows cuts every column's data page after this many rows (in
	// steps of 256); 0 leaves page cutting to parquet-go alone.
	PageRows int
}

// Writer writes one Parquet file through parquet-go's column writers.
// It is not safe for concurrent use.
type Writer struct {
	s     *schema.Schema
	pw    *parquet.Writer
	cols  []*parquet.ColumnWriter
	root  []decoder         // one per top-level field
	vals  [][]parquet.Value // the batch's values, per leaf column
	marks []int             // len(vals[i]) before the datum being decoded
	arena []byte            // copies of the batch's datums: byte array values point here
	rows  int               // rows in the batch
	paged int               // rows in the columns' open pages
	opts  Options
	out   *countingWriter
	ents  []mapEntry // scratch of a map's entries
	err   error      // sticky: the file is incomplete
}

// NewWriter starts a file on w for datums of s.
func NewWriter(w io.Writer, s *schema.Schema, opts Options) (*Writer, error) {
	root, err := s.Columnar()
	if err != nil {
		return nil, err
	}
	b := &builder{}
	node, decs, err := b.record(root, "")
	if err != nil {
		return nil, err
	}
	sch := parquet.NewSchema("schema", node)
	out := &countingWriter{w: w}
	pw := parquet.NewWriter(out, sch,
		parquet.Compression(&parquet.Snappy),
		parquet.PageBufferSize(pageBytes),
		parquet.DictionaryMaxBytes(pageBytes),
		parquet.DataPageVersion(1),
		parquet.CreatedBy(createdBy, "", ""),
	)
	cols := pw.ColumnWriters()
	if len(cols) != len(b.paths) {
		return nil, fmt.Errorf("pqgo: schema %d: %d leaf columns, parquet-go made %d", s.ID, len(b.paths), len(cols))
	}
	for i, p := range sch.Columns() {
		if got := strings.Join(p, "."); got != b.paths[i] {
			return nil, fmt.Errorf("pqgo: schema %d: column %d is %s, expected %s", s.ID, i, got, b.paths[i])
		}
	}
	vals := make([][]parquet.Value, len(cols))
	for i := range vals {
		vals[i] = make([]parquet.Value, 0, batchRows)
	}
	return &Writer{s: s, opts: opts, out: out, pw: pw, cols: cols, root: decs, vals: vals, marks: make([]int, len(cols))}, nil
}

// WriteDatum decodes datum into the batch's column values in one pass; a
// datum that fails to decode is taken back out of every column, so the
// writer stays usable.
func (w *Writer) WriteDatum(datum []byte) (err error) {
	if w.err != nil {
		return w.err
	}
	for i := range w.vals {
		w.marks[i] = len(w.vals[i])
	}
	arenaMark := len(w.arena)
	w.arena = append(w.arena, datum...)
	b := w.arena[arenaMark:]
	for _, d := range w.root {
		if b, err = d.put(w, b, 0, 0); err != nil {
			break
		}
	}
	if err == nil && len(b) != 0 {
		err = fmt.Errorf("%d bytes after the record", len(b))
	}
	if err != nil {
		for i := range w.vals {
			w.vals[i] = w.vals[i][:w.marks[i]]
		}
		w.arena = w.arena[:arenaMark]
		return fmt.Errorf("pqgo: schema %d: datum of %d bytes: %w", w.s.ID, len(datum), err)
	}
	if w.rows++; w.rows == batchRows {
		return w.flushBatch()
	}
	return nil
}

// flushBatch hands the batch to the column writers, which encode it into
// pages (dictionary indexes, page statistics), compress full pages and
// keep them until the row group is written.
func (w *Writer) flushBatch() error {
	for i, c := range w.cols {
		if _, err := c.WriteRowValues(w.vals[i]); err != nil {
			w.err = fmt.Errorf("pqgo: column %d: %w", i, err)
			return w.err
		}
		clear(w.vals[i]) // drop the references into the arena
		w.vals[i] = w.vals[i][:0]
	}
	w.paged += w.rows
	w.rows = 0
	w.arena = w.arena[:0]
	if w.opts.PageRows > 0 && w.paged >= w.opts.PageRows {
		w.paged = 0
		for i, c := range w.cols {
			if err := c.Flush(); err != nil {
				w.err = fmt.Errorf("pqgo: column %d: end page: %w", i, err)
				return w.err
			}
		}
	}
	return nil
}

// Reset starts a new file on out with the writer Close finished,
// keeping its buffers and parquet-go's (column buffers, dictionaries'
// capacity), as a partition could for its next file. For measurement
// only: parquet-go v0.32.0's Reset leaves the later files' column chunks
// without path_in_schema (upstream issue 602; TestResetLosesColumnPaths).
func (w *Writer) Reset(out io.Writer) {
	w.out.w, w.out.n = out, 0
	w.pw.Reset(w.out)
	w.cols = w.pw.ColumnWriters()
	for i := range w.vals {
		clear(w.vals[i])
		w.vals[i] = w.vals[i][:0]
	}
	w.arena, w.rows, w.paged, w.err = w.arena[:0], 0, 0, nil
}

// BytesBuffered estimates the memory the open file holds: parquet-go's
// own estimate of its row group (compressed pages, open page buffers,
// dictionary values; Writer.Size less what reached the output) plus this
// writer's batch (values and datum copies). parquet-go allocates from the
// Go heap directly, so unlike format/parquet's counting allocator this is
// an estimate: it leaves out slice slack and the dictionaries' hash maps.
func (w *Writer) BytesBuffered() int {
	n := int(w.pw.Size()-w.out.n) + cap(w.arena)
	for _, v := range w.vals {
		n += cap(v) * int(unsafe.Sizeof(parquet.Value{}))
	}
	return n
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Close writes the batch, the row group and the footer. It does not
// close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.flushBatch(); err != nil {
		return err
	}
	if err := w.pw.Close(); err != nil {
		w.err = fmt.Errorf("pqgo: finish file: %w", err)
		return w.err
	}
	w.err = fmt.Errorf("pqgo: writer closed")
	return nil
}

// orderedGroup is a group whose fields keep the Avro order:
// parquet.Group is a map and sorts its fields by name.
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g orderedGroup) Fields() []parquet.Field { return g.fields }

// String keeps fmt from printing the embedded map.
func (g orderedGroup) String() string { return fmt.Sprintf("group of %d fields", len(g.fields)) }

type namedField struct {
	parquet.Node
	name string
}

func (f namedField) Name() string { return f.name }

// Value is only used by parquet-go's reflection writes, which this
// writer never makes.
func (f namedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

// builder maps the Avro schema to parquet-go nodes and decoders, giving
// each leaf column its index in the order parquet-go numbers them.
type builder struct {
	paths []string // leaf column paths, by index
	depth int      // repeated groups around the node being built
}

func (b *builder) record(n *avsc.Node, path string) (parquet.Node, []decoder, error) {
	if len(n.Fields) == 0 {
		return nil, nil, fmt.Errorf("pqgo: %s: record without fields", path)
	}
	g := orderedGroup{Group: parquet.Group{}}
	decs := make([]decoder, len(n.Fields))
	for i, f := range n.Fields {
		node, dec, err := b.field(f.Type, join(path, f.Name))
		if err != nil {
			return nil, nil, err
		}
		g.Group[f.Name] = node
		g.fields = append(g.fields, namedField{Node: node, name: f.Name})
		decs[i] = dec
	}
	return g, decs, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// field maps a named value; ["null", T] makes it optional.
func (b *builder) field(n *avsc.Node, path string) (parquet.Node, decoder, error) {
	if inner, ok := n.Nullable(); ok {
		nullIndex := int64(0)
		if n.Branches[0].Kind != avsc.Null {
			nullIndex = 1
		}
		first := len(b.paths)
		node, dec, err := b.typ(inner, path)
		if err != nil {
			return nil, nil, err
		}
		return parquet.Optional(node), &optionalDec{path: path, nullIndex: nullIndex, inner: dec,
			first: first, last: len(b.paths)}, nil
	}
	if n.Kind == avsc.Union {
		return nil, nil, fmt.Errorf("pqgo: %s: union other than [\"null\", T] is not in the experiment", path)
	}
	return b.typ(n, path)
}

func (b *builder) leaf(path string, node parquet.Node, dict bool, mk func(leafDec) decoder) (parquet.Node, decoder, error) {
	if dict {
		node = parquet.Encoded(node, &parquet.RLEDictionary)
	}
	b.paths = append(b.paths, path)
	return node, mk(leafDec{path: path, col: len(b.paths) - 1}), nil
}

// generic makes a leaf that reads through read; the as* functions make
// the leaves of the common kinds, which read inline.
func generic(read reader) func(leafDec) decoder {
	return func(l leafDec) decoder { l.read = read; return &l }
}

func asBytes(l leafDec) decoder  { l.read = readBytes; return &bytesLeaf{l} }
func asLong(l leafDec) decoder   { l.read = readInt64; return &longLeaf{l} }
func asInt32(l leafDec) decoder  { l.read = readInt32; return &int32Leaf{l} }
func asDouble(l leafDec) decoder { l.read = readDouble; return &doubleLeaf{l} }
func asFloat(l leafDec) decoder  { l.read = readFloat; return &floatLeaf{l} }

func (b *builder) typ(n *avsc.Node, path string) (parquet.Node, decoder, error) {
	switch n.Logical {
	case avsc.None, avsc.UUID:
	case avsc.Date:
		return b.leaf(path, parquet.Date(), true, asInt32)
	case avsc.TimestampMillis:
		return b.leaf(path, parquet.Leaf(parquet.Int96Type), false, generic(readInt96(1e6)))
	case avsc.TimestampMicros:
		return b.leaf(path, parquet.Leaf(parquet.Int96Type), false, generic(readInt96(1e3)))
	case avsc.Decimal:
		return b.decimal(n, path)
	default:
		return nil, nil, fmt.Errorf("pqgo: %s: logical type %d is not in the experiment", path, n.Logical)
	}
	switch n.Kind {
	case avsc.Boolean:
		return b.leaf(path, parquet.Leaf(parquet.BooleanType), false, generic(readBool))
	case avsc.Int:
		return b.leaf(path, parquet.Int(32), true, asInt32)
	case avsc.Long:
		return b.leaf(path, parquet.Int(64), true, asLong)
	case avsc.Float:
		return b.leaf(path, parquet.Leaf(parquet.FloatType), true, asFloat)
	case avsc.Double:
		return b.leaf(path, parquet.Leaf(parquet.DoubleType), true, asDouble)
	case avsc.String:
		return b.leaf(path, parquet.String(), true, asBytes)
	case avsc.Bytes:
		return b.leaf(path, parquet.Leaf(parquet.ByteArrayType), true, asBytes)
	case avsc.Enum:
		return b.leaf(path, parquet.String(), true, generic(readEnum(n.Symbols)))
	case avsc.Fixed:
		return b.leaf(path, parquet.Leaf(parquet.FixedLenByteArrayType(n.Size)), true, generic(readFixed(n.Size)))
	case avsc.Record:
		first := len(b.paths)
		node, decs, err := b.record(n, path)
		if err != nil {
			return nil, nil, err
		}
		return node, &recordDec{fields: decs, first: first, last: len(b.paths)}, nil
	case avsc.Array:
		return b.list(n, path)
	case avsc.Map:
		return b.mapOf(n, path)
	}
	return nil, nil, fmt.Errorf("pqgo: %s: %s is not in the experiment", path, n.Kind)
}

// decimal is FIXED_LEN_BYTE_ARRAY DECIMAL(p,s) of the minimal width for
// p, as pqarrow writes Decimal128.
func (b *builder) decimal(n *avsc.Node, path string) (parquet.Node, decoder, error) {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n.Precision)), nil)
	width := (limit.BitLen() + 1 + 7) / 8
	if n.Precision > 18 {
		return nil, nil, fmt.Errorf("pqgo: %s: decimal precision above 18 is not in the experiment", path)
	}
	node := parquet.Decimal(n.Scale, n.Precision, parquet.FixedLenByteArrayType(width))
	return b.leaf(path, node, true, generic(readDecimal(n, width, limit.Uint64())))
}

// list is arrow's (and Hive's) three-level LIST: group (LIST) { repeated
// group list { element } }.
func (b *builder) list(n *avsc.Node, path string) (parquet.Node, decoder, error) {
	first := len(b.paths)
	b.depth++
	defer func() { b.depth-- }()
	elem, dec, err := b.field(n.Items, path+".list.element")
	if err != nil {
		return nil, nil, err
	}
	return parquet.List(elem), &listDec{path: path, elem: dec, level: b.depth, first: first, last: len(b.paths)}, nil
}

// mapOf is MAP with UTF8 keys: group (MAP) { repeated group key_value
// { key, value } }.
func (b *builder) mapOf(n *avsc.Node, path string) (parquet.Node, decoder, error) {
	first := len(b.paths)
	b.depth++
	defer func() { b.depth-- }()
	key, kd, err := b.leaf(path+".key_value.key", parquet.String(), true, asBytes)
	if err != nil {
		return nil, nil, err
	}
	val, vd, err := b.field(n.Values, path+".key_value.value")
	if err != nil {
		return nil, nil, err
	}
	return parquet.Map(key, val), &mapDec{path: path, key: kd.(*bytesLeaf), value: vd, level: b.depth, first: first, last: len(b.paths)}, nil
}
