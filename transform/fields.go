package transform

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/format/jsonstr"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

var errSchemaless = errors.New("a schemaless value is not supported by this transform in hdfs-sink: it needs a value with a schema")

// insertField is InsertField: Kafka metadata and a static value appended
// as fields. A name ending in "!" is required, "?" (or nothing) optional.
type insertField struct {
	topic, partition, offset, timestamp, static insertSpec
	staticValue                                 string
	// hasStaticValue: static.value is set (Connect's default is null: the
	// schemaless branch then inserts no static field); staticText is it
	// as a JSON string.
	hasStaticValue bool
	staticText     []byte
}

type insertSpec struct {
	name     string // "": not inserted
	optional bool
	key      []byte // name as a JSON string, for schemaless values
}

func parseInsertSpec(v string) insertSpec {
	var sp insertSpec
	switch {
	case v == "":
		return insertSpec{}
	case strings.HasSuffix(v, "!"):
		sp = insertSpec{name: strings.TrimSuffix(v, "!")}
	case strings.HasSuffix(v, "?"):
		sp = insertSpec{name: strings.TrimSuffix(v, "?"), optional: true}
	default:
		sp = insertSpec{name: v, optional: true}
	}
	sp.key = jsonstr.Append(nil, sp.name)
	return sp
}

func newInsertField(key bool, p props) (transformer, error) {
	t := &insertField{
		topic: parseInsertSpec(p.get("topic.field")), partition: parseInsertSpec(p.get("partition.field")),
		offset: parseInsertSpec(p.get("offset.field")), timestamp: parseInsertSpec(p.get("timestamp.field")),
		static: parseInsertSpec(p.get("static.field")), staticValue: p.get("static.value"),
	}
	_, t.hasStaticValue = p.m["static.value"]
	t.staticText = jsonstr.Append(nil, t.staticValue)
	return newValueRewriter(key, t.compile).withJSON(t), p.err()
}

// compile appends the fields in Connect's order: topic, partition, offset,
// timestamp, static (InsertField.makeUpdatedSchema).
func (t *insertField) compile(s *schema.Schema) (*rewrite, error) {
	rj, err := readRecordJSON(s)
	if err != nil {
		return nil, err
	}
	w := &rewrite{}
	for i := range rj.fields {
		w.ops = append(w.ops, fieldOp{from: i})
	}
	add := func(sp insertSpec, avroType any, enc func(dst []byte, r *Record) ([]byte, bool)) {
		if sp.name == "" {
			return
		}
		rj.fields = append(rj.fields, optionalField(sp.name, avroType, sp.optional))
		w.ops = append(w.ops, fieldOp{from: -1, conv: func(dst, _ []byte, r *Record) ([]byte, error) {
			return appendOptional(dst, sp, r, enc)
		}})
	}
	add(t.topic, "string", func(d []byte, r *Record) ([]byte, bool) { return appendString(d, r.Topic), true })
	add(t.partition, "int", func(d []byte, r *Record) ([]byte, bool) { return binary.AppendVarint(d, int64(r.Partition)), true })
	add(t.offset, "long", func(d []byte, r *Record) ([]byte, bool) { return binary.AppendVarint(d, r.Offset), true })
	add(t.timestamp, map[string]any{"type": "long", "logicalType": "timestamp-millis"}, func(d []byte, r *Record) ([]byte, bool) {
		if r.Timestamp.IsZero() {
			return d, false
		}
		return binary.AppendVarint(d, r.Timestamp.UnixMilli()), true
	})
	add(t.static, "string", func(d []byte, _ *Record) ([]byte, bool) { return appendString(d, t.staticValue), true })
	if w.out, err = rj.build(s.ID); err != nil {
		return nil, err
	}
	return w, nil
}

// appendOptional encodes one inserted field: optional fields are unions
// with null first (branch 0 null, 1 the value).
func appendOptional(dst []byte, sp insertSpec, r *Record, enc func([]byte, *Record) ([]byte, bool)) ([]byte, error) {
	if !sp.optional {
		out, ok := enc(dst, r)
		if !ok {
			return nil, fmt.Errorf("field %q is required but the record has no value for it", sp.name)
		}
		return out, nil
	}
	mark := len(dst)
	out, ok := enc(append(dst, 2), r) // zigzag varint 1: branch 1
	if !ok {
		return append(out[:mark], 0), nil
	}
	return out, nil
}

func appendString(dst []byte, s string) []byte {
	return append(binary.AppendVarint(dst, int64(len(s))), s...)
}

// replaceField is ReplaceField: exclude (blacklist), include (whitelist)
// and renames, in the input's field order.
type replaceField struct {
	exclude, include []string
	renames          map[string]string
	// The same for schemaless values: sets, and each new name as a JSON
	// string.
	excludeSet, includeSet map[string]bool
	renameKeys             map[string][]byte
}

func newReplaceField(key bool, p props) (transformer, error) {
	t := &replaceField{
		exclude: p.list("exclude", "blacklist"), include: p.list("include", "whitelist"), renames: map[string]string{},
	}
	for _, pair := range p.list("renames") {
		from, to, ok := strings.Cut(pair, ":")
		if !ok || from == "" || to == "" {
			p.fail("renames", "must be a list of old:new pairs, got "+pair)
			continue
		}
		t.renames[from] = to
	}
	t.excludeSet, t.includeSet, t.renameKeys = setOf(t.exclude), setOf(t.include), map[string][]byte{}
	for from, to := range t.renames {
		t.renameKeys[from] = jsonstr.Append(nil, to)
	}
	return newValueRewriter(key, t.compile).withJSON(t), p.err()
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func (t *replaceField) keeps(name string) bool {
	return !slices.Contains(t.exclude, name) && (len(t.include) == 0 || slices.Contains(t.include, name))
}

func (t *replaceField) compile(s *schema.Schema) (*rewrite, error) {
	rj, err := readRecordJSON(s)
	if err != nil {
		return nil, err
	}
	w := &rewrite{}
	var kept []map[string]any
	for i, f := range rj.fields {
		name, _ := f["name"].(string)
		if !t.keeps(name) {
			continue
		}
		if to, ok := t.renames[name]; ok {
			f["name"] = to
			delete(f, "aliases")
		}
		kept = append(kept, f)
		w.ops = append(w.ops, fieldOp{from: i})
	}
	rj.fields = kept
	if w.out, err = rj.build(s.ID); err != nil {
		return nil, err
	}
	return w, nil
}

// fieldIndex finds a top-level field by name.
func fieldIndex(s *schema.Schema, name string) (int, fieldType, error) {
	tree, err := s.Tree()
	if err != nil {
		return 0, fieldType{}, err
	}
	for i, f := range tree.Fields {
		if f.Name == name {
			ft, ok := fieldTypeOf(f.Type)
			if !ok {
				return i, ft, fmt.Errorf("field %q of schema %d is a union other than [null, T]", name, s.ID)
			}
			return i, ft, nil
		}
	}
	return 0, fieldType{}, fmt.Errorf("schema %d has no field %q", s.ID, name)
}
