package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// JSONClass is Kafka's JSON converter.
const JSONClass = "org.apache.kafka.connect.json.JsonConverter"

// DefaultSchemasCacheSize is JsonConverter's schemas.cache.size default.
const DefaultSchemasCacheSize = 1000

// JSONOptions are JsonConverter's settings (JsonConverterConfig).
type JSONOptions struct {
	// SchemasEnable is schemas.enable (Connect's default: true): each
	// value is an envelope {"schema": …, "payload": …}.
	SchemasEnable bool
	// CacheSize is schemas.cache.size: how many distinct schemas stay
	// compiled (<= 0: DefaultSchemasCacheSize).
	CacheSize int
}

// JSON is Kafka's JsonConverter. With schemas.enable=true the embedded
// Connect schema becomes an Avro writer schema (AvroData's mapping,
// connect.go) and the payload its binary datum; schemas are compiled once
// and found again by their bytes, so a record costs no schema parse. With
// schemas.enable=false a value is its JSON text, checked, written as it is.
//
// Its schema ids are its own: consecutive from a random start, so they
// order a topic's schemas for the Hive table (the newest is the highest,
// as with a registry) and an id one process wrote in the WAL is, but for
// a one-in-a-billion chance, no id another process hands out. SchemaByID
// finds a schema this process has seen (a rebalance within the process
// restores the committed files' schema, D23); after a restart an id of
// the previous process is unknown, which the partition handles as a
// schema the registry no longer has: loudly, the next record's schema
// becoming current.
type JSON struct {
	opts JSONOptions

	mu     sync.RWMutex
	byText map[string]*compiled // by the schema's JSON bytes as embedded
	byID   map[int32]*compiled
	nextID int32
}

type compiled struct {
	schema *schema.Schema
	root   *node
	err    error // the schema cannot be used: every record with it is bad
}

// NewJSON is a JsonConverter with opts.
func NewJSON(opts JSONOptions) *JSON {
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultSchemasCacheSize
	}
	// Below 2^30: a billion schemas before the ids would wrap.
	return &JSON{opts: opts, byText: map[string]*compiled{}, byID: map[int32]*compiled{}, nextID: rand.Int32N(1 << 30)}
}

// SchemaByID is a schema this converter compiled and still holds.
func (j *JSON) SchemaByID(_ context.Context, id int32) (*schema.Schema, error) {
	j.mu.RLock()
	c := j.byID[id]
	j.mu.RUnlock()
	if c == nil || c.schema == nil {
		return nil, fmt.Errorf("schema %d: %w: JsonConverter knows only the schemas this process has seen", id, schema.ErrUnknownSchema)
	}
	return c.schema, nil
}

// Convert reads one value as JsonConverter.toConnectData does.
func (j *JSON) Convert(_ context.Context, _ string, data []byte) (Value, error) {
	if !j.opts.SchemasEnable {
		return schemaless(data)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil {
		return Value{}, jsonError("not a JSON object (schemas.enable=true needs a {\"schema\", \"payload\"} envelope)", err)
	}
	rawSchema, hasSchema := env["schema"]
	rawPayload, hasPayload := env["payload"]
	if len(env) != 2 || !hasSchema || !hasPayload {
		return Value{}, jsonError(`with schemas.enable=true a value must have exactly the fields "schema" and "payload"`, nil)
	}
	if isNull(rawSchema) {
		return Value{}, jsonError(`the envelope's schema is null: a schemaless value cannot be written as Avro; set value.converter.schemas.enable=false for schemaless JSON`, nil)
	}
	if isNull(rawPayload) {
		return Value{}, nil
	}
	c := j.compiled(rawSchema)
	if c.err != nil {
		return Value{}, c.err
	}
	payload, err := decodeJSON(rawPayload)
	if err != nil {
		return Value{}, jsonError("payload is not JSON", err)
	}
	datum, err := encode(nil, c.root, payload, "payload")
	if err != nil {
		return Value{}, jsonError("payload does not fit its schema", err)
	}
	return Value{Schema: c.schema, Datum: datum}, nil
}

// schemaless checks a value is JSON and keeps its bytes; JSON null is null.
func schemaless(data []byte) (Value, error) {
	if !json.Valid(data) {
		return Value{}, jsonError("not JSON", nil)
	}
	if isNull(data) {
		return Value{}, nil
	}
	return Value{Datum: data}, nil
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

func jsonError(reason string, err error) error {
	return &Error{Converter: "JsonConverter", Reason: reason, Err: err}
}

// compiled finds a schema by its bytes, compiling it the first time. A
// full cache drops one schema: it gets a new id if it comes back, which
// only rotates files as any schema change does.
func (j *JSON) compiled(raw []byte) *compiled {
	j.mu.RLock()
	c := j.byText[string(raw)] // no allocation: the compiler sees the conversion is only a key
	j.mu.RUnlock()
	if c != nil {
		return c
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if c := j.byText[string(raw)]; c != nil {
		return c
	}
	if len(j.byText) >= j.opts.CacheSize {
		for k, old := range j.byText {
			delete(j.byText, k)
			if old.schema != nil {
				delete(j.byID, old.schema.ID)
			}
			break
		}
	}
	j.nextID++
	c = compileSchema(j.nextID, raw)
	j.byText[string(raw)] = c
	if c.schema != nil {
		j.byID[c.schema.ID] = c
	}
	return c
}

func compileSchema(id int32, raw []byte) *compiled {
	var cs connectSchema
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&cs); err != nil {
		return &compiled{err: jsonError("the envelope's schema is not a Connect schema", err)}
	}
	root, err := compile(&cs, "schema")
	if err != nil {
		return &compiled{err: jsonError("the envelope's schema is not a Connect schema", err)}
	}
	text, err := avroSchema(&cs, root)
	if err != nil {
		return &compiled{err: jsonError("the envelope's schema has no Avro form", err)}
	}
	s, err := schema.New(id, text)
	if err != nil {
		return &compiled{err: jsonError("the envelope's schema has no Avro form: "+strings.TrimSpace(text), err)}
	}
	return &compiled{schema: s, root: root}
}
