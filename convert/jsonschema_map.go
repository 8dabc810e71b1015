package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// JSON Schema keywords of Confluent's JsonSchemaData (the annotations it
// writes when it derives a JSON Schema from a Connect schema, and reads
// back in toConnectSchema).
const (
	jsConnectType   = "connect.type"
	jsConnectIndex  = "connect.index"
	jsConnectParams = "connect.parameters"
	jsConnectVer    = "connect.version"
	// maxRefDepth bounds $ref chains: a schema that refers to itself
	// (a recursive type) has no Connect form.
	maxRefDepth = 32
)

// jsObject is one JSON Schema object, its keywords still raw.
type jsObject map[string]json.RawMessage

// jsMapper maps a JSON Schema document to the Connect schema Confluent's
// JsonSchemaData.toConnectSchema derives from it: object → struct (its
// properties in connect.index order, else as written), integer → int64,
// number → float64 (connect.type names int8/16/32, float32 or bytes), string
// (connect.type bytes → bytes), boolean, array → array (connect.type map:
// a map of key/value entries), object with connect.type map → a map with
// string keys, oneOf/anyOf of null and one type → that type optional,
// "title" → the Connect name (so the Avro record name, and the logical
// types org.apache.kafka.connect.data.Date, Time, Timestamp, Decimal),
// "description" → doc, "default", connect.parameters, local $refs.
type jsMapper struct {
	root json.RawMessage
	// optionalNonRequired is use.optional.for.nonrequired.properties: a
	// property not in its object's "required" is optional.
	optionalNonRequired bool
}

// connectFromJSONSchema is the Connect schema of the JSON Schema text.
func connectFromJSONSchema(text string, optionalNonRequired bool) (*connectSchema, error) {
	m := &jsMapper{root: json.RawMessage(text), optionalNonRequired: optionalNonRequired}
	return m.schema(m.root, "#", 0)
}

func (m *jsMapper) schema(raw json.RawMessage, at string, depth int) (*connectSchema, error) {
	var o jsObject
	if err := json.Unmarshal(raw, &o); err != nil || o == nil {
		return nil, fmt.Errorf("%s: a schema must be a JSON object (true, false and {} allow any value, which has no Connect type)", at)
	}
	if ref, ok := o.str("$ref"); ok {
		return m.ref(ref, at, depth)
	}
	if cs, ok, err := m.nullable(o, at, depth); ok || err != nil {
		return cs, err
	}
	if _, ok := o["allOf"]; ok {
		return nil, fmt.Errorf("%s: allOf is not supported", at)
	}
	typ, optional, err := o.typeName(at)
	if err != nil {
		return nil, err
	}
	cs, err := m.typed(o, typ, at, depth)
	if err != nil {
		return nil, err
	}
	cs.Optional = cs.Optional || optional
	return cs, o.annotate(cs, at)
}

// ref follows a $ref inside the document ("#", "#/definitions/x"); a
// reference to another registered schema is not supported.
func (m *jsMapper) ref(ref, at string, depth int) (*connectSchema, error) {
	if depth >= maxRefDepth {
		return nil, fmt.Errorf("%s: $ref %q: more than %d references deep (a recursive schema has no Connect form)", at, ref, maxRefDepth)
	}
	if ref != "#" && !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("%s: $ref %q: only references inside the schema (#/...) are supported, not other schemas", at, ref)
	}
	cur := m.root
	for _, tok := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(ref, "#"), "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		var o jsObject
		if json.Unmarshal(cur, &o) != nil || o[tok] == nil {
			return nil, fmt.Errorf("%s: $ref %q: no %q in the schema", at, ref, tok)
		}
		cur = o[tok]
	}
	return m.schema(cur, ref, depth+1)
}

// nullable maps oneOf/anyOf of {"type":"null"} and one other schema to
// that schema, optional, as JsonSchemaData does; other unions (Connect's
// io.confluent.connect.json.OneOf structs) are refused.
func (m *jsMapper) nullable(o jsObject, at string, depth int) (*connectSchema, bool, error) {
	for _, kw := range []string{"oneOf", "anyOf"} {
		raw, ok := o[kw]
		if !ok {
			continue
		}
		var subs []json.RawMessage
		if err := json.Unmarshal(raw, &subs); err != nil {
			return nil, true, fmt.Errorf("%s: %s must be an array", at, kw)
		}
		var other []json.RawMessage
		for _, s := range subs {
			if !isNullSchema(s) {
				other = append(other, s)
			}
		}
		if len(subs) != 2 || len(other) != 1 {
			return nil, true, fmt.Errorf("%s: %s is supported only as a null and one other schema (an optional value), not as a union of %d schemas", at, kw, len(subs))
		}
		cs, err := m.schema(other[0], at, depth)
		if err != nil {
			return nil, true, err
		}
		cs.Optional = true
		return cs, true, nil
	}
	return nil, false, nil
}

func isNullSchema(raw json.RawMessage) bool {
	var o jsObject
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	t, _ := o.str("type")
	return t == "null"
}

// typeName is the schema's type: "type" as a string, or ["T", "null"]
// (an optional T); without "type", what its keywords imply.
func (o jsObject) typeName(at string) (typ string, optional bool, err error) {
	raw, ok := o["type"]
	switch {
	case !ok && (o["properties"] != nil || o["additionalProperties"] != nil):
		return "object", false, nil
	case !ok && o["items"] != nil:
		return "array", false, nil
	case !ok && o["enum"] != nil:
		return "string", false, nil
	case !ok:
		return "", false, fmt.Errorf("%s: no type (a schema that allows any value has no Connect type)", at)
	}
	if json.Unmarshal(raw, &typ) == nil {
		return typ, false, nil
	}
	var types []string
	if json.Unmarshal(raw, &types) == nil && len(types) == 2 && (types[0] == "null") != (types[1] == "null") {
		if types[0] == "null" {
			return types[1], true, nil
		}
		return types[0], true, nil
	}
	return "", false, fmt.Errorf("%s: type %s: only one type, or one type and \"null\", has a Connect form", at, raw)
}

func (m *jsMapper) typed(o jsObject, typ, at string, depth int) (*connectSchema, error) {
	ct, _ := o.str(jsConnectType)
	switch typ {
	case "boolean":
		return &connectSchema{Type: "boolean"}, nil
	case "integer", "number":
		return number(typ, ct, at)
	case "string":
		if _, isEnum := o["enum"]; ct == "bytes" && !isEnum {
			return &connectSchema{Type: "bytes"}, nil
		}
		return &connectSchema{Type: "string"}, nil
	case "array":
		return m.array(o, ct, at, depth)
	case "object":
		if ct == "map" {
			return m.stringMap(o, at, depth)
		}
		return m.object(o, at, depth)
	}
	return nil, fmt.Errorf("%s: type %q has no Connect form", at, typ)
}

// number: integer is int64 and number float64, unless connect.type says
// which Connect type it is (bytes: a Decimal).
func number(typ, ct, at string) (*connectSchema, error) {
	switch ct {
	case "":
		if typ == "integer" {
			return &connectSchema{Type: "int64"}, nil
		}
		return &connectSchema{Type: "float64"}, nil
	case "int8", "int16", "int32", "int64", "float32", "float64", "bytes":
		return &connectSchema{Type: ct}, nil
	}
	return nil, fmt.Errorf("%s: connect.type %q is not a Connect type of a JSON %s", at, ct, typ)
}

func (m *jsMapper) array(o jsObject, ct, at string, depth int) (*connectSchema, error) {
	items, ok := o["items"]
	if !ok || bytes.HasPrefix(bytes.TrimSpace(items), []byte("[")) {
		return nil, fmt.Errorf("%s: an array needs one items schema (Connect arrays hold one type)", at)
	}
	if ct == "map" {
		if entries, err := m.entries(items, at, depth); entries != nil || err != nil {
			return entries, err
		}
	}
	elem, err := m.schema(items, at+"/items", depth)
	if err != nil {
		return nil, err
	}
	return &connectSchema{Type: "array", Items: elem}, nil
}

// entries is a map whose keys are not plain strings, which JsonSchemaData
// writes as an array of {"key": …, "value": …} objects; nil when the items
// are not such an object.
func (m *jsMapper) entries(items json.RawMessage, at string, depth int) (*connectSchema, error) {
	var io jsObject
	if json.Unmarshal(items, &io) != nil {
		return nil, nil
	}
	var props jsObject
	if json.Unmarshal(io["properties"], &props) != nil || props["key"] == nil || props["value"] == nil {
		return nil, nil
	}
	k, err := m.schema(props["key"], at+"/items/properties/key", depth)
	if err != nil {
		return nil, err
	}
	v, err := m.schema(props["value"], at+"/items/properties/value", depth)
	if err != nil {
		return nil, err
	}
	return &connectSchema{Type: "map", Keys: k, Values: v, entryObjects: true}, nil
}

func (m *jsMapper) stringMap(o jsObject, at string, depth int) (*connectSchema, error) {
	vals, ok := o["additionalProperties"]
	if !ok || bytes.HasPrefix(bytes.TrimSpace(vals), []byte("t")) || bytes.HasPrefix(bytes.TrimSpace(vals), []byte("f")) {
		return nil, fmt.Errorf("%s: connect.type map needs an additionalProperties schema (the values' type)", at)
	}
	v, err := m.schema(vals, at+"/additionalProperties", depth)
	if err != nil {
		return nil, err
	}
	return &connectSchema{Type: "map", Keys: &connectSchema{Type: "string"}, Values: v}, nil
}

// object is a struct: its properties ordered by connect.index where they
// have one (JsonSchemaData keeps the Connect field order there), else in
// the order written.
func (m *jsMapper) object(o jsObject, at string, depth int) (*connectSchema, error) {
	names, err := propertyOrder(o["properties"])
	if err != nil {
		return nil, fmt.Errorf("%s: properties: %w", at, err)
	}
	var props jsObject
	if len(names) > 0 {
		_ = json.Unmarshal(o["properties"], &props) // propertyOrder read it
	}
	type indexed struct {
		index int
		name  string
	}
	order := make([]indexed, len(names))
	for i, name := range names {
		order[i] = indexed{index: i, name: name}
		var po jsObject
		if json.Unmarshal(props[name], &po) == nil {
			if raw, ok := po[jsConnectIndex]; ok {
				if order[i].index, err = strconv.Atoi(string(raw)); err != nil {
					return nil, fmt.Errorf("%s/properties/%s: connect.index %s is not an integer", at, name, raw)
				}
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].index < order[j].index })
	var required []string
	_ = json.Unmarshal(o["required"], &required) // not a list: nothing is required
	cs := &connectSchema{Type: "struct"}
	for _, p := range order {
		f, err := m.schema(props[p.name], at+"/properties/"+p.name, depth)
		if err != nil {
			return nil, err
		}
		f.Field = p.name
		if m.optionalNonRequired && !slices.Contains(required, p.name) {
			f.Optional = true
		}
		cs.Fields = append(cs.Fields, f)
	}
	return cs, nil
}

// propertyOrder is the names of a properties object in the order written.
func propertyOrder(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var names []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return nil, err
		}
		names = append(names, t.(string))
	}
	return names, nil
}

// annotate copies what applies to every type: title (the Connect name),
// description, connect.version, connect.parameters, default.
func (o jsObject) annotate(cs *connectSchema, at string) error {
	if t, ok := o.str("title"); ok {
		cs.Name = t
	}
	if d, ok := o.str("description"); ok {
		cs.Doc = d
	}
	if raw, ok := o[jsConnectVer]; ok {
		v, err := strconv.Atoi(string(raw))
		if err != nil {
			return fmt.Errorf("%s: connect.version %s is not an integer", at, raw)
		}
		cs.Version = &v
	}
	if raw, ok := o[jsConnectParams]; ok {
		if err := json.Unmarshal(raw, &cs.Parameters); err != nil {
			return fmt.Errorf("%s: connect.parameters must map names to strings: %w", at, err)
		}
	}
	cs.Default = o["default"]
	return nil
}

func (o jsObject) str(key string) (string, bool) {
	raw, ok := o[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
