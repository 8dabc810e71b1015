package schema

import (
	"fmt"
	"sync"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// Projection implements Avro schema resolution (spec, "Schema Resolution"),
// which goavro lacks. It works on goavro native values: decode the datum
// with the writer's raw codec, rebuild the value in the reader's shape,
// encode with the reader's raw codec. "Raw" codecs are built from the
// schemas with logical types removed, so decimals stay bytes and dates and
// timestamps stay integers: values are carried over bit for bit and the
// reader's identical logical type applies to them again.
//
// Cost: one full decode into maps and slices plus one encode per record,
// about the price of decoding the record twice (see BenchmarkProject). The
// sink only pays it for records whose schema differs materially from the
// open file's; Decide answers Same for the rest.

// cacheLimit bounds each schema's projector cache; schemas are few in
// practice, and a full cache is simply emptied (entries are cheap to
// rebuild).
const cacheLimit = 4096

type projectorResult struct {
	p   *Projector
	err error
}

// Projector rewrites datums written with one schema into datums of
// another. It is immutable and safe for concurrent use.
type Projector struct {
	writer, reader *Schema
	wraw, rraw     *goavro.Codec
	conv           conv // nil: the native value needs no change
}

// NewProjector compiles the resolution of writer onto reader. It fails with
// *IncompatibleError when no datum of writer can be read as reader (a
// reader field without default missing from writer, a type or name change
// without promotion, a narrowed decimal, a fixed of another size), or with
// *SchemaError if a schema cannot be modelled. Some failures depend on the
// datum (an enum symbol or union branch the reader lacks); Project reports
// those per datum.
func NewProjector(writer, reader *Schema) (*Projector, error) {
	w, err := parse(writer)
	if err != nil {
		return nil, err
	}
	r, err := parse(reader)
	if err != nil {
		return nil, err
	}
	c := &compiler{memo: map[[2]*avsc.Node]*conv{}}
	fn, err := c.compile(w.tree, r.tree, rootPath(r.tree))
	if err != nil {
		return nil, withIDs(err, writer.ID, reader.ID)
	}
	return &Projector{writer: writer, reader: reader, wraw: w.raw, rraw: r.raw, conv: fn}, nil
}

// Project rewrites datum (binary Avro written with writer) into binary Avro
// for reader: reader fields missing from the writer get their defaults,
// writer fields the reader lacks are dropped, numbers are promoted
// (int→long→float→double), string and bytes convert, enum symbols and
// union branches are resolved by name, logical values are kept exactly.
// Errors: *DatumError if datum does not decode with writer,
// *IncompatibleError if it cannot be read as reader. Compiled projectors
// are cached per (writer, reader) pair.
func Project(writer, reader *Schema, datum []byte) ([]byte, error) {
	p, err := cachedProjector(writer, reader)
	if err != nil {
		return nil, err
	}
	return p.Project(datum)
}

// cachedProjector is NewProjector memoised per (writer, reader) pointer
// pair, failures included, so Decide and Project compile each pair once.
// The memo is the writer's: it lives as long as the schema does.
func cachedProjector(writer, reader *Schema) (*Projector, error) {
	w, _ := parse(writer)
	r := w.projectors.get(reader, func() projectorResult {
		p, err := NewProjector(writer, reader)
		return projectorResult{p, err}
	})
	return r.p, r.err
}

// Project rewrites one datum; see the package function Project.
func (p *Projector) Project(datum []byte) ([]byte, error) {
	v, err := p.decode(datum)
	if err != nil {
		return nil, err
	}
	if v, err = p.apply(v); err != nil {
		return nil, err
	}
	out, err := p.rraw.BinaryFromNative(nil, v)
	if err != nil {
		return nil, fmt.Errorf("schema: encode datum of schema %d projected onto schema %d: %w",
			p.writer.ID, p.reader.ID, err)
	}
	return out, nil
}

func (p *Projector) decode(datum []byte) (v any, err error) {
	// Same guard as Schema.Native: hostile input must not crash the sink.
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, &DatumError{SchemaID: p.writer.ID, Len: len(datum), Err: fmt.Errorf("decoder panic: %v", r)}
		}
	}()
	if err := precheck(p.writer, datum); err != nil {
		return nil, err
	}
	v, rest, err := p.wraw.NativeFromBinary(datum)
	if err != nil {
		return nil, &DatumError{SchemaID: p.writer.ID, Len: len(datum), Err: err}
	}
	if len(rest) != 0 {
		return nil, &DatumError{SchemaID: p.writer.ID, Len: len(datum), Trailing: len(rest)}
	}
	return v, nil
}

func (p *Projector) apply(v any) (out any, err error) {
	if p.conv == nil {
		return v, nil
	}
	// The converters assert goavro's native types; a mismatch would be a
	// bug here, and must surface as an error rather than a crash.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("schema: project schema %d onto schema %d: %v", p.writer.ID, p.reader.ID, r)
		}
	}()
	out, err = p.conv(v)
	return out, withIDs(err, p.writer.ID, p.reader.ID)
}

// withIDs fills in the schema ids of an *IncompatibleError. Converters
// share prebuilt errors, so the error is copied.
func withIDs(err error, writer, reader int32) error {
	ie, ok := err.(*IncompatibleError)
	if !ok {
		return err
	}
	cp := *ie
	cp.WriterID, cp.ReaderID = writer, reader
	return &cp
}

func rootPath(n *avsc.Node) string {
	switch n.Kind {
	case avsc.Record, avsc.Enum, avsc.Fixed:
		return short(n.Name)
	}
	return n.Kind.String()
}

// boundedCache is a mutex-guarded map emptied when it reaches cacheLimit;
// the zero value is empty and ready. Values are built outside the lock;
// two racing builds of one key are harmless because builds are pure.
type boundedCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func (c *boundedCache[K, V]) get(k K, build func() V) V {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = build()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= cacheLimit {
		clear(c.m)
	}
	if c.m == nil {
		c.m = map[K]V{}
	}
	c.m[k] = v
	return v
}
