package convert

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// JSONSchemaClass is Confluent's JSON Schema converter.
const JSONSchemaClass = "io.confluent.connect.json.JsonSchemaConverter"

// JSONSchema is Confluent's JsonSchemaConverter: the wire format (magic
// byte, 4-byte registry id, then the JSON text), the registry schema of
// type JSON mapped to a Connect schema as JsonSchemaData does
// (jsonschema_map.go) and from there to Avro as AvroData does (connect.go),
// the JSON encoded as that Avro's datum (encode.go). A schema is fetched
// and compiled once per registry id; the Avro schema keeps the registry
// id, so ids order a topic's schemas and a schema change (a new id) goes
// through schema.compatibility as an Avro one does, and the WAL's id finds
// its schema again after a restart (SchemaByID).
//
// Concurrent first records of one id share one fetch; schemas.cache.size
// bounds the ids kept compiled (byID, as the Protobuf converter and the
// registry client cache).
//
// JSON Schema's other keywords (pattern, minimum, enum values, ...) are not
// checked (json.fail.invalid.schema=true is refused by configs); a value
// whose JSON types do not fit its schema is a bad record.
type JSONSchema struct {
	reg   RawSchemas
	opts  JSONSchemaOptions
	cache *byID[*compiled]
}

// RawSchemas is what the JSON Schema converter asks the registry: a
// schema of any type by id (schema/registry.Client has it; JSON schemas
// with references are refused, so no subject versions are read).
type RawSchemas interface {
	RawByID(ctx context.Context, id int32) (schema.Raw, error)
}

// JSONSchemaOptions are JsonSchemaConverter's settings hdfs-sink honours.
type JSONSchemaOptions struct {
	// OptionalForNonRequired is use.optional.for.nonrequired.properties
	// (default false): a property its object does not list in "required"
	// is optional.
	OptionalForNonRequired bool
	// LookupWait bounds a schema lookup that goes to the registry (<= 0:
	// DefaultLookupWait), as Avro's does.
	LookupWait time.Duration
	// Key says the converter reads keys (key.converter): errors name the
	// key's fields (key.id), not the value's (value.id).
	Key bool
	// CacheSize is schemas.cache.size: how many registry ids stay
	// compiled, the oldest compiled dropped first (<= 0:
	// DefaultSchemasCacheSize).
	CacheSize int
}

// NewJSONSchema reads values through reg.
func NewJSONSchema(reg RawSchemas, opts JSONSchemaOptions) *JSONSchema {
	if opts.LookupWait <= 0 {
		opts.LookupWait = DefaultLookupWait
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultSchemasCacheSize
	}
	j := &JSONSchema{reg: reg, opts: opts}
	j.cache = newByID(opts.CacheSize, opts.LookupWait, j.fetch)
	return j
}

// Convert splits the framing, finds the compiled schema and encodes the
// JSON as its Avro datum. A JSON null is the null value when the schema
// is optional (or has a default).
func (j *JSONSchema) Convert(ctx context.Context, _ string, data []byte) (Value, error) {
	id, text, err := schema.ParseWire(data)
	if err != nil {
		return Value{}, err
	}
	c, err := j.compiled(ctx, id)
	if err != nil {
		return Value{}, err
	}
	payload, err := decodeJSON(text)
	if err != nil {
		return Value{}, jsonSchemaError(fmt.Sprintf("schema %d: not JSON", id), err)
	}
	if payload == nil && c.root.def == nil && c.root.optional {
		return Value{}, nil
	}
	datum, err := encode(nil, c.root, payload, j.root())
	if err != nil {
		return Value{}, jsonSchemaError(fmt.Sprintf("the JSON does not fit schema %d", id), err)
	}
	return Value{Schema: c.schema, Datum: datum}, nil
}

// SchemaByID is the Avro schema the JSON Schema with registry id id maps
// to.
func (j *JSONSchema) SchemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	c, err := j.compiled(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.schema, nil
}

// compiled finds id's compiled schema, fetching and compiling it the first
// time. A schema that cannot be used is kept too, so its records fail
// without a registry request each; an id the registry does not know is
// not (a registry lookup per such record, as AvroConverter makes).
func (j *JSONSchema) compiled(ctx context.Context, id int32) (*compiled, error) {
	c, err := j.cache.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}

func (j *JSONSchema) fetch(ctx context.Context, id int32) (*compiled, error) {
	t, err := j.reg.RawByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return compileJSONSchema(id, t, j.opts.OptionalForNonRequired, j.root()), nil
}

// root names the record's side in errors' field paths.
func (j *JSONSchema) root() string {
	if j.opts.Key {
		return "key"
	}
	return "value"
}

// compileJSONSchema maps a registry schema to its Avro form; what cannot be
// mapped is an unsupported schema (the records' fault: errors.tolerance).
func compileJSONSchema(id int32, t schema.Raw, optionalNonRequired bool, root string) *compiled {
	unsupported := func(reason string, err error) *compiled {
		return &compiled{err: &schema.SchemaError{ID: id, Reason: "JsonSchemaConverter: " + reason, Err: err}}
	}
	if !strings.EqualFold(t.Type, "JSON") {
		return unsupported(fmt.Sprintf("schema type %s is not JSON", t.Type), nil)
	}
	if len(t.References) > 0 {
		return unsupported(fmt.Sprintf("schema references are not supported (%d references, first %q)", len(t.References), t.References[0].Name), nil)
	}
	cs, err := connectFromJSONSchema(t.Text, optionalNonRequired)
	if err != nil {
		return unsupported("no Connect form", err)
	}
	node, err := compile(cs, root)
	if err != nil {
		return unsupported("no Connect form", err)
	}
	text, err := avroSchema(cs, node)
	if err != nil {
		return unsupported("no Avro form", err)
	}
	s, err := schema.New(id, text)
	if err != nil {
		return unsupported("no Avro form: "+text, err)
	}
	return &compiled{schema: s, root: node}
}

func jsonSchemaError(reason string, err error) error {
	return &Error{Converter: "JsonSchemaConverter", Reason: reason, Err: err}
}
