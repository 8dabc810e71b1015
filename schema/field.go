package schema

import (
	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// FieldNative decodes only the value at path (field names through nested
// records) of datum, in the same native form as the corresponding part of
// Native's result. Partitioners that read one field (a record timestamp)
// need not decode the whole record: a full decode cost three times the
// CPU of the rest of the write path in the Hourly benchmark. ok is false
// when this shortcut cannot answer (a path through a union or array, a
// field missing, bytes that do not decode); the caller then decodes the
// whole datum, which also produces the proper error.
func (s *Schema) FieldNative(datum []byte, path []string) (v any, ok bool) {
	p, err := parse(s)
	if err != nil || len(path) == 0 {
		return nil, false
	}
	n, b := p.tree, datum
	for _, name := range path {
		if n.Kind != avsc.Record {
			return nil, false
		}
		if n, b, err = seekField(n, b, name); err != nil || n == nil {
			return nil, false
		}
	}
	codec, err := p.leafCodec(n)
	if err != nil {
		return nil, false
	}
	v, _, err = decodeSafely(codec, b)
	return v, err == nil
}

// seekField skips the fields of record n before name and returns name's
// type and bytes; a nil node means n has no such field.
func seekField(n *avsc.Node, b []byte, name string) (*avsc.Node, []byte, error) {
	for i := range n.Fields {
		f := &n.Fields[i]
		if f.Name == name {
			return f.Type, b, nil
		}
		var err error
		if b, err = scan(f.Type, b, 0); err != nil {
			return nil, nil, err
		}
	}
	return nil, b, nil
}

// leafCodec returns a codec for the subtree n of p, made once. Its form
// defines every named type it uses, so it stands alone.
func (p *parsed) leafCodec(n *avsc.Node) (*goavro.Codec, error) {
	if c, ok := p.leaves.Load(n); ok {
		return c.(*goavro.Codec), nil
	}
	c, err := goavro.NewCodec(n.CanonicalLogical())
	if err != nil {
		return nil, err
	}
	p.leaves.Store(n, c)
	return c, nil
}

// decodeSafely turns a goavro panic into an error, as Native does.
func decodeSafely(c *goavro.Codec, b []byte) (v any, rest []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, rest, err = nil, nil, errScanEnd
		}
	}()
	return c.NativeFromBinary(b)
}
