package transform

import (
	"encoding/json"
	"fmt"

	"github.com/hdfs-sink/hdfs-sink/format/jsonstr"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// extractField is ExtractField: the value becomes one of its fields (with
// field.syntax.version=V2, a field of nested records). The field's
// encoding is the new datum, so nothing is re-encoded.
type extractField struct {
	field string   // as configured, for errors
	path  []string // its steps (one under V1)
}

func newExtractField(key bool, p props) (transformer, error) {
	t := &extractField{field: p.get("field")}
	if t.field == "" {
		p.fail("field", "is required")
	}
	path, err := fieldPath(t.field, fieldSyntaxV2(p))
	if err != nil {
		p.fail("field", err.Error())
	}
	t.path = path
	if len(t.path) == 0 {
		t.path = []string{""}
	}
	return newValueRewriter(key, t.compile).withJSON(t), p.err()
}

func (t *extractField) compile(s *schema.Schema) (*rewrite, error) {
	if len(t.path) > 1 {
		return t.compileNested(s)
	}
	rj, err := readRecordJSON(s)
	if err != nil {
		return nil, err
	}
	i, _, err := fieldIndex(s, t.path[0])
	if err != nil {
		return nil, err
	}
	out, err := t.outSchema(s, rj.fields[i]["type"])
	if err != nil {
		return nil, err
	}
	return &rewrite{out: out, ops: []fieldOp{{from: i}}, whole: true}, nil
}

// outSchema is the extracted field's type as a schema of its own.
func (t *extractField) outSchema(s *schema.Schema, typ any) (*schema.Schema, error) {
	text, err := jsonText(typ)
	if err != nil {
		return nil, err
	}
	out, err := schema.New(s.ID, text)
	if err != nil {
		return nil, fmt.Errorf("field %q of schema %d is not a schema of its own (a named type defined elsewhere?): %w", t.field, s.ID, err)
	}
	return out, nil
}

// hoistField is HoistField: the value becomes the one field of a new
// record. A record of one field encodes as that field: the datum stays.
type hoistField struct {
	field string
	key   []byte // field as a JSON string, for schemaless values
}

func newHoistField(key bool, p props) (transformer, error) {
	t := &hoistField{field: p.get("field")}
	if t.field == "" {
		p.fail("field", "is required")
	}
	t.key = jsonstr.Append(nil, t.field)
	return newValueRewriter(key, t.compile).withJSON(t), p.err()
}

func (t *hoistField) compile(s *schema.Schema) (*rewrite, error) {
	inner, err := decodeJSON(s.Text)
	if err != nil {
		return nil, err
	}
	// Connect's struct has no name; AvroData calls it ConnectDefault.
	text, err := jsonText(map[string]any{
		"type": "record", "name": "ConnectDefault", "namespace": "io.confluent.connect.avro",
		"fields": []any{map[string]any{"name": t.field, "type": inner}},
	})
	if err != nil {
		return nil, err
	}
	out, err := schema.New(s.ID, text)
	if err != nil {
		return nil, err
	}
	return &rewrite{out: out, identity: true}, nil
}

// setSchemaMetadata is SetSchemaMetadata: the record's name (and Connect's
// version attribute) change, the datum stays.
type setSchemaMetadata struct {
	name    string
	version json.Number
}

func newSetSchemaMetadata(key bool, p props) (transformer, error) {
	t := &setSchemaMetadata{name: p.get("schema.name"), version: json.Number(p.get("schema.version"))}
	if t.name == "" && t.version == "" {
		p.fail("schema.name", "schema.name or schema.version is required")
	}
	return newValueRewriter(key, t.compile), p.err()
}

func (t *setSchemaMetadata) compile(s *schema.Schema) (*rewrite, error) {
	rj, err := readRecordJSON(s)
	if err != nil {
		return nil, err
	}
	if t.name != "" {
		rj.top["name"] = t.name
		delete(rj.top, "namespace") // a full name given replaces both
	}
	if t.version != "" {
		rj.top["connect.version"] = t.version
	}
	out, err := rj.build(s.ID)
	if err != nil {
		return nil, err
	}
	w := &rewrite{out: out, identity: true}
	for i := range rj.fields {
		w.ops = append(w.ops, fieldOp{from: i}) // the same fields: a fused chain maps them through
	}
	return w, nil
}

// flatten is Flatten: nested records' fields become top-level fields named
// parent<delimiter>child. Avro writes a nested record as its fields'
// encodings, so the flat record's datum is the same bytes. A nullable
// nested record (a union) would need its nulls spread over the fields: it
// is refused, as are named types the flat schema could not define.
type flatten struct{ delim string }

func newFlatten(key bool, p props) (transformer, error) {
	t := &flatten{delim: p.getDefault("delimiter", ".")}
	return newValueRewriter(key, t.compile).withJSON(t), p.err()
}

func (t *flatten) compile(s *schema.Schema) (*rewrite, error) {
	rj, err := readRecordJSON(s)
	if err != nil {
		return nil, err
	}
	tree, err := s.Tree()
	if err != nil {
		return nil, err
	}
	var flat []map[string]any
	if err := t.flattenInto(&flat, "", tree, rj.fields); err != nil {
		return nil, fmt.Errorf("schema %d: %w", s.ID, err)
	}
	rj.fields = flat
	out, err := rj.build(s.ID)
	if err != nil {
		return nil, fmt.Errorf("flattened schema %d (delimiter %q; Avro names allow only letters, digits and _): %w", s.ID, t.delim, err)
	}
	return &rewrite{out: out, identity: true}, nil
}

func (t *flatten) flattenInto(out *[]map[string]any, prefix string, n *avsc.Node, fields []map[string]any) error {
	for i, f := range n.Fields {
		name := prefix + f.Name
		if f.Type.Kind == avsc.Union {
			for _, b := range f.Type.Branches {
				if b.Kind == avsc.Record {
					return fmt.Errorf("field %q is a nullable record, which hdfs-sink cannot flatten", name)
				}
			}
		}
		if f.Type.Kind != avsc.Record {
			c := map[string]any{}
			for k, v := range fields[i] {
				c[k] = v
			}
			c["name"] = name
			*out = append(*out, c)
			continue
		}
		typ, ok := fields[i]["type"].(map[string]any)
		if !ok {
			return fmt.Errorf("field %q refers to record %s defined elsewhere, which hdfs-sink cannot flatten", name, f.Type.Name)
		}
		var sub []map[string]any
		raw, _ := typ["fields"].([]any)
		for _, r := range raw {
			m, _ := r.(map[string]any)
			sub = append(sub, m)
		}
		if err := t.flattenInto(out, name+t.delim, f.Type, sub); err != nil {
			return err
		}
	}
	return nil
}

// valueToKey is ValueToKey: the key becomes a record of the named value
// fields, copied from the value's encodings.
type valueToKey struct {
	fields []string
	keys   [][]byte // fields as JSON strings, for schemaless values
	plans  planCache[*rewrite]
}

func newValueToKey(_ bool, p props) (transformer, error) {
	t := &valueToKey{fields: p.required("fields")}
	for _, f := range t.fields {
		t.keys = append(t.keys, jsonstr.Append(nil, f))
	}
	t.plans.compile = t.compile
	return t, p.err()
}

func (t *valueToKey) compile(s *schema.Schema) (*rewrite, error) {
	rj, err := readRecordJSON(s)
	if err != nil {
		return nil, err
	}
	key := &recordJSON{top: map[string]any{"type": "record", "name": "ConnectDefault", "namespace": "io.confluent.connect.avro"}}
	w := &rewrite{}
	for _, name := range t.fields {
		i, _, err := fieldIndex(s, name)
		if err != nil {
			return nil, err
		}
		key.fields = append(key.fields, rj.fields[i])
		w.ops = append(w.ops, fieldOp{from: i})
	}
	if w.out, err = key.build(s.ID); err != nil {
		return nil, err
	}
	return w, nil
}

func (t *valueToKey) apply(r *Record) (bool, error) {
	if r.Value.IsNull() {
		return true, nil
	}
	if r.Value.Schema == nil {
		if err := t.applyJSON(r); err != nil {
			return false, err
		}
		return true, nil
	}
	w, err := t.plans.get(r.Value.Schema)
	if err != nil {
		return false, err
	}
	k, err := w.apply(r.Value, r)
	if err != nil {
		return false, err
	}
	r.Key = k
	return true, nil
}
