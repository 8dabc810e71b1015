// Package extras appends the Kafka metadata columns of
// hdfs.sink.extra.columns (topic, partition, offset, timestamp, key,
// headers) to a record's Avro schema and datum. Avro encodes a record as
// its fields' encodings in order, so appending fields to the schema means
// appending their encodings to the datum: no decode, no re-encode.
package extras

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// extraField is one Kafka metadata column of hdfs.sink.extra.columns.
type extraField struct {
	name   string
	avro   any
	encode func(dst []byte, kr *kgo.Record) []byte
}

var extraFields = map[string]extraField{
	"topic":     {"kafka_topic", "string", func(d []byte, r *kgo.Record) []byte { return appendBytes(d, []byte(r.Topic)) }},
	"partition": {"kafka_partition", "int", func(d []byte, r *kgo.Record) []byte { return binary.AppendVarint(d, int64(r.Partition)) }},
	"offset":    {"kafka_offset", "long", func(d []byte, r *kgo.Record) []byte { return binary.AppendVarint(d, r.Offset) }},
	"timestamp": {"kafka_timestamp", map[string]any{"type": "long", "logicalType": "timestamp-millis"},
		func(d []byte, r *kgo.Record) []byte { return binary.AppendVarint(d, r.Timestamp.UnixMilli()) }},
	"key": {"kafka_key", []any{"null", "bytes"}, func(d []byte, r *kgo.Record) []byte { return appendNullable(d, r.Key) }},
	"headers": {"kafka_headers", map[string]any{"type": "array", "items": map[string]any{
		"type": "record", "name": "KafkaHeader", "namespace": "hdfs_sink",
		"fields": []any{map[string]any{"name": "key", "type": "string"}, map[string]any{"name": "value", "type": []any{"null", "bytes"}}},
	}}, appendHeaders},
}

// Columns are the extra columns one connector appends to its records,
// and the extended schemas already made.
type Columns struct {
	fields []extraField
	mu     sync.Mutex
	cache  map[int32]*schema.Schema // writer schema id → extended schema
}

// New is the columns names asks for, in that order; nil when there are
// none. An unknown name is an error.
func New(names []string) (*Columns, error) {
	if len(names) == 0 {
		return nil, nil
	}
	e := &Columns{cache: map[int32]*schema.Schema{}}
	for _, n := range names {
		f, ok := extraFields[n]
		if !ok {
			// configs refuses such names first; a wiring that did not would
			// otherwise fail every record as a bad one, with an unrelated reason.
			return nil, fmt.Errorf("hdfs.sink.extra.columns: unknown column %q", n)
		}
		e.fields = append(e.fields, f)
	}
	return e, nil
}

// Apply returns the extended schema and datum for one record.
func (e *Columns) Apply(s *schema.Schema, datum []byte, kr *kgo.Record) (*schema.Schema, []byte, error) {
	ext, err := e.Schema(s)
	if err != nil {
		return nil, nil, err
	}
	out := append(make([]byte, 0, len(datum)+64), datum...)
	for _, f := range e.fields {
		out = f.encode(out, kr)
	}
	return ext, out, nil
}

// Schema is s with the columns appended (cached by schema id).
func (e *Columns) Schema(s *schema.Schema) (*schema.Schema, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ext, ok := e.cache[s.ID]; ok {
		return ext, nil
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(s.Text), &rec); err != nil {
		return nil, err
	}
	fields, ok := rec["fields"].([]any)
	if !ok {
		return nil, fmt.Errorf("%w: hdfs.sink.extra.columns needs a record schema (schema %d)", schema.ErrUnsupportedSchema, s.ID)
	}
	for _, f := range e.fields {
		for _, have := range fields {
			if m, _ := have.(map[string]any); m["name"] == f.name {
				return nil, fmt.Errorf("%w: schema %d already has a field %q, which hdfs.sink.extra.columns adds", schema.ErrUnsupportedSchema, s.ID, f.name)
			}
		}
		fields = append(fields, map[string]any{"name": f.name, "type": f.avro})
	}
	rec["fields"] = fields
	text, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	ext, err := schema.New(s.ID, string(text))
	if err != nil {
		return nil, err
	}
	e.cache[s.ID] = ext
	return ext, nil
}

func appendBytes(d, b []byte) []byte {
	d = binary.AppendVarint(d, int64(len(b)))
	return append(d, b...)
}

func appendNullable(d, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(d, 0) // union branch 0: null
	}
	return appendBytes(binary.AppendVarint(d, 1), b)
}

func appendHeaders(d []byte, r *kgo.Record) []byte {
	if len(r.Headers) > 0 {
		d = binary.AppendVarint(d, int64(len(r.Headers)))
		for _, h := range r.Headers {
			d = appendNullable(appendBytes(d, []byte(h.Key)), h.Value)
		}
	}
	return binary.AppendVarint(d, 0) // end of array
}
